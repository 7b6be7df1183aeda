"""Property tests of the REALM invariants (hypothesis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from realm_helpers import open_memory

from labile._model import Edge, Node, NodeFilter, Observation, OperationReport, Query, edge_id
from labile.testing import make_deps
from labile_realm.reconsolidate import (
    EdgeDecision,
    RealmReconsolidator,
    ReconsolidateConfig,
    replay,
    update_weight,
)
from labile_realm.retrieve.plan import STATE_PLANS, SeedPlan
from labile_realm.retrieve.seed import RealmSeeder, SeedConfig
from labile_realm.schema import KIND_BY_SHORT, PREDICATES

T0 = datetime(2024, 1, 1, tzinfo=UTC)
WORDS = ["dog", "beach", "bread", "Paris", "race", "book", "paint", "lake", "job", "cat", "Ann"]
IDS = ["n0", "n1", "n2", "n3", "n4", "n5"]
PRED_NAMES = [p.name for p in PREDICATES]

weights = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
w_mins = st.floats(min_value=0.0, max_value=0.5, allow_nan=False)
actions = st.sampled_from(["add", "strengthen", "weaken"])


@given(w=st.one_of(st.none(), weights), action=actions, c=weights, w_min=w_mins,
       eta=st.floats(min_value=0.0, max_value=1.0))
def test_update_weight_stays_in_bounds(w: float | None, action: Any, c: float, w_min: float,
                                       eta: float) -> None:
    """Eq. 11–12 keeps every weight in [w_min, 1], whatever the prior weight,
    action, confidence and η."""
    new = update_weight(w, action, c, eta_add=eta, w_min=w_min)
    assert w_min <= new <= 1.0


decision = st.builds(
    EdgeDecision,
    src=st.sampled_from(IDS), dst=st.sampled_from(IDS), action=actions,
    predicate=st.sampled_from(PRED_NAMES), confidence=weights,
)


@settings(max_examples=40, deadline=None)
@given(decisions=st.lists(decision, max_size=25), w_min=w_mins,
       recalled=st.sets(st.sampled_from(IDS), min_size=2),
       initial=st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from(IDS), weights),
                        max_size=6))
def test_any_decision_sequence_keeps_weights_bounded(
    decisions: list[EdgeDecision], w_min: float, recalled: set[str],
    initial: list[tuple[str, str, float]],
) -> None:
    """Any sequence of decisions touches only edges among recalled nodes, keeps
    their weights in [w_min, 1], deletes no edge, changes no node content, and
    its edit log replays to exactly the weights it produced."""
    deps = make_deps()
    store = deps.store
    store.upsert_nodes("p", [Node(id=i, kind="realm.event", content=f"content {i}") for i in IDS])
    store.upsert_edges("p", [
        Edge(id=edge_id(s, "realm.precedes", d), src=s, dst=d, predicate="realm.precedes",
             weight=w) for s, d, w in initial if s != d
    ])
    before = {e.id: e.weight for e in store.iter_edges("p")}
    contents = {n.id: n.content for n in store.iter_nodes("p")}
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(w_min=w_min), deps)
    report = OperationReport(operator="t", namespace="p")
    op.apply("p", decisions, recalled, report)
    after = {e.id: e for e in store.iter_edges("p")}
    touched = {entry["edge"] for entry in report.log if "edge" in entry}
    for eid in touched:
        assert w_min <= after[eid].weight <= 1.0
        e = after[eid]
        assert e.src in recalled and e.dst in recalled
    assert set(before) <= set(after)  # nothing deleted
    assert replay(report.log, before) == {i: e.weight for i, e in after.items()}
    assert {n.id: n.content for n in store.iter_nodes("p")} == contents


node_spec = st.tuples(
    st.sampled_from(sorted(KIND_BY_SHORT.values())),
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=5),
    st.one_of(st.none(), st.integers(min_value=0, max_value=400)),
    st.booleans(),
)
plan_spec = st.builds(
    SeedPlan,
    mode=st.sampled_from(["query_match", "keywords_match", "hybrid_match"]),
    query=st.text(alphabet="abc xyz", max_size=12),
    keywords=st.lists(st.sampled_from([*WORDS, "zzz"]), max_size=3).map(tuple),
    node_types=st.one_of(st.none(), st.sets(st.sampled_from(sorted(KIND_BY_SHORT.values())),
                                            min_size=1).map(frozenset)),
    time_range=st.one_of(st.none(), st.integers(min_value=-50, max_value=500).map(
        lambda d: (T0 + timedelta(days=d), T0 + timedelta(days=d + 3)))),
)


@settings(max_examples=40, deadline=None)
@given(nodes=st.lists(node_spec, min_size=1, max_size=8), plans=st.lists(plan_spec, min_size=1,
                                                                         max_size=3),
       mode=st.sampled_from(["query_match", "keywords_match", "hybrid_match"]),
       threshold=weights, question=st.text(max_size=20))
def test_seeding_never_returns_empty_on_a_non_empty_namespace(
    nodes: list[Any], plans: list[SeedPlan], mode: Any, threshold: float, question: str,
) -> None:
    """Every seed mode returns at least one hit, without duplicates, from any
    non-empty namespace, whatever the plans' node types, time ranges and threshold."""
    deps = make_deps()
    out = []
    for i, (kind, words, day, embedded) in enumerate(nodes):
        text = " ".join(words)
        ts = T0 + timedelta(days=day) if day is not None else None
        vec = deps.embedder.embed([text])[0] if embedded else None
        out.append(Node(id=f"n{i}", kind=kind, content=text, description=text, time_start=ts,
                        time_end=ts, embedding=vec))
    deps.store.upsert_nodes("s", out)
    q = Query(text=question or "?", namespace="s", vector=deps.embedder.embed([question])[0])
    seeder = RealmSeeder(f"realm.{mode}", mode,
                         SeedConfig(score_threshold=threshold, max_seed_plans=3), deps)
    hits = seeder.seed(q, {STATE_PLANS: plans})
    assert hits
    assert len({h.node.id for h in hits}) == len(hits)


turn = st.tuples(st.sampled_from(["Ann", "Bob"]),
                 st.lists(st.sampled_from([*WORDS, "I", "love", "my", "yesterday", "went", "to",
                                           "Hi!", "Thanks!", "?", "work", "as", "a"]),
                          min_size=1, max_size=10).map(" ".join))


@settings(max_examples=25, deadline=None)
@given(batches=st.lists(st.lists(turn, min_size=1, max_size=4), min_size=1, max_size=4))
def test_node_content_never_changes_across_adds(batches: list[list[tuple[str, str]]]) -> None:
    """Across any sequence of adds, searches and feedback, a node's content never
    changes once written, and every event node keeps exactly one source turn."""
    mem = open_memory()
    first: dict[str, str] = {}
    n = 0
    for b, batch in enumerate(batches):
        obs = []
        for speaker, text in batch:
            obs.append(Observation(id=f"o{n}", text=text, speaker=speaker,
                                   timestamp=T0 + timedelta(minutes=n), session=str(b % 2)))
            n += 1
        mem.add(obs, namespace="c")
        result = mem.search("Ann dog love", namespace="c", k=5)
        mem.feedback(result, answer="Ann loves the dog")
        for node in mem.store.iter_nodes("c"):
            assert first.setdefault(node.id, node.content) == node.content
    for node in mem.store.iter_nodes("c", NodeFilter(kinds={"realm.event"})):
        assert len(node.sources) == 1
