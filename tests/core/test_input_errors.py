"""What an adopter gets wrong is an `InputError` naming it, never a raw Python error,
and nothing is written (issue #27 item 12, issue #31's Observation validation)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from core_helpers import OFFLINE

from labile import Memory, Observation
from labile._errors import InputError
from labile.plugin import NodeFilter

WHEN = datetime(2024, 3, 1, tzinfo=UTC)


def obs(i: str = "t1", **kw: Any) -> Observation:
    return Observation(**{"id": i, "text": "Ana plays the violin", "timestamp": WHEN, **kw})


@pytest.fixture(params=["memory", "lancedb"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Memory:
    store = {"type": "memory"} if request.param == "memory" else \
        {"type": "lancedb", "path": str(tmp_path / "m")}
    mem = Memory.open({**OFFLINE, "store": store})
    request.addfinalizer(mem.close)
    return mem


@pytest.mark.parametrize("kw, named", [
    ({"id": None}, "id must be a string"),
    ({"id": 7}, "id must be a string"),
    ({"id": "  "}, "id must be a non-empty string"),
    ({"id": "a\x1fb"}, "reserved"),
    ({"metadata": [1]}, "metadata must be a mapping"),
    ({"metadata": "caption"}, "metadata must be a mapping"),
    ({"text": None}, "text must be a string"),
    ({"timestamp": None}, "timestamp must be a timezone-aware datetime"),
])
def test_a_bad_observation_is_an_input_error(kw: dict[str, Any], named: str) -> None:
    with pytest.raises(InputError, match=named):
        obs(**kw)


def test_list_nodes_with_a_string_filter_is_an_input_error(memory: Memory) -> None:
    memory.add([obs()], namespace="u")
    with pytest.raises(InputError, match="where must be a NodeFilter"):
        memory.list_nodes("u", where="kind = 'turn'")  # type: ignore[arg-type]
    assert memory.list_nodes("u", where=NodeFilter(visible=True)).items


@pytest.mark.parametrize("namespace", ["a\x1fb", "ns\x1f"])
def test_the_key_separator_in_a_namespace_is_an_input_error(memory: Memory,
                                                           namespace: str) -> None:
    with pytest.raises(InputError, match="reserved"):
        memory.add([obs()], namespace=namespace)
    with pytest.raises(InputError, match="reserved"):
        memory.search("violin", namespace=namespace)
    assert memory.store.namespaces() == []


def test_an_observation_filed_under_another_namespace_is_refused(memory: Memory) -> None:
    with pytest.raises(InputError, match=r"namespace is 'a' but the batch is added to "
                                         r"namespace 'b'"):
        memory.add([obs("x1"), obs("x2", namespace="a")], namespace="b")
    assert memory.store.namespaces() == []
    memory.add([obs("x1", namespace="b")], namespace="b")  # the same namespace is fine
    stored = memory.get("b", ["x1"])[0]
    assert stored.namespace == "b"
    with pytest.raises(InputError):  # a record read back is not re-filed silently
        memory.add([stored], namespace="c")
    report = memory.add([attrs.evolve(stored, namespace="")], namespace="c")
    assert report.added == ["x1"] and memory.get("c", ["x1"])[0].namespace == "c"
