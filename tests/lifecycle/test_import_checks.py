"""`labile import` validates what the store promises before writing anything
(issue #27 item 8): sources and edge ends that exist, registered kinds and
predicates, finite non-zero vectors of the embedder's size, ordered times,
unique ids without the reserved separator; all problems in one error, by line."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lifecycle_helpers import chat

from labile import InputError, Memory
from labile_cli import main
from labile_io.import_checks import MAX_LISTED
from labile_io.transfer import export_records, import_records

Record = dict[str, Any]
CONFIG = {"embedder": {"type": "hashing"}}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> list[Record]:
    """A REALM export: observations, nodes with sources and vectors, edges."""
    with Memory.open(CONFIG, preset="realm", path=tmp_path_factory.mktemp("src")) as memory:
        memory.add(chat("t")[:8], namespace="u")
        return [json.loads(json.dumps(r)) for r in export_records(memory, "u")]


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Memory]:
    with Memory.open(CONFIG, preset="realm", path=tmp_path / "dst") as memory:
        yield memory


def _first(records: list[Record], kind: str, where: Callable[[Record], bool] = bool) -> Record:
    return next(r for r in records if r.get("type") == kind and where(r))


def _refused(memory: Memory, records: list[Record]) -> str:
    with pytest.raises(InputError) as info:
        import_records(memory, records, namespace="v")
    assert memory.store.namespaces() == [], "a refused import wrote something"
    return str(info.value)


def test_the_clean_export_imports(exported: list[Record], target: Memory) -> None:
    counts = import_records(target, copy.deepcopy(exported), namespace="v")
    assert counts["nodes"] and counts["edges"] and counts["observations"] == 8


# Each corruption: (what it does to a copy of the records, what the error says).
def _dangling_source(r: list[Record]) -> None:
    _first(r, "node", lambda n: bool(n["sources"]))["sources"].append("nobody")


def _separator_in_an_id(r: list[Record]) -> None:
    obs = _first(r, "observation")
    old = obs["id"]
    obs["id"] = old + "\x1fx"  # the nodes' sources now name no observation either
    for node in r:
        if node.get("type") == "node" and old in node["sources"]:
            node["sources"] = [old + "\x1fx" if s == old else s for s in node["sources"]]


def _infinite_vector(r: list[Record]) -> None:
    _first(r, "node", lambda n: n["embedding"] is not None)["embedding"][0] = float("inf")


def _huge_vector_value(r: list[Record]) -> None:
    _first(r, "node", lambda n: n["embedding"] is not None)["embedding"][0] = 1e300


def _zero_vector(r: list[Record]) -> None:
    node = _first(r, "node", lambda n: n["embedding"] is not None)
    node["embedding"] = [0.0] * len(node["embedding"])


def _short_vector(r: list[Record]) -> None:
    _first(r, "node", lambda n: n["embedding"] is not None)["embedding"].pop()


def _unknown_kind(r: list[Record]) -> None:
    _first(r, "node")["kind"] = "alien"


def _time_reversed(r: list[Record]) -> None:
    node = _first(r, "node", lambda n: n["time_start"] is not None)
    node["time_end"] = "1999-01-01T00:00:00+00:00"


def _dangling_edge(r: list[Record]) -> None:
    _first(r, "edge")["dst"] = "no-such-node"


def _unknown_predicate(r: list[Record]) -> None:
    _first(r, "edge")["predicate"] = "loves"


def _duplicate_node(r: list[Record]) -> None:
    r.append(copy.deepcopy(_first(r, "node")))


def _bad_time_text(r: list[Record]) -> None:
    _first(r, "observation")["timestamp"] = "yesterday"


CORRUPTIONS: dict[str, tuple[Callable[[list[Record]], None], str]] = {
    "dangling source": (_dangling_source, "'nobody' names no observation of the import"),
    "separator in an id": (_separator_in_an_id, "reserved"),
    "inf in a vector": (_infinite_vector, "not a finite float32"),
    "1e300 in a vector": (_huge_vector_value, "not a finite float32"),
    "zero vector": (_zero_vector, "is all zeros"),
    "short vector": (_short_vector, "embedder makes vectors of 256"),
    "unknown kind": (_unknown_kind, "'alien' is not a registered node kind"),
    "time_end before time_start": (_time_reversed, "time_end: 1999-01-01T00:00:00+00:00 is "
                                                   "before time_start"),
    "dangling edge": (_dangling_edge, "dst: 'no-such-node' names no node of the import"),
    "unknown predicate": (_unknown_predicate, "'loves' is not a registered predicate"),
    "duplicate node id": (_duplicate_node, "the id is already used on line"),
    "time not ISO": (_bad_time_text, "timestamp: not an ISO 8601 time: 'yesterday'"),
}


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_each_corruption_is_refused_naming_line_and_field(
        exported: list[Record], target: Memory, name: str) -> None:
    corrupt, says = CORRUPTIONS[name]
    records = copy.deepcopy(exported)
    corrupt(records)
    message = _refused(target, records)
    assert says in message and "line " in message and "nothing was written" in message


def test_all_problems_come_in_one_error(exported: list[Record], target: Memory) -> None:
    records = copy.deepcopy(exported)
    chosen = ("time not ISO", "unknown kind", "dangling source", "dangling edge",
              "unknown predicate")  # each on a record the others leave alone
    for name in chosen:
        CORRUPTIONS[name][0](records)
    message = _refused(target, records)
    for name in chosen:
        assert CORRUPTIONS[name][1] in message


def test_the_listing_is_capped(exported: list[Record], target: Memory) -> None:
    records = copy.deepcopy(exported)
    node = _first(records, "node")
    records += [{**node, "id": f"n{i}", "kind": "alien"} for i in range(MAX_LISTED + 7)]
    message = _refused(target, records)
    assert message.count("is not a registered node kind") == MAX_LISTED
    assert "and 7 more" in message


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.sampled_from(sorted(CORRUPTIONS)), min_size=1, max_size=4))
def test_any_corruption_writes_nothing(exported: list[Record], target: Memory,
                                       names: list[str]) -> None:
    """Any mix of corruptions is refused and leaves the target namespace empty."""
    records = copy.deepcopy(exported)
    for name in names:
        CORRUPTIONS[name][0](records)
    _refused(target, records)


def test_the_cli_reports_file_lines(exported: list[Record], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    records = copy.deepcopy(exported)
    _unknown_kind(records)
    where = next(i for i, r in enumerate(records) if r.get("kind") == "alien")
    lines = [json.dumps(r) for r in records]
    lines.insert(1, "")  # a blank line shifts what follows by one
    dump = tmp_path / "bad.jsonl"
    dump.write_text("\n".join(lines) + "\n")
    store = tmp_path / "imported"
    code = main(["import", str(dump), "--path", str(store), "-n", "v"])
    err = capsys.readouterr().err
    assert code == 2 and f"line {where + 2}: node" in err, err
    with Memory.open(path=store) as memory:
        assert memory.store.namespaces() == []
