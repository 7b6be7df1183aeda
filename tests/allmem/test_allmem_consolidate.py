"""ATC: diagnosis, gate, Norm, applicability, planning, validation and execution."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import attrs
import pytest
from allmem_helpers import open_memory, session

from labile._errors import LLMError
from labile._memstore import MemoryStore
from labile._model import Node, NodeFilter
from labile_allmem.consolidate.atc import ATC, run_records
from labile_allmem.consolidate.gate import gate, normalize
from labile_allmem.consolidate.records import (
    DescriptorPlan,
    PlanError,
    Proposal,
    SplitPlan,
)
from labile_allmem.schema import (
    LINEAGE,
    RUN,
    SIBLING,
    UNIT,
    VERSION,
    is_active,
    unit_id,
)
from labile_llm import ScriptedLLM

NURSE = "I work as a nurse at the city hospital in Boston."
TEACHER = "I no longer work as a nurse at the city hospital in Boston, I switched to teaching."
THANKS = "Thanks so much for the kind words, Bob."
MIXED = ("Grandma Rosa bakes cinnamon rolls every Sunday morning. Meanwhile, quarterly budget "
         "spreadsheets for marketing remain overdue again.")


def build(mem, ns="n"):
    """Three sessions holding a duplicate, a supersession and a conflated turn."""
    mem.add(session(1, [("Ann", NURSE), ("Bob", "That sounds demanding!")]), namespace=ns)
    mem.add(session(2, [("Ann", THANKS), ("Bob", "Any time.")]), namespace=ns)
    mem.add(session(3, [("Ann", TEACHER), ("Ann", THANKS), ("Ann", MIXED)]), namespace=ns)
    return mem


def atc_of(mem) -> ATC:
    (_name, atc), = mem.consolidators
    return atc


def nodes(mem, ns="n"):
    return {n.id: n for n in mem.store.iter_nodes(ns, NodeFilter(kinds=frozenset({UNIT})))}


def edges(mem, predicate, ns="n"):
    return {(e.src, e.dst) for e in mem.store.iter_edges(ns)
            if e.predicate == predicate and is_active(e)}


def test_offline_split_merge_update_end_to_end():
    """Each operator runs once, non-destructively, with its links."""
    mem = build(open_memory())
    before = nodes(mem)
    (report,) = mem.consolidate(namespace="n")
    c = report.counts
    assert (c["split.executed"], c["merge.executed"], c["update.executed"]) == (1, 1, 1)
    assert c["executed"] == 3 and c["skipped"] == 0 and c["noop"] == 0
    after = nodes(mem)
    assert set(before) <= set(after)  # nothing deleted

    # Split: exact segments, visible siblings, sibling + lineage links, source archived.
    mixed = unit_id("s3:2")
    siblings = [n for n in after.values() if n.attrs.get("derived_from") == [mixed]]
    assert [s.content for s in siblings] == [MIXED[:55], MIXED[56:]]
    assert all(s.visible and s.sources == ("s3:2",) for s in siblings)
    assert not after[mixed].visible
    assert {(s.id, mixed) for s in siblings} <= edges(mem, LINEAGE)
    assert (siblings[0].id, siblings[1].id) in edges(mem, SIBLING)
    assert (siblings[1].id, siblings[0].id) in edges(mem, SIBLING)

    # Merge: a canonical unit with the union of sources, lineage to archived members.
    (merged,) = [n for n in after.values() if n.attrs.get("origin") == "merge"]
    assert merged.visible and merged.sources == ("s2:0", "s3:1")
    assert merged.content == f"{THANKS}\n{THANKS}"
    assert {(merged.id, unit_id("s2:0")), (merged.id, unit_id("s3:1"))} <= edges(mem, LINEAGE)
    assert not after[unit_id("s2:0")].visible and not after[unit_id("s3:1")].visible

    # Update: version link current -> superseded, old archived, current refreshed.
    assert (unit_id("s3:0"), unit_id("s1:0")) in edges(mem, VERSION)
    assert not after[unit_id("s1:0")].visible and after[unit_id("s3:0")].visible
    assert after[unit_id("s3:0")].attrs["supersedes"] == [unit_id("s1:0")]
    assert after[unit_id("s3:0")].content == TEACHER
    # ... and the superseded unit carries the validity contract every bundle reads.
    old = after[unit_id("s1:0")]
    assert old.superseded_by == (unit_id("s3:0"),) and not old.is_current()
    assert old.valid_to == after[unit_id("s3:0")].learned_at

    # The buffer is cleared.
    assert not any(n.attrs.get("buffered") for n in after.values())


def test_archiving_flips_visibility_and_nothing_else():
    """An archived unit keeps its evidence, descriptor, keywords, sources and embedding;
    its attrs change only by the buffer flag and, for an Update, the validity contract."""
    mem = build(open_memory())
    before = nodes(mem)
    mem.consolidate(namespace="n")
    for nid, old in before.items():
        new = nodes(mem)[nid]
        if new.visible:
            continue
        assert new.content == old.content
        assert new.description == old.description and new.keywords == old.keywords
        assert new.sources == old.sources
        assert (new.embedding == old.embedding).all()
        kept = ("buffered", "valid_to", "superseded_by")
        assert {k: v for k, v in new.attrs.items() if k not in kept} == {
            k: v for k, v in old.attrs.items() if k not in kept}


def test_gate_thresholds_per_operator():
    """A proposal passes only when its confidence reaches its operator's θ."""
    props = [Proposal(op="merge", target=("a", "b"), confidence=0.9),
             Proposal(op="merge", target=("a", "c"), confidence=0.89),
             Proposal(op="split", target=("a",), confidence=0.95),
             Proposal(op="rename", target=("a",), confidence=1.0)]
    accepted, rejected = gate(props, {"merge": 0.9, "split": 0.96, "update": 0.9})
    assert accepted == [props[0]]
    assert rejected == props[1:]
    mem = build(open_memory(atc={"update_threshold": 1.0, "split_threshold": 1.0}))
    (report,) = mem.consolidate(namespace="n")
    assert report.counts["update.proposed"] >= 1 and report.counts["update.gated"] == 0
    assert report.counts["split.gated"] == 0 and report.counts["merge.executed"] == 1


def _unit(nid, seq, kind=UNIT):
    from datetime import UTC, datetime, timedelta
    return Node(id=nid, kind=kind, content=nid, visible=True, attrs={"seq": seq},
                time_start=datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=seq))


def test_norm_canonicalises_drops_and_deduplicates():
    """Norm resolves turn ids, drops invalid targets with reasons, merges duplicates."""
    store = MemoryStore()
    store.upsert_nodes("n", [_unit(unit_id("t1"), 1), _unit(unit_id("t2"), 2),
                             _unit(unit_id("t3"), 3), _unit("run", 9, kind=RUN)])
    u1, u2, u3 = unit_id("t1"), unit_id("t2"), unit_id("t3")
    props = [
        Proposal(op="merge", target=(u2, " t1 "), confidence=0.91),
        Proposal(op="merge", target=(u1, u2), confidence=0.97),  # same set: dedup, max p
        Proposal(op="merge", target=(u1, u1), confidence=0.99),  # one distinct unit
        Proposal(op="merge", target=(u1, "ghost"), confidence=0.99),  # unknown id
        Proposal(op="split", target=(u1, u2), confidence=0.99),  # wrong arity
        Proposal(op="split", target=("run",), confidence=0.99),  # not a unit
        Proposal(op="update", target=(u1, u3), confidence=0.99),  # current is older
        Proposal(op="update", target=(u3, u1), confidence=0.92),
        Proposal(op="update", target=(u3, u2), confidence=0.95),
        Proposal(op="explode", target=(u1,), confidence=1.0),
    ]
    queues, dropped = normalize(props, store, "n")
    assert [(p.target, p.confidence) for p in queues["merge"]] == [((u1, u2), 0.97)]
    assert [p.target for p in queues["update"]] == [(u3, u2), (u3, u1)]
    assert queues["split"] == []
    reasons = sorted(r for _, r in dropped)
    assert len(dropped) == 6
    assert any("unknown id 'ghost'" in r for r in reasons)
    assert any("not a memory unit" in r for r in reasons)
    assert any("older" in r for r in reasons)
    assert any("unknown operator" in r for r in reasons)


class FixedDiagnoser:
    """Proposes exactly the given proposals."""

    failures = 0

    def __init__(self, proposals: Sequence[Proposal]) -> None:
        self.proposals = list(proposals)

    def diagnose(self, hoods):
        return list(self.proposals)


class FixedPlanner:
    """Returns canned plans (or raises) per operator."""

    def __init__(self, split=None, merge=None, update=None):
        self.split, self.merge, self.update = split, merge, update

    def _give(self, plan):
        if isinstance(plan, Exception):
            raise plan
        return plan

    def plan_split(self, unit):
        return self._give(self.split)

    def plan_merge(self, units):
        return self._give(self.merge)

    def plan_update(self, current, old):
        return self._give(self.update)


def _run(mem, proposals, planner):
    atc = atc_of(mem)
    atc.diagnoser = FixedDiagnoser(proposals)
    atc.planner = planner
    return mem.consolidate(namespace="n")[0]


def test_stale_targets_are_skipped():
    """A target whose unit was edited earlier in the run is Skipped, not retargeted."""
    mem = build(open_memory())
    a, b, c = unit_id("s2:0"), unit_id("s3:1"), unit_id("s1:1")
    props = [Proposal(op="merge", target=(a, b), confidence=0.99),
             Proposal(op="merge", target=(b, c), confidence=0.95),
             Proposal(op="update", target=(unit_id("s3:0"), a), confidence=0.99)]
    plan = DescriptorPlan(summary="Ann thanks Bob for the kind words.", keywords=("thanks",))
    report = _run(mem, props, FixedPlanner(merge=plan, update=plan))
    statuses = [(e["op"], e["status"], e["reason"]) for e in report.log]
    assert statuses[0] == ("merge", "executed", "")
    assert statuses[1][1] == "skipped" and "already edited" in statuses[1][2]
    assert statuses[2][1] == "skipped" and "stale" in statuses[2][2]


def test_archived_targets_are_stale():
    """Units archived before the run fail the visibility re-check."""
    mem = build(open_memory())
    old = nodes(mem)[unit_id("s1:1")]
    mem.store.upsert_nodes("n", [attrs.evolve(old, visible=False)])
    report = _run(mem, [Proposal(op="split", target=(old.id,), confidence=1.0)],
                  FixedPlanner(split=SplitPlan(segments=("a", "b"))))
    assert report.log[-1]["status"] == "skipped" and "not visible" in report.log[-1]["reason"]


@pytest.mark.parametrize(("plan", "status", "reason"), [
    (SplitPlan(segments=(MIXED,)), "noop", "fewer than two"),
    (SplitPlan(segments=("", "   ", MIXED[:55])), "noop", "fewer than two"),
    (SplitPlan(segments=("Grandma Rosa bakes rolls.", "Budgets are overdue.")), "skipped",
     "ungrounded"),
    (SplitPlan(segments=(MIXED[56:], MIXED[:55])), "skipped", "in order"),
    (PlanError("bad JSON"), "skipped", "invalid plan"),
])
def test_split_plan_validation(plan, status, reason):
    """Split plans need >= 2 grounded, ordered segments; else Noop or Skipped."""
    mem = build(open_memory())
    target = unit_id("s3:2")
    report = _run(mem, [Proposal(op="split", target=(target,), confidence=1.0)],
                  FixedPlanner(split=plan))
    (entry,) = [e for e in report.log if e["op"] == "split"]
    assert entry["status"] == status and reason in entry["reason"]
    assert nodes(mem)[target].visible  # nothing applied


@pytest.mark.parametrize(("plan", "status", "reason"), [
    (DescriptorPlan(summary="", keywords=()), "skipped", "empty"),
    (DescriptorPlan(summary="The moon is made of green cheese.", keywords=()), "skipped",
     "not supported"),
    (DescriptorPlan(summary="x", keywords=(), decline=True, reason="not redundant"), "noop",
     "declined"),
    (PlanError("timeout"), "skipped", "invalid plan"),
])
def test_merge_plan_validation(plan, status, reason):
    """A canonical descriptor must be non-empty and supported by the sources."""
    mem = build(open_memory())
    target = (unit_id("s2:0"), unit_id("s3:1"))
    report = _run(mem, [Proposal(op="merge", target=target, confidence=1.0)],
                  FixedPlanner(merge=plan))
    (entry,) = [e for e in report.log if e["op"] == "merge"]
    assert entry["status"] == status and reason in entry["reason"]
    assert all(nodes(mem)[t].visible for t in target)


def test_update_descriptor_must_be_supported_by_the_current_unit():
    """Facts only the superseded unit states do not support the refreshed descriptor."""
    mem = build(open_memory())
    target = (unit_id("s3:0"), unit_id("s1:0"))
    plan = DescriptorPlan(summary="Nurse hospital Boston", keywords=())
    ok = _run(mem, [Proposal(op="update", target=target, confidence=1.0)],
              FixedPlanner(update=plan))
    assert ok.log[-1]["status"] == "executed"
    mem2 = build(open_memory())
    bad = DescriptorPlan(summary="Ann earns a large salary in Chicago", keywords=())
    rep = _run(mem2, [Proposal(op="update", target=target, confidence=1.0)],
               FixedPlanner(update=bad))
    assert rep.log[-1]["status"] == "skipped" and "current unit" in rep.log[-1]["reason"]


def test_every_target_ends_with_a_status_and_the_counts_add_up():
    """executed + skipped + noop == queued, per operator and in total."""
    mem = build(open_memory())
    (report,) = mem.consolidate(namespace="n")
    c = report.counts
    for op in ("split", "merge", "update"):
        assert c[f"{op}.executed"] + c[f"{op}.skipped"] + c[f"{op}.noop"] == c[f"{op}.queued"]
        assert c[f"{op}.queued"] + c[f"{op}.dropped"] <= c[f"{op}.gated"] <= c[f"{op}.proposed"]
    assert c["executed"] + c["skipped"] + c["noop"] == sum(
        c[f"{op}.queued"] for op in ("split", "merge", "update"))


def test_edit_log_is_an_append_only_list_of_run_records():
    """Each run appends an invisible ``allmem.run`` record with its counts and outcomes."""
    mem = build(open_memory())
    first = mem.consolidate(namespace="n")[0]
    mem.add(session(4, [("Bob", "Did you enjoy the new teaching job?")]), namespace="n")
    mem.consolidate(namespace="n")
    runs = run_records(mem.store, "n")
    assert [r["run"] for r in runs] == [1, 2]
    assert runs[0]["counts"]["executed"] == first.counts["executed"]
    assert len(runs[0]["outcomes"]) == first.counts["executed"]
    assert runs[1]["counts"]["buffered"] == 1
    recs = list(mem.store.iter_nodes("n", NodeFilter(kinds=frozenset({RUN}))))
    assert all(not r.visible and r.embedding is None for r in recs)


def test_auto_consolidation_every_n_sessions():
    """after_add runs ATC once the buffer spans N sessions, then starts counting again."""
    mem = open_memory(atc={"every_n_sessions": 2})
    r1 = mem.add(session(1, [("Ann", NURSE)]), namespace="n")
    assert "consolidation" not in r1.details
    r2 = mem.add(session(2, [("Ann", THANKS)]), namespace="n")
    assert r2.details["consolidation"]["allmem.atc"]["buffered"] == 2
    r3 = mem.add(session(3, [("Ann", TEACHER)]), namespace="n")
    assert "consolidation" not in r3.details
    assert len(run_records(mem.store, "n")) == 1


def test_buffer_survives_a_restart():
    """The buffer lives in the store: a new pipeline over the same store sees it."""
    first = open_memory()
    build(first)
    raw = first.store.inner
    second = open_memory()
    second2 = type(second)(second.config, second.registries, store=raw)
    (report,) = second2.consolidate(namespace="n")
    assert report.counts["buffered"] == 7 and report.counts["executed"] == 3


# --------------------------------------------------------------------------- #
# LLM diagnosis and planning (scripted)                                        #
# --------------------------------------------------------------------------- #

NO_PROPOSALS = json.dumps({"proposals": []})


def llm_memory(rules):
    llm = ScriptedLLM(rules=[("search descriptor", json.dumps(
        {"summary": "a message", "keywords": ["one", "two", "three"]})), *rules,
        ("three kinds of damage", NO_PROPOSALS)])
    # the paper's diagnosis: every neighbourhood asked, free-form targets (Norm's contract)
    diagnoser = {"type": "allmem.diagnoser.llm", "prefilter": "none", "narrow_schema": False}
    return build(open_memory("allmem-llm", llm=llm,
                             atc={"workers": 2, "diagnoser": diagnoser})), llm


def diagnose_rule(anchor_text, proposals):
    """A rule answering the diagnosis of the neighbourhood anchored on ``anchor_text``."""
    quoted = re.escape(json.dumps(anchor_text)[:40])
    pattern = r"three kinds of damage.*\[U1\][^\n]*\n[^\n]*\n\s*evidence: " + quoted
    reply = proposals if isinstance(proposals, str | Exception) else json.dumps(
        {"proposals": proposals})
    return (pattern, reply)


def test_llm_diagnosis_and_planning_execute_valid_plans():
    """Aliases and raw turn ids both resolve; valid plans execute."""
    mem, llm = llm_memory([
        diagnose_rule(TEACHER, [
            {"op": "update", "target": ["U1", "s1:0"], "confidence": 0.95, "reason": "job"}]),
        diagnose_rule(MIXED, [{"op": "split", "target": ["U1"], "confidence": 0.93}]),
        ("Cut its evidence", json.dumps({"segments": [MIXED[:55], MIXED[56:]]})),
        ("CURRENT unit below replaces", json.dumps(
            {"summary": "Ann switched from nursing to teaching.", "keywords": ["teaching"]})),
    ])
    (report,) = mem.consolidate(namespace="n")
    assert report.counts["update.executed"] == 1 and report.counts["split.executed"] == 1
    assert report.counts["neighbourhoods"] == 7
    after = nodes(mem)
    assert after[unit_id("s3:0")].description.endswith("] Ann switched from nursing to teaching.")
    ops = {c.operation for c in llm.calls}
    assert {"allmem.diagnose", "allmem.plan_split", "allmem.plan_update"} <= ops


@pytest.mark.parametrize("reply", ["{not json", json.dumps({"proposals": [{"op": "merge"}]}),
                                   LLMError("timeout")])
def test_llm_diagnosis_fails_closed(reply):
    """A malformed or failed diagnosis contributes nothing and is counted."""
    mem, _ = llm_memory([diagnose_rule(TEACHER, reply)])
    (report,) = mem.consolidate(namespace="n")
    assert report.counts["diagnosis_failures"] == 1
    assert report.counts["executed"] == 0
    assert all(n.visible for n in nodes(mem).values())


def test_llm_unknown_ids_are_dropped_by_norm():
    """Ids the model invents never reach execution."""
    mem, _ = llm_memory([diagnose_rule(TEACHER, [
        {"op": "merge", "target": ["U1", "U42"], "confidence": 0.99},
        {"op": "update", "target": ["U1", "D9:99"], "confidence": 0.99}])])
    (report,) = mem.consolidate(namespace="n")
    assert report.counts["merge.dropped"] == 1 and report.counts["update.dropped"] == 1
    assert report.counts["executed"] == 0
    dropped = [e for e in report.log if e["status"] == "dropped"]
    assert {e["reason"] for e in dropped} == {"unknown id 'U42'", "unknown id 'D9:99'"}


@pytest.mark.parametrize(("segments", "status"), [
    (["Grandma Rosa bakes cinnamon rolls on Sundays.", "Budgets are late."], "skipped"),
    (["", ""], "noop"),
    ([MIXED], "noop"),
])
def test_llm_split_plans_must_be_grounded(segments, status):
    """Rewritten segments are Skipped; fewer than two non-empty ones are Noop."""
    mem, _ = llm_memory([
        diagnose_rule(MIXED, [{"op": "split", "target": ["U1"], "confidence": 0.93}]),
        ("Cut its evidence", json.dumps({"segments": segments})),
    ])
    (report,) = mem.consolidate(namespace="n")
    assert report.counts[f"split.{status}"] == 1
    assert nodes(mem)[unit_id("s3:2")].visible


def test_llm_plan_with_malformed_json_is_skipped_without_retry():
    """One repair attempt by the client, then Skipped; ATC itself never retries."""
    mem, llm = llm_memory([
        diagnose_rule(TEACHER, [{"op": "update", "target": ["U1", "s1:0"], "confidence": 0.95}]),
        ("CURRENT unit below replaces", "Sure! The new summary is: Ann teaches."),
    ])
    (report,) = mem.consolidate(namespace="n")
    assert report.counts["update.skipped"] == 1
    assert sum(1 for c in llm.calls if c.operation == "allmem.plan_update") == 2
    assert nodes(mem)[unit_id("s1:0")].visible


def test_repeated_greetings_merge_at_the_calibrated_gate():
    """Two turns of one speaker that only greet are merged at θ = 0.9 (the judged
    precision of the kind is above it); a farewell, another speaker's greeting
    and a greeting that also tells something stay apart."""
    mem = open_memory(atc={"split_threshold": 0.9, "merge_threshold": 0.9,
                           "update_threshold": 0.9})
    mem.add(session(1, [("Ann", "Hey Bob! Long time no see! How have you been?"),
                        ("Bob", "Hey Ann! Long time no see! How have you been?"),
                        ("Ann", "Bye Bob! Take care!")]), namespace="n")
    mem.add(session(2, [("Ann", "Hi Bob! Long time no see! How are you?"),
                        ("Ann", "Hey Bob! I adopted a grey kitten from the shelter last week."),
                        ("Ann", "Thanks Bob, talk to you later!")]), namespace="n")
    (report,) = mem.consolidate(namespace="n")
    merged = [n for n in nodes(mem).values() if n.attrs.get("origin") == "merge"]
    assert report.counts["executed"] == len(merged) >= 1
    sources = {tuple(m.sources) for m in merged}
    assert ("s1:0", "s2:0") in sources
    # Only the greetings, and the two farewells (the same ritual too), may merge.
    assert sources <= {("s1:0", "s2:0"), ("s1:2", "s2:2")}, sources
