"""Applying and restoring a retention policy through `labile.Memory`: what is hidden,
what search still sees, and the invariants (nothing destroyed, no leak, idempotent)."""

from __future__ import annotations

from datetime import datetime, timedelta

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from retention_helpers import T0, open_memory, snapshot, turns

from labile import InputError, Memory
from labile.plugin import superseded
from labile_retention import (
    RetentionPolicy,
    apply_retention,
    restore_hidden,
    save_policy,
    saved_policy,
)
from labile_retention.apply import HIDDEN_WHY

NOW = T0 + timedelta(days=400)


def _found(memory: Memory, namespace: str, query: str, **kw: object) -> set[str]:
    result = memory.search(query, namespace=namespace, k=50, **kw)  # type: ignore[arg-type]
    return {s for h in result.hits for s in h.node.sources}


def test_old_unused_memories_leave_search_but_stay_readable() -> None:
    memory = open_memory()
    memory.add(turns("t", [0, 10, 20, 380, 390, 395]), namespace="u")
    report = apply_retention(memory, "u", RetentionPolicy(unused_days=90), now=NOW)
    hidden = {s for h in report.hidden for s in memory.get_nodes("u", [h.node_id])[0].sources}
    assert hidden == {"t0", "t1", "t2"} and {h.reason for h in report.hidden} == {"unused"}
    assert _found(memory, "u", "pottery class in Lisbon") & hidden == set()
    assert "t0" in _found(memory, "u", "pottery class in Lisbon", include_hidden=True)
    # As known before the policy ran, the memory still had them.
    assert "t0" in _found(memory, "u", "pottery class in Lisbon", as_of=NOW - timedelta(days=1))
    node = memory.get_nodes("u", [report.hidden[0].node_id])[0]
    assert node.is_hidden(NOW) and node.attrs[HIDDEN_WHY] == "unused"
    assert [o.id for o in memory.get("u", ["t0"])] == ["t0"]


def test_superseded_long_ago_and_small_talk_rules() -> None:
    memory = open_memory()
    memory.add(turns("t", [300, 301, 302, 303, 304, 305]), namespace="u")
    nodes = {n.sources[0]: n for n in memory.store.iter_nodes("u")}
    old = superseded(nodes["t2"], nodes["t3"].id, T0 + timedelta(days=303))
    with memory.store.batch("u"):
        memory.store.upsert_nodes("u", [old])
    report = apply_retention(memory, "u", RetentionPolicy(superseded_days=30, small_talk_days=0),
                             now=NOW)
    why = {memory.get_nodes("u", [h.node_id])[0].sources[0]: h.reason for h in report.hidden}
    # t1 "Hey, thanks so much!" and t4 "haha okay, sounds good" are small talk.
    assert why == {"t2": "superseded", "t1": "small_talk", "t4": "small_talk"}
    assert report.counts() == {"superseded": 1, "small_talk": 2, "unused": 0, "restored": 0}


def test_a_dry_run_changes_nothing_and_a_second_apply_hides_nothing_more() -> None:
    memory = open_memory()
    memory.add(turns("t", [0, 10, 380]), namespace="u")
    before = snapshot(memory, "u")
    planned = apply_retention(memory, "u", RetentionPolicy(unused_days=90), now=NOW, dry_run=True)
    assert len(planned.hidden) == 2 and snapshot(memory, "u") == before
    done = apply_retention(memory, "u", RetentionPolicy(unused_days=90), now=NOW)
    assert [h.node_id for h in done.hidden] == [h.node_id for h in planned.hidden]
    after = snapshot(memory, "u")
    again = apply_retention(memory, "u", RetentionPolicy(unused_days=90), now=NOW)
    assert again.hidden == () and snapshot(memory, "u") == after


def test_restore_by_reason_and_the_saved_policy() -> None:
    memory = open_memory()
    memory.add(turns("t", [0, 1, 2, 3, 4, 5]), namespace="u")
    with pytest.raises(InputError, match="no saved retention policy"):
        apply_retention(memory, "u", now=NOW)
    save_policy(memory, "u", RetentionPolicy(unused_days=300, small_talk_days=0))
    assert saved_policy(memory.store, "u") == RetentionPolicy(unused_days=300, small_talk_days=0)
    before = snapshot(memory, "u")
    report = apply_retention(memory, "u", now=NOW)  # the saved policy
    assert report.counts()["small_talk"] == 2 and report.counts()["unused"] == 4
    assert _found(memory, "u", "thanks okay sounds good") == set()  # the policy node is hidden too
    back = restore_hidden(memory, "u", reasons=["small_talk"])
    assert len(back.restored) == 2
    restore_hidden(memory, "u")
    assert snapshot(memory, "u") == before
    with pytest.raises(InputError, match="unknown retention reason.*the reasons are superseded"):
        restore_hidden(memory, "u", reasons=["old"])
    with pytest.raises(InputError, match="policy must be a RetentionPolicy"):
        apply_retention(memory, "u", {"unused_days": 1})  # type: ignore[arg-type]
    with pytest.raises(InputError, match="timezone-aware"):
        apply_retention(memory, "u", RetentionPolicy(unused_days=1), now=NOW.replace(tzinfo=None))


def test_use_recorded_by_reconsolidation_keeps_a_memory() -> None:
    memory = open_memory("realm")
    memory.add(turns("t", [0, 1, 2, 3, 4, 5]), namespace="u")
    result = memory.search("Where is Maria's pottery class in Lisbon?", namespace="u", k=8)
    cited = [h.node.id for h in result.hits[:3]]
    reports = memory.feedback(result, cited=cited, useful=True)
    credited = {e for r in reports for entry in r.log
                if entry.get("decision") in ("strengthen", "add")
                for e in (entry["src"], entry["dst"])}
    assert set(cited) <= credited
    # Use is stamped with the clock of the feedback: "now" is 200 days after it,
    # so every memory is old, and only the used ones stay.
    used_at = max(datetime.fromisoformat(entry["at"]) for r in reports for entry in r.log)
    report = apply_retention(memory, "u", RetentionPolicy(unused_days=100),
                             now=used_at + timedelta(days=50))
    hidden = {h.node_id for h in report.hidden}
    assert hidden and not set(cited) & hidden
    assert set(cited) <= {h.node.id for h in memory.search(
        "Where is Maria's pottery class in Lisbon?", namespace="u", k=20).hits}
    # Once the use itself is old, they go too.
    later = apply_retention(memory, "u", RetentionPolicy(unused_days=100),
                            now=used_at + timedelta(days=150))
    assert set(cited) <= {h.node_id for h in later.hidden}


@st.composite
def _cases(draw: st.DrawFn) -> tuple[str, list[int], list[int], RetentionPolicy]:
    preset = draw(st.sampled_from(sorted(_SHARED)))
    ages = draw(st.lists(st.integers(0, 399), min_size=1, max_size=6))
    other = draw(st.lists(st.integers(0, 399), min_size=1, max_size=4))
    days = st.none() | st.integers(0, 450)
    policy = RetentionPolicy(unused_days=draw(days), small_talk_days=draw(days),
                             superseded_days=draw(days))
    return preset, ages, other, policy


#: One memory per preset for every example (a fresh pair of namespaces each time):
#: one evidence unit per turn with All-Mem's visibility flag, one node per turn without.
_SHARED = {preset: open_memory(preset) for preset in ("allmem", "bm25")}
_RUN = iter(range(10**9))
_QUERY = "pottery Lisbon hiking Porto thanks"


def _ranked(memory: Memory, namespace: str, **kw: object) -> list[str]:
    return [h.node.id for h in memory.search(_QUERY, namespace=namespace, k=50,
                                             **kw).hits]  # type: ignore[arg-type]


@settings(max_examples=30)
@given(_cases())
def test_retention_never_destroys_never_leaks_is_idempotent_and_restores_exactly(
    case: tuple[str, list[int], list[int], RetentionPolicy],
) -> None:
    """Property: after applying any policy, every node of the namespace is still stored,
    equal to before but for the two marks, and readable by id; a search with
    include_hidden, or as of a time before the policy ran, ranks exactly as before
    it; nodes of another namespace are untouched; a second apply changes nothing;
    and a restore gives back exactly the nodes as they were."""
    preset, ages, other_ages, policy = case
    run = next(_RUN)
    ns, other = f"p{run}", f"q{run}"
    memory = _SHARED[preset]
    memory.add(turns("t", ages), namespace=ns)
    memory.add(turns("o", other_ages), namespace=other)
    before, before_other = snapshot(memory, ns), snapshot(memory, other)
    earlier = NOW - timedelta(seconds=1)  # every turn was said by then (ages < 400 days)
    ranked, ranked_then = _ranked(memory, ns), _ranked(memory, ns, as_of=earlier)
    report = apply_retention(memory, ns, policy, now=NOW)
    after = snapshot(memory, ns)
    assert set(after) == set(before) and snapshot(memory, other) == before_other
    hidden = {h.node_id for h in report.hidden}
    for nid, (kind, content, visible, sources, start, node_attrs) in after.items():
        node_attrs = dict(node_attrs)  # a copy: `after` is compared again below
        marks = {k: node_attrs.pop(k) for k in ("hidden_at", "hidden_why") if k in node_attrs}
        assert (kind, content, visible, sources, start, node_attrs) == before[nid]
        assert bool(marks) == (nid in hidden)
    assert [n.id for n in memory.get_nodes(ns, sorted(hidden))] == sorted(hidden)
    assert not hidden & set(_ranked(memory, ns))
    assert _ranked(memory, ns, include_hidden=True) == ranked
    assert _ranked(memory, ns, as_of=earlier) == ranked_then
    assert apply_retention(memory, ns, policy, now=NOW).hidden == ()
    assert snapshot(memory, ns) == after
    restore_hidden(memory, ns)
    assert snapshot(memory, ns) == before


def test_hidden_marks_are_plain_attrs_the_store_round_trips() -> None:
    memory = open_memory()
    memory.add(turns("t", [0]), namespace="u")
    node = next(iter(memory.store.iter_nodes("u")))
    marked = attrs.evolve(node, attrs={**node.attrs, "hidden_at": "not a time"})
    assert not marked.is_hidden(NOW)  # a malformed mark hides nothing
