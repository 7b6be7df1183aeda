"""A conversation picked up by components that did not write its start: after a restart, or
after another process wrote the latest turns of a shared store. The graph must not depend on
which process (or which lifetime of one) wrote what: events chain across the break, episodes
too, and a memory rebuilds its components when its store took in another process's commit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from realm_helpers import CHAT_1, CHAT_2, open_memory, session

from labile._memory import Memory
from labile._model import NodeFilter
from labile_realm.construct.resume import last_events, last_session
from labile_realm.schema import EVENT, PRECEDES


def _chains(mem: Memory, ns: str = "u") -> set[tuple[str, str]]:
    nodes = {n.id: n for n in mem.store.iter_nodes(ns)}
    return {(e.src, e.dst) for n in nodes
            for e in mem.store.edges_of(ns, [n], direction="out", predicates=[PRECEDES])}


def _edges(mem: Memory, ns: str = "u") -> set[tuple[str, str, str]]:
    ids = [n.id for n in mem.store.iter_nodes(ns)]
    return {(e.src, e.dst, e.predicate) for e in mem.store.edges_of(ns, ids, direction="out")}


S1, S2 = session(1, CHAT_1), session(2, CHAT_2)


def test_a_restarted_memory_chains_the_next_turn_and_session_to_the_stored_ones() -> None:
    continuous = open_memory()
    for part in (S1[:4], S1[4:], S2):
        continuous.add(part, namespace="u")
    first = open_memory()
    first.add(S1[:4], namespace="u")
    # A new lifetime over the same store: fresh components, nothing in memory.
    again = Memory.open(first.config, store=getattr(first.store, "inner", first.store))
    again.add(S1[4:], namespace="u")
    again.add(S2, namespace="u")
    assert _chains(again) == _chains(continuous)
    assert _edges(again) == _edges(continuous)


def test_the_resume_helpers_pick_the_latest_turn_event_and_session() -> None:
    mem = open_memory()
    mem.add(S1 + S2, namespace="u")
    events = list(mem.store.iter_nodes("u", NodeFilter(kinds={EVENT})))
    latest = last_events(events)
    assert set(latest) == {"1", "2"}
    for key, node in latest.items():
        same = [e for e in events if e.attrs.get("session") == key
                and not e.attrs.get("clause_of")]
        assert max(str(e.attrs["said_at"]) for e in same) == node.attrs["said_at"]
    assert last_session(S1 + S2) == "2" and last_session([]) is None


def _lance(path: Path) -> Memory:
    return Memory.open({"preset": "realm", "store": {"type": "lancedb", "path": str(path)},
                        "embedder": {"type": "hashing"}})


def test_two_memories_taking_turns_on_one_store_build_what_one_would(tmp_path: Path) -> None:
    """Two writers of one store path (as two processes would be) alternate batches; each
    rebuilds its components when the other has committed, so the graph equals a single
    writer's."""
    with _lance(tmp_path / "one") as alone:
        for part in (S1[:4], S1[4:], S2):
            alone.add(part, namespace="u")
        expected = _edges(alone)
    a, b = _lance(tmp_path / "two"), _lance(tmp_path / "two")
    rebuilt: list[Any] = []
    real = b.reload_components

    def counting() -> None:
        rebuilt.append(1)
        real()

    b.reload_components = counting  # type: ignore[method-assign]
    a.add(S1[:4], namespace="u")
    b.add(S1[4:], namespace="u")  # b took in a's commit: rebuilt before building
    assert rebuilt == [1]
    b.add(S2[:1], namespace="u")  # nothing new from elsewhere: not rebuilt again
    assert rebuilt == [1]
    a.add(S2[1:], namespace="u")
    assert _edges(a) == expected
    a.close()
    b.close()
