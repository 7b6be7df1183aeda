"""The united preset: All-Mem's consolidation acting on REALM's graph.

Runs ``unite.atc`` on a small conversation with the hashing embedder and the
gate opened (θ = 0), so that the offline rules' proposals execute, and checks
what the operators leave behind: REALM node kinds and REALM predicates only,
nothing deleted, archived events reachable from what replaced them, and
seeding that never returns an archived node.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from labile import Memory, Observation
from labile_realm.schema import EVENT
from labile_realm.schema import PREFIX as REALM_PREFIX
from labile_unite.evidence import evidence_view, observation_order
from labile_unite.presets import PRESETS, labile

T0 = datetime(2024, 3, 1, 18, 0, tzinfo=UTC)

SESSIONS: list[list[tuple[str, str]]] = [
    [("Ana", "I'm going to a pottery workshop next month with my sister."),
     ("Ben", "Nice, tell me how it goes."),
     ("Ana", "Honestly, family time matters so much to me; I cherish my weekends with the kids.")],
    [("Ana", "I cherish time with my family, it is when I feel most alive with the kids."),
     ("Ben", "Same here, my weekends are for family too.")],
    [("Ana", "I went to the pottery workshop with my sister last week and we made two bowls. "
             "By the way, my brother moved to Berlin for a new job at a bank."),
     ("Ben", "Wow, congratulations to him!")],
]


def open_labile(theta: float = 0.0, **atc: Any) -> Memory:
    """The ``labile`` preset on the memory store and the hashing embedder, θ = ``theta``."""
    table = labile()
    table["store"] = {"type": "memory"}
    table["embedder"] = {"type": "hashing"}
    table["consolidate"] = [{"type": "unite.atc", "every_n_sessions": 0,
                             "split_threshold": theta, "merge_threshold": theta,
                             "update_threshold": theta, **atc}]
    return Memory.open(table)


def ingest(memory: Memory, ns: str = "n") -> None:
    for i, session in enumerate(SESSIONS):
        memory.add([Observation(id=f"D{i + 1}:{j + 1}", text=text, speaker=speaker,
                                timestamp=T0 + timedelta(days=10 * i), session=str(i + 1))
                    for j, (speaker, text) in enumerate(session)], namespace=ns)


def events(memory: Memory, ns: str = "n") -> dict[str, Any]:
    return {n.id: n for n in memory.store.iter_nodes(ns) if n.kind == EVENT}


def test_presets_are_realm_pipelines_with_unite_atoms() -> None:
    """``labile`` is REALM's pipeline with the visible-surface seeder and ``unite.atc``;
    the ablation drops only the consolidation."""
    table = PRESETS["labile"][1]
    assert table["extractor"]["type"] == "realm.construct"
    assert table["retrieval"]["seed"][0]["type"] == "unite.visible_match"
    assert table["reconsolidate"][0]["type"] == "realm.reconsolidate"
    assert table["consolidate"] == [{"type": "unite.atc"}]
    assert PRESETS["labile-no-consolidation"][1]["consolidate"] == []


def test_consolidation_buffers_realm_events_and_acts_on_them() -> None:
    """On a REALM graph the consolidator diagnoses every event once, executes
    proposals with θ = 0, and leaves only REALM kinds and REALM predicates."""
    with open_labile() as memory:
        ingest(memory)
        before = events(memory)
        (report,) = memory.consolidate(namespace="n")
        assert report.counts["buffered"] == len(before)
        assert report.counts["executed"] >= 1, report.log
        after = events(memory)
        assert set(before) <= set(after), "no event is deleted"
        for node in after.values():
            assert node.kind.startswith(REALM_PREFIX)
        for edge in memory.store.iter_edges("n"):
            assert edge.predicate.startswith(REALM_PREFIX), edge
        (again,) = memory.consolidate(namespace="n")
        assert again.counts["buffered"] == 0


def test_archived_events_stay_reachable_and_keep_their_text() -> None:
    """Every archived event is linked to a visible event by ``summarizes``,
    ``comprises`` or ``supersedes`` (REALM's expansion follows edges both ways),
    and its text is unchanged."""
    with open_labile() as memory:
        ingest(memory)
        texts = {i: n.content for i, n in events(memory).items()}
        memory.consolidate(namespace="n")
        after = events(memory)
        archived = [n for n in after.values() if not n.visible]
        assert archived
        links = {(end, e.predicate) for e in memory.store.iter_edges("n")
                 for end, other in ((e.dst, e.src), (e.src, e.dst))
                 if other in after and after[other].visible}
        for node in archived:
            assert node.content == texts[node.id]
            assert any((node.id, REALM_PREFIX + p) in links
                       for p in ("summarizes", "comprises", "supersedes")), node.id


def test_split_parts_are_exact_passages_of_their_source() -> None:
    """A split part's text is an exact passage of the archived source's text, in order."""
    with open_labile() as memory:
        ingest(memory)
        memory.consolidate(namespace="n")
        after = events(memory)
        parts = [n for n in after.values() if n.attrs.get("origin") == "split"]
        if not parts:
            pytest.skip("the rules proposed no Split on this text")
        for part in parts:
            (source,) = part.attrs["derived_from"]
            assert part.content in after[source].content
            assert not after[source].visible and part.visible


def test_seeding_skips_archived_events() -> None:
    """After consolidation no seed is archived, and searching still works."""
    with open_labile() as memory:
        ingest(memory)
        memory.consolidate(namespace="n")
        result = memory.search("pottery workshop with my sister", namespace="n", k=5)
        seeds = [h for h in result.hits if h.via.stage == "seed"]
        assert result.hits
        assert all(h.node.visible for h in seeds)


def test_closed_gate_changes_nothing() -> None:
    """With θ = 1 nothing executes and the surface keeps every event."""
    with open_labile(theta=1.0) as memory:
        ingest(memory)
        (report,) = memory.consolidate(namespace="n")
        assert report.counts["executed"] == 0
        assert report.counts["visible_before"] == report.counts["visible_after"]


def test_evidence_view_orders_by_utterance_and_moves_the_caption() -> None:
    """The diagnoser's view of an event is dated when it was said, ordered by the
    observation log, and keeps a shared photo's caption out of the evidence."""
    with open_labile() as memory:
        memory.add([Observation(id="a", text="We went hiking last year.", speaker="Ana",
                                timestamp=T0, session="1",
                                metadata={"caption": "a lake"})], namespace="n")
        (node,) = events(memory).values()
        view = evidence_view(node, observation_order(memory.store, "n"))
        assert view.time_start == T0
        assert view.content == "We went hiking last year."
        assert view.attrs["caption"] == "a lake"
        assert view.id == node.id


def test_construction_and_consolidation_keep_one_record_of_what_is_current() -> None:
    """Whoever wrote it (REALM's construction or All-Mem's Update), every
    ``supersedes`` edge has the validity contract on the node it replaces, and
    every replaced node names only nodes that have such an edge to it."""
    with open_labile() as memory:
        ingest(memory)
        memory.consolidate(namespace="n")
        nodes = {n.id: n for n in memory.store.iter_nodes("n")}
        edges = {(e.src, e.dst) for e in memory.store.iter_edges("n")
                 if e.predicate == REALM_PREFIX + "supersedes" and not e.attrs.get("retired")}
        assert edges, "the plan reported as done supersedes the plan"
        for src, dst in edges:
            assert src in nodes[dst].superseded_by and not nodes[dst].is_current()
            assert nodes[dst].valid_to == nodes[src].learned_at or \
                nodes[dst].valid_to <= nodes[src].learned_at  # earliest end kept
        for node in nodes.values():
            for by in node.superseded_by:
                assert (by, node.id) in edges


def test_an_update_writes_the_validity_contract_on_the_archived_event() -> None:
    """All-Mem's Update over REALM's events archives the old event and writes the
    same contract REALM's construction writes, so retrieval reads one record."""
    from labile_unite.execute import RealmExecutor

    with open_labile() as memory:
        ingest(memory)
        evs = sorted((n for n in events(memory).values() if n.is_current()),
                     key=lambda n: n.learned_at)
        old, new = evs[0], evs[-1]  # no rule of construction linked these two
        executor = RealmExecutor(memory.store, "n", embedder=memory.embedder,
                                 clock=lambda: T0 + timedelta(days=90))
        executor.update(new, old)
        after = events(memory)[old.id]
        assert not after.visible and after.content == old.content
        assert after.superseded_by == (new.id,) and after.valid_to == new.learned_at
        assert events(memory)[new.id].is_current()
