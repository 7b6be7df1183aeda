"""Wrong types and out-of-range values at `Memory`'s boundary become `InputError`.

Every public method checks what it is handed before touching the store: the
error names the argument and what is allowed, and nothing already stored is
lost. Timestamps whose UTC value falls outside years 1-9999 are refused on
the way in, and a store already holding one still opens and reads.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from labile import Memory
from labile._errors import InputError
from labile._model import Observation

NS = "n"
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def _obs(i: int, text: str = "I adopted a cat named Miso.", **kw: Any) -> Observation:
    return Observation(id=f"t{i}", text=text, timestamp=T0 + timedelta(minutes=i),
                       speaker="Ana", session="s1", **kw)


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Any:
    mem = Memory.open(preset="hybrid", path=tmp_path_factory.mktemp("store"))
    mem.add([_obs(0), _obs(1, "We moved to Porto last spring.")], namespace=NS)
    yield mem
    mem.close()


def _unchanged(memory: Memory) -> None:
    assert [o.id for o in memory.list(NS).items] == ["t0", "t1"]


@pytest.mark.parametrize(("k", "allowed"), [
    (1.5, "integer from 1"), ("5", "integer from 1"), (None, "integer from 1"),
    (2**63, "integer from 1"), (0, "integer from 1"), (True, "integer from 1"),
])
def test_search_k_must_be_an_integer_in_range(memory: Memory, k: Any, allowed: str) -> None:
    with pytest.raises(InputError, match=rf"^k must be an {allowed}"):
        memory.search("cat", namespace=NS, k=k)
    _unchanged(memory)


@pytest.mark.parametrize(("kwargs", "named"), [
    ({"query": None}, "query"), ({"query": "cat \ud800"}, "query"),
    ({"query": "cat", "namespace": 3}, "namespace"),
    ({"query": "cat", "namespace": "a\udcff"}, "namespace"),
    ({"query": "cat", "as_of": "2024-01-01"}, "as_of"),
    ({"query": "cat", "as_of": datetime(2024, 1, 1)}, "as_of"),
])
def test_search_names_the_bad_argument(memory: Memory, kwargs: dict[str, Any], named: str) -> None:
    args = {"namespace": NS, **kwargs}
    with pytest.raises(InputError, match=rf"^{named} "):
        memory.search(args.pop("query"), **args)


@pytest.mark.parametrize(("make", "named"), [
    (lambda: Observation(id="x", text=None, timestamp=T0), "text"),  # type: ignore[arg-type]
    (lambda: Observation(id="x", text="hi", timestamp="2024-01-01"), "timestamp"),  # type: ignore[arg-type]
    (lambda: Observation(id="x", text="hi \ud83d", timestamp=T0), "text"),
])
def test_observations_refuse_bad_fields_when_built(make: Any, named: str) -> None:
    with pytest.raises(InputError, match=rf"^{named} "):
        make()


@pytest.mark.parametrize(("metadata", "named"), [
    ({"caption": 5}, r"\.metadata\['caption'\]"),
    ({"caption": ["a photo"]}, r"\.metadata\['caption'\]"),
    ({"when": datetime(2024, 1, 1, tzinfo=UTC)}, r"\.metadata must hold only JSON"),
])
def test_add_refuses_bad_metadata_and_writes_nothing(
    memory: Memory, metadata: dict[str, Any], named: str
) -> None:
    batch = [_obs(5, "A fine day at the beach."), _obs(6, metadata=metadata)]
    with pytest.raises(InputError, match=rf"observations\[1\] \('t6'\){named}"):
        memory.add(batch, namespace=NS)
    _unchanged(memory)


def test_add_refuses_a_single_observation_not_in_a_list(memory: Memory) -> None:
    with pytest.raises(InputError, match="list of Observation"):
        memory.add(_obs(7), namespace=NS)  # type: ignore[arg-type]


@pytest.mark.parametrize(("call", "named"), [
    (lambda m: m.get(NS, "t0"), "ids"),
    (lambda m: m.get(NS, [None]), "ids"),
    (lambda m: m.get_nodes(NS, [3]), "ids"),
    (lambda m: m.get_nodes(NS, ["n\udfff"]), r"ids\[0\]"),
    (lambda m: m.list(NS, limit=1.5), "limit"),
    (lambda m: m.list(NS, offset=None), "offset"),
    (lambda m: m.forget(NS, ["t0"], erase="yes"), "erase"),
    (lambda m: m.forget(NS, "t0"), "observation_ids"),
    (lambda m: m.purge(NS, erase=1), "erase"),
    (lambda m: m.purge(None), "namespace"),
    (lambda m: m.consolidate(namespace=""), "namespace"),
    (lambda m: m.stats(5), "namespace"),
    (lambda m: m.answer(None, namespace=NS), "question"),
    (lambda m: m.answer("q", namespace=NS, budget_tokens="9"), "budget_tokens"),
    (lambda m: m.feedback("not a result"), "result"),
    (lambda m: m.feedback(m.search("cat", namespace=NS), cited="t0"), "cited"),
    (lambda m: m.feedback(m.search("cat", namespace=NS), useful="no"), "useful"),
    (lambda m: m.feedback(m.search("cat", namespace=NS), answer=7), "answer"),
])
def test_every_method_names_the_bad_argument(memory: Memory, call: Any, named: str) -> None:
    with pytest.raises(InputError, match=rf"^{named} "):
        call(memory)
    _unchanged(memory)
