"""Retrieval atoms (Algorithm 2): seeding, expansion, scoring, aggregation, control."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from realm_helpers import EXPANSION, SEED, SUFFICIENCY, reply

from labile._model import Edge, Hit, Node, Query, Reach, edge_id, superseded
from labile._protocols import Deps
from labile._vectors import cosine
from labile.plugin import ComponentSpec
from labile.testing import make_deps
from labile_llm import ScriptedLLM
from labile_realm.retrieve.aggregate import Aggregate, AggregateConfig
from labile_realm.retrieve.expand import ExpandConfig, RealmExpander, cosines
from labile_realm.retrieve.fusion import STATE_RELEVANCE
from labile_realm.retrieve.plan import (
    STATE_ACTIVATED,
    STATE_EXPANSION,
    STATE_FAILURES,
    STATE_PLANS,
    OfflinePlannerConfig,
    PlannerConfig,
    SeedPlan,
    TemporalDecay,
    parse_include,
    question_keywords,
    question_node_types,
    question_time_range,
)
from labile_realm.retrieve.score import (
    access_score,
    aggregate_score,
    edge_score,
    path_score,
    temporal_delta,
)
from labile_realm.retrieve.seed import RealmSeeder, SeedConfig
from labile_realm.retrieve.sufficiency import ControllerConfig

NS = "g"
T = datetime(2024, 3, 1, tzinfo=UTC)


def _day(n: int) -> datetime:
    return T + timedelta(days=n)


NODES = [
    ("a", "realm.event", "Ann adopted a dog named Max from the shelter", _day(0)),
    ("b", "realm.event", "Max the dog loves running on the beach", _day(9)),
    ("c", "realm.event", "Ann and Max went to the beach in May", _day(61)),
    ("d", "realm.fact", "Ann is allergic to cats", None),
    ("e", "realm.entity", "Max, Ann's dog", None),
    ("f", "realm.event", "Ann bakes bread every Sunday morning", _day(30)),
    ("g", "realm.episode", "Session about pets and the beach", _day(0)),
]
EDGES = [
    ("a", "realm.precedes", "b", 0.8, "the adoption came before the beach runs"),
    ("b", "realm.correlates", "c", 0.7, "dog at the beach"),
    ("e", "realm.contextualizes", "a", 0.6, "Max is the adopted dog"),
    ("a", "realm.contradicts", "d", 0.9, "dog lover versus cat allergy"),
    ("b", "realm.precedes", "f", 0.5, "then baking"),
    ("g", "realm.comprises", "a", 1.0, "session includes adoption"),
]


def graph(llm: ScriptedLLM | None = None, *, texts: dict[str, str] | None = None) -> Deps:
    """The test graph; ``texts`` replaces the text of some nodes by id."""
    deps = make_deps(llm=llm)
    nodes = [(i, k, (texts or {}).get(i, t), ts) for i, k, t, ts in NODES]
    vecs = deps.embedder.embed([t for _, _, t, _ in nodes])
    deps.store.upsert_nodes(NS, [
        Node(id=i, kind=k, content=t, description=t, time_start=ts, time_end=ts, embedding=v,
             sources=(f"T{i}",), attrs={"name": t})
        for (i, k, t, ts), v in zip(nodes, vecs, strict=True)
    ])
    deps.store.upsert_edges(NS, [
        Edge(id=edge_id(s, p, d), src=s, dst=d, predicate=p, weight=w, description=desc)
        for s, p, d, w, desc in EDGES
    ])
    return deps


def query(deps: Deps, text: str, *, as_of: datetime | None = None) -> Query:
    return Query(text=text, namespace=NS, k=10, as_of=as_of or _day(100),
                 vector=deps.embedder.embed([text])[0])


def seeder(deps: Deps, mode: str = "hybrid_match", **cfg: Any) -> RealmSeeder:
    return RealmSeeder(f"realm.{mode}", mode, SeedConfig(**cfg), deps)  # type: ignore[arg-type]


def plan_state(**plan: Any) -> dict[str, Any]:
    return {STATE_PLANS: [SeedPlan(**{"query": "dog beach", **plan})]}


# -- seeding ----------------------------------------------------------------------


def test_query_match_ranks_by_cosine() -> None:
    deps = graph()
    q = query(deps, "Ann adopted a dog named Max")
    hits = seeder(deps, "query_match").seed(q, plan_state(query=q.text, node_types=None))
    assert hits[0].node.id == "a"
    assert hits[0].scores["seed"] == pytest.approx(hits[0].scores["embedding"])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_keywords_match_scales_bm25_to_one() -> None:
    deps = graph()
    q = query(deps, "bread")
    hits = seeder(deps, "keywords_match").seed(q, plan_state(keywords=("bread", "Sunday")))
    assert hits[0].node.id == "f" and hits[0].score == pytest.approx(1.0)
    assert all("embedding" not in h.scores for h in hits)


def test_hybrid_is_weighted_sum_of_both_signals() -> None:
    deps = graph()
    q = query(deps, "dog at the beach")
    state = plan_state(query=q.text, keywords=("beach",), node_types=None)
    hits = seeder(deps, "hybrid_match", normalise_embedding="none").seed(q, state)
    for h in hits:
        assert h.score == pytest.approx(0.6 * max(h.scores["embedding"], 0)
                                        + 0.4 * h.scores["keyword"])
    assert {h.node.id for h in hits} >= {"b", "c"}


def test_node_type_filter_and_two_step_relaxation() -> None:
    deps = graph()
    q = query(deps, "dog")
    hits = seeder(deps).seed(q, plan_state(keywords=("dog",), node_types=frozenset({"realm.fact"})))
    # no fact mentions a dog, but the embedding signal still scores the fact: T holds
    assert {h.node.kind for h in hits} == {"realm.fact"}
    strict = seeder(deps, "keywords_match", score_threshold=0.9)
    hits = strict.seed(q, plan_state(keywords=("dog",), node_types=frozenset({"realm.fact"})))
    # keywords alone find no fact: threshold dropped, then T dropped
    assert hits and all(h.scores.get("relaxed") == 1.0 for h in hits)
    assert "realm.fact" not in {h.node.kind for h in hits}


def test_time_range_only_in_hybrid_mode_and_untimed_nodes_pass() -> None:
    deps = graph()
    q = query(deps, "beach")
    window = (_day(55), _day(70))
    hyb = seeder(deps, outside_window=0.0).seed(
        q, plan_state(keywords=("beach",), time_range=window))
    ids = {h.node.id for h in hyb}
    assert "c" in ids and "b" not in ids and "a" not in ids
    assert "d" in ids or "e" in ids  # nodes without a time are kept
    kw = seeder(deps, "keywords_match").seed(q, plan_state(keywords=("beach",), time_range=window))
    assert "b" in {h.node.id for h in kw}


def test_nodes_outside_a_short_time_range_fill_the_list_at_a_discount() -> None:
    """A window that leaves fewer than ``top_k`` seeds is topped up from outside it,
    each such seed scored at ``outside_window`` times its own fused score."""
    deps = graph()
    q = query(deps, "beach")
    window = (_day(55), _day(70))
    free = {h.node.id: h.score for h in seeder(deps).seed(q, plan_state(keywords=("beach",)))}
    hits = seeder(deps, outside_window=0.5).seed(
        q, plan_state(keywords=("beach",), time_range=window))
    outside = {h.node.id: h for h in hits if "outside_window" in h.scores}
    assert {"a", "b"} <= set(outside)
    assert "c" not in outside
    for node_id, h in outside.items():
        assert h.score == pytest.approx(0.5 * free[node_id])


def test_several_plans_merge_by_id_keeping_the_best() -> None:
    deps = graph()
    q = query(deps, "dog")
    state = {STATE_PLANS: [SeedPlan(query="dog", keywords=("bread",)),
                           SeedPlan(query="dog", keywords=("beach",))]}
    hits = seeder(deps, max_seed_plans=2).seed(q, state)
    ids = [h.node.id for h in hits]
    assert len(ids) == len(set(ids))
    assert {"f", "b", "c"} <= set(ids)
    assert {h.via.plan for h in hits} <= {"p1", "p2"}


def test_seeding_never_empty_even_with_impossible_constraints() -> None:
    deps = graph()
    q = query(deps, "zzzz qqqq")
    state = plan_state(keywords=("zzzz",), node_types=frozenset({"realm.fact"}),
                       time_range=(_day(500), _day(501)))
    assert seeder(deps, "keywords_match", score_threshold=1.0).seed(q, state)
    assert seeder(deps, score_threshold=1.0).seed(q, plan_state(
        keywords=("zzzz",), time_range=(_day(500), _day(501))))


def test_seeding_an_empty_namespace_is_empty() -> None:
    deps = graph()
    q = attrs.evolve(query(deps, "dog"), namespace="empty")
    assert seeder(deps).seed(q, plan_state()) == []


def test_offline_planner_derives_plan_from_question() -> None:
    assert question_keywords("What did Ann adopt in March 2024?")[:1] == ("Ann",)
    assert "what" not in {k.lower() for k in question_keywords("What did Ann adopt?")}
    # the frame of a question is not its subject: "kind of" / "these days" match any turn
    assert question_keywords("What kind of music does Ann make these days?") \
        == ("Ann", "music", "make")
    assert question_keywords("Does Ann climb any more?") == ("Ann", "climb")
    assert question_node_types("What does Ann like to cook?") >= {"realm.event", "realm.fact"}
    assert "realm.fact" not in question_node_types("When did Ann go to the beach?")
    assert "realm.entity" in question_node_types("Who adopted the dog?")
    lo, hi = question_time_range("What did Ann do in March 2024?", _day(100)) or (None, None)
    assert lo == datetime(2024, 3, 1, tzinfo=UTC) and hi == datetime(2024, 4, 1, tzinfo=UTC)
    assert question_time_range("What does Ann like?", _day(100)) is None


def test_seed_plan_is_shared_through_state() -> None:
    deps = graph()
    q = query(deps, "What did Ann adopt?")
    state: dict[str, Any] = {}
    seeder(deps).seed(q, state)
    (plan,) = state[STATE_PLANS]
    assert plan.query == q.text and "Ann" in plan.keywords


# -- scoring ---------------------------------------------------------------------


def test_score_formulas() -> None:
    assert edge_score(0.5, 0.5, 0.0) == pytest.approx(0.5)
    assert edge_score(1.0, 1.0, 0.3) == 1.0
    assert edge_score(0.0, 0.1, -0.5) == 0.0
    assert path_score([0.8]) == pytest.approx(0.8)
    assert path_score([0.8, 0.6]) == pytest.approx(0.67)
    assert path_score([0.9, 0.6, 0.6]) == pytest.approx(0.64)
    assert access_score(0.5, 1.0, 0.1) == pytest.approx(0.6 * 0.5 + 0.4 * 1.0 - 0.1)
    assert aggregate_score(0.5, 1.0) == pytest.approx(0.8 * 0.5 + 0.2)


def test_temporal_delta_modes() -> None:
    node = Node(id="n", kind="realm.event", time_start=_day(40), time_end=_day(40))
    untimed = Node(id="m", kind="realm.event")
    window = dict(start=_day(0), end=_day(1), delta=timedelta(days=7))
    assert temporal_delta(node, None) == 0.0
    assert temporal_delta(node, TemporalDecay(**window, mode="hard")) is None
    soft = temporal_delta(node, TemporalDecay(**window, mode="soft"))
    assert soft is not None and -0.5 <= soft < 0
    inside = Node(id="i", kind="realm.event", time_start=_day(5), time_end=_day(5))
    assert temporal_delta(inside, TemporalDecay(**window, mode="hard")) == 0.0
    assert temporal_delta(untimed, TemporalDecay(**window, missing_time_mode="drop")) is None
    assert temporal_delta(untimed, TemporalDecay(**window, missing_time_mode="keep")) == -0.1


# -- expansion ---------------------------------------------------------------------


def _seed_hit(deps: Deps, node_id: str, score: float = 0.9) -> Hit:
    (node,) = deps.store.get_nodes(NS, [node_id])
    return Hit(node=node, score=score, via=Reach(atom="test", plan="p1"), scores={"seed": score})


def expander(deps: Deps, mode: str = "subgraph_beam", **cfg: Any) -> RealmExpander:
    base = {"score_threshold": 0.0, "max_rounds": 1, "activation": "edge"}
    return RealmExpander(f"realm.{mode}", mode, ExpandConfig(**{**base, **cfg}), deps)  # type: ignore[arg-type]


def _expand(deps: Deps, exp: RealmExpander, seeds: list[str], text: str = "dog",
            state: dict[str, Any] | None = None) -> dict[str, Hit]:
    hits = [_seed_hit(deps, s) for s in seeds]
    out = exp.expand(query(deps, text), hits, state if state is not None else {})
    return {h.node.id: h for h in out}


def test_beam_reaches_neighbours_and_records_how() -> None:
    deps = graph()
    out = _expand(deps, expander(deps, conflict_inhibit=False, beam_hops=1), ["a"])
    assert {"b", "d", "e", "g"} <= set(out)
    b = out["b"]
    assert b.via.stage == "expand" and b.via.path == ("a", "b") and b.via.hop == 1
    assert b.via.edges == (edge_id("a", "realm.precedes", "b"),)
    assert {"edge", "path", "access", "eq8"} <= set(b.scores)


def test_edges_read_as_their_target_need_no_embedder_call() -> None:
    """With ``edge_meaning = "target"`` expansion embeds no edge description: the
    semantic terms read the reached node's stored embedding."""
    deps = graph()
    calls: list[int] = []
    real = deps.embedder.embed

    def counting(texts: Any) -> Any:
        calls.append(len(texts))
        return real(texts)

    exp = expander(deps, conflict_inhibit=False, beam_hops=1, edge_meaning="target")
    object.__setattr__(deps.embedder, "embed", counting)
    out = _expand(deps, exp, ["a"])
    assert {"b", "e", "g"} <= set(out)
    assert calls == [1]  # the query only (built by `query`), never a description


def test_own_relevance_scores_reached_nodes_on_the_seed_scale() -> None:
    """With ``own_relevance`` a reached node's activation is the seeder's fused score of
    that node times ``1 − ρ + ρ·edge score``, whatever the edge description says."""
    deps = graph()
    q = query(deps, "beach")
    state = plan_state(keywords=("beach",))
    seeds = seeder(deps).seed(q, state)
    fusion = state[STATE_RELEVANCE]
    exp = expander(deps, conflict_inhibit=False, beam_hops=1, own_relevance=True,
                   support_weight=0.5)
    start = [h for h in seeds if h.node.id == "a"] or [_seed_hit(deps, "a")]
    out = exp.expand(q, start, state)
    reached = [h for h in out if h.via.stage == "expand"]
    assert reached
    for h in reached:
        own = fusion.score(h.node)[0]
        assert h.scores["access"] == pytest.approx(own * (0.5 + 0.5 * h.scores["edge"]))


def test_beam_respects_the_node_budget() -> None:
    deps = graph()
    out = _expand(deps, expander(deps, subgraph_max_nodes=2, conflict_inhibit=False), ["a"])
    assert len(out) == 3


def test_conflict_inhibition_drops_contradicts() -> None:
    deps = graph()
    assert "d" not in _expand(deps, expander(deps, conflict_inhibit=True), ["a"])
    assert "d" in _expand(deps, expander(deps, conflict_inhibit=False), ["a"])


def test_layer_predicate_direction_filter() -> None:
    deps = graph()
    fwd = _expand(deps, expander(deps, include=("causal/precedes/forward",), beam_hops=1), ["b"])
    assert set(fwd) == {"b", "f"}
    back = _expand(deps, expander(deps, include=("causal//backward",), beam_hops=1), ["b"])
    assert set(back) == {"b", "a"}
    assoc = _expand(deps, expander(deps, include=("associative",), beam_hops=1), ["b"])
    assert set(assoc) == {"b", "c"}
    with pytest.raises(ValueError, match="not in layer"):
        parse_include(["causal/correlates"])
    with pytest.raises(ValueError, match="unknown layer"):
        parse_include(["spatial"])


def test_score_threshold_drops_weak_candidates() -> None:
    deps = graph()
    out = _expand(deps, expander(deps, score_threshold=0.99), ["a"])
    assert set(out) == {"a"}


def test_retired_edges_are_never_followed() -> None:
    deps = graph()
    (e,) = deps.store.get_edges(NS, [edge_id("b", "realm.precedes", "f")])
    deps.store.upsert_edges(NS, [attrs.evolve(e, weight=0.0, attrs={"retired": True})])
    assert "f" not in _expand(deps, expander(deps, beam_hops=1), ["b"])


def test_temporal_decay_from_the_plan() -> None:
    deps = graph()
    state = {STATE_PLANS: [SeedPlan(query="dog", time_range=(_day(0), _day(1)))]}
    hard = expander(deps, decay_mode="hard", decay_days=1.0, beam_hops=1,
                    missing_time_mode="drop")
    out = _expand(deps, hard, ["b"], state=state)
    assert set(out) == {"b", "a"}
    soft = expander(deps, decay_mode="soft", decay_days=1.0, beam_hops=1)
    out = _expand(deps, soft, ["b"], state={STATE_PLANS: state[STATE_PLANS]})
    assert {"a", "c", "f"} <= set(out)
    assert out["c"].scores["eq8"] < out["a"].scores["eq8"] + 0.5


def test_path_search_keeps_top_paths_and_scores_them() -> None:
    deps = graph()
    # seeded from an entity, which the question-aware policy would expand by beam
    exp = expander(deps, "path_search", path_max_depth=2, path_top_k=1,
                   policy=ComponentSpec(type="realm.expansion_policy.offline", config=PlannerConfig(
                       planning=OfflinePlannerConfig(choose_mode=False))))
    out = _expand(deps, exp, ["e"], text="adoption beach")
    reached = [h for h in out.values() if h.via.stage == "expand"]
    assert sorted(len(h.via.path) for h in reached) == [2, 3]  # one path kept per hop
    two = next(h for h in reached if len(h.via.path) == 3)
    one = next(h for h in reached if len(h.via.path) == 2)
    assert two.via.path[:2] == one.via.path
    assert one.scores["path"] == pytest.approx(one.scores["hop"])
    assert two.scores["path"] == pytest.approx((one.scores["hop"] + two.scores["hop"]) / 2 - 0.03)
    assert two.via.hop == 2


def test_candidates_already_reached_are_not_added_again() -> None:
    deps = graph()
    out = _expand(deps, expander(deps, beam_hops=1), ["a", "b"])
    assert out["b"].via.stage != "expand" and out["a"].via.stage != "expand"


def test_accumulate_mode_reinforces_convergent_nodes() -> None:
    deps = graph()
    exp = expander(deps, activation="accumulate", echo_weight=1.0, beam_hops=1)
    hits = [_seed_hit(deps, "a", 0.9), _seed_hit(deps, "b", 0.2)]
    out = {h.node.id: h for h in exp.expand(query(deps, "dog"), hits, {})}
    assert out["b"].scores["seed"] > 0.2 and out["b"].scores.get("echo", 0) > 0


def test_offline_controller_stops_when_evidence_stops_changing() -> None:
    deps = graph()
    state: dict[str, Any] = {}
    exp = expander(deps, max_rounds=5, subgraph_max_nodes=1, beam_hops=1)
    _expand(deps, exp, ["f"], state=state)
    assert 1 <= state[STATE_EXPANSION]["rounds"] < 5


def test_zero_rounds_means_no_expansion() -> None:
    deps = graph()
    out = _expand(deps, expander(deps, max_rounds=0), ["a"])
    assert set(out) == {"a"}


# -- LLM controller, policy, planner ------------------------------------------------


def _llm_expander(llm: ScriptedLLM, **cfg: Any) -> tuple[Deps, RealmExpander]:
    deps = graph(llm)
    return deps, expander(deps, controller="llm", policy="llm", **cfg)


def test_llm_controller_enough_stops_at_once() -> None:
    llm = ScriptedLLM(rules=[(SUFFICIENCY, reply({"is_enough": True, "nodes_to_expand": []}))])
    deps, exp = _llm_expander(llm, max_rounds=3)
    out = _expand(deps, exp, ["a"])
    assert set(out) == {"a"}
    assert [c.operation for c in llm.calls] == ["realm.sufficiency"]


def test_llm_policy_action_is_used() -> None:
    action = {"seed_id": 1, "expansion_mode": "subgraph_beam",
              "layer_predicate_include": [{"layer": "causal", "predicate": "precedes",
                                           "direction": "forward"}],
              "score_threshold": 0.0, "subgraph_max_nodes": 3, "temporal_decay": None,
              "conflict_inhibit": True, "reasoning": "what came after the adoption"}
    llm = ScriptedLLM(rules=[
        (SUFFICIENCY, reply({"is_enough": False, "nodes_to_expand": [1]})),
        (EXPANSION, reply({"actions": [action]})),
    ])
    deps, exp = _llm_expander(llm, max_rounds=1, beam_hops=1)
    out = _expand(deps, exp, ["a"])
    assert set(out) == {"a", "b"}


@pytest.mark.parametrize("bad", [
    "not json",
    reply({"actions": [{"seed_id": 9, "expansion_mode": "subgraph_beam",
                        "layer_predicate_include": [], "score_threshold": 0.0,
                        "conflict_inhibit": True, "reasoning": "x"}]}),
    reply({"actions": [{"seed_id": 1, "expansion_mode": "subgraph_beam",
                        "layer_predicate_include": [{"layer": "causal", "predicate": "correlates"}],
                        "score_threshold": 0.0, "conflict_inhibit": True, "reasoning": "x"}]}),
    reply({"actions": [{"seed_id": 1, "expansion_mode": "teleport",
                        "layer_predicate_include": [], "score_threshold": 0.0,
                        "conflict_inhibit": True, "reasoning": "x"}]}),
])
def test_invalid_policy_falls_back_to_offline_and_is_counted(bad: str) -> None:
    llm = ScriptedLLM(rules=[
        (SUFFICIENCY, reply({"is_enough": False, "nodes_to_expand": [1]})),
        (EXPANSION, bad),
    ])
    deps, exp = _llm_expander(llm, max_rounds=1, beam_hops=1, conflict_inhibit=False)
    state: dict[str, Any] = {}
    out = _expand(deps, exp, ["a"], state=state)
    assert state[STATE_FAILURES] == {"expansion": 1}
    assert {"b", "e", "g"} <= set(out)


@pytest.mark.parametrize("bad", [
    "garbage", reply({"is_enough": "maybe", "nodes_to_expand": []}),
])
def test_invalid_controller_reply_uses_offline_decision(bad: str) -> None:
    llm = ScriptedLLM(rules=[(SUFFICIENCY, bad), (EXPANSION, "nope")])
    deps, exp = _llm_expander(llm, max_rounds=1, beam_hops=1)
    state: dict[str, Any] = {}
    out = _expand(deps, exp, ["a"], state=state)
    assert state[STATE_FAILURES]["sufficiency"] == 1
    assert len(out) > 1


def test_unknown_frontier_ids_fall_back_to_best_unexpanded() -> None:
    llm = ScriptedLLM(rules=[
        (SUFFICIENCY, reply({"is_enough": False, "nodes_to_expand": []})),
        (EXPANSION, "nope"),
    ])
    deps, exp = _llm_expander(llm, max_rounds=1, beam_hops=1)
    out = _expand(deps, exp, ["a"])
    assert len(out) > 1


def test_llm_seed_planner_valid_and_invalid() -> None:
    plan = {"plans": [{"mode": "keywords_match", "query": "bread", "keywords": ["bread"],
                       "allowed_node_types": ["event"],
                       "time_range": ["2024-03-01", "2024-04-30"]}]}
    llm = ScriptedLLM(rules=[(SEED, reply(plan))])
    deps = graph(llm)
    s = RealmSeeder("realm.hybrid_match", "hybrid_match",
                    SeedConfig(planner="llm", mode="plan"), deps)
    state: dict[str, Any] = {}
    hits = s.seed(query(deps, "What does Ann bake?"), state)
    assert hits[0].node.id == "f"
    (p,) = state[STATE_PLANS]
    assert p.mode == "keywords_match" and p.node_types == frozenset({"realm.event"})
    assert p.time_range is not None and p.time_range[0] == datetime(2024, 3, 1, tzinfo=UTC)
    bad = ScriptedLLM(rules=[(SEED, reply({"plans": [{**plan["plans"][0],
                                                      "allowed_node_types": ["memory"]}]}))])
    deps = graph(bad)
    s = RealmSeeder("realm.hybrid_match", "hybrid_match", SeedConfig(planner="llm"), deps)
    state = {}
    assert s.seed(query(deps, "What does Ann bake?"), state)
    assert state[STATE_FAILURES] == {"seed_plan": 1}


def test_llm_seed_planner_too_many_plans_is_rejected() -> None:
    one = {"mode": "hybrid_match", "query": "x", "keywords": [], "allowed_node_types": []}
    llm = ScriptedLLM(rules=[(SEED, reply({"plans": [one, one]}))])
    deps = graph(llm)
    state: dict[str, Any] = {}
    RealmSeeder("realm.hybrid_match", "hybrid_match", SeedConfig(planner="llm"), deps).seed(
        query(deps, "x"), state)
    assert state[STATE_FAILURES] == {"seed_plan": 1}


# -- aggregation -------------------------------------------------------------------


def test_aggregate_applies_eq9_and_records_activated_subgraph() -> None:
    deps = graph()
    q = query(deps, "dog beach")
    hits = [_seed_hit(deps, i, s) for i, s in [("a", 0.9), ("b", 0.5), ("e", 0.95), ("g", 0.99)]]
    state: dict[str, Any] = {}
    # no lean towards the latest: the scores are eq. 9's ("dog beach" reads as present)
    config = AggregateConfig(top_k=3, present_recency_weight=0.0)
    out = Aggregate(config, deps).filter(attrs.evolve(q, k=3), hits, state)
    assert [h.node.id for h in out][:2] == ["a", "b"]  # evidence kinds before entity/episode
    assert len(out) == 3
    for h in out:
        sim = h.scores["similarity"]
        assert h.scores["aggregate"] == pytest.approx(0.8 * h.scores["seed"] + 0.2 * sim)
        assert h.score <= h.scores["aggregate"] + 1e-12
    # the entity outscored both events but ranks after them: its score shown is capped
    assert [h.score for h in out] == sorted((h.score for h in out), reverse=True)
    sub = state[STATE_ACTIVATED]
    assert sub.node_ids == tuple(h.node.id for h in out)
    assert {(e.src, e.dst) for e in sub.edges} == {("a", "b"), ("e", "a")}


def test_aggregate_demotes_hits_that_add_no_new_source() -> None:
    deps = graph()
    hits = [_seed_hit(deps, "a", 0.9), _seed_hit(deps, "b", 0.8)]
    dup = Hit(node=attrs.evolve(hits[0].node, id="a2"), score=0.85, via=Reach(atom="t"),
              scores={"seed": 0.85})
    config = AggregateConfig(present_recency_weight=0.0)  # scores as eq. 9 gives them
    out = Aggregate(config, deps).filter(query(deps, "dog"), [*hits, dup], {})
    assert [h.node.id for h in out] == ["a", "b", "a2"]


def _session_hit(deps: Deps, node_id: str, score: float, session: str | None) -> Hit:
    hit = _seed_hit(deps, node_id, score)
    node = attrs.evolve(hit.node, attrs={**hit.node.attrs, "session": session},
                        sources=(f"T{node_id}",))
    return attrs.evolve(hit, node=node)


def _spoken(deps: Deps, node_id: str, score: float, speaker: str) -> Hit:
    hit = _seed_hit(deps, node_id, score)
    return attrs.evolve(hit, node=attrs.evolve(
        hit.node, attrs={**hit.node.attrs, "speaker": speaker}))


@pytest.mark.parametrize("latest_first", [True, False])
def test_the_agents_own_turns_rank_below_the_peoples_unless_asked_about(
        latest_first: bool) -> None:
    """The assistant's advice shares a question's words but is not what happened: it
    loses ``agent_penalty`` against the person's own turn; a question to the agent
    ("What did you suggest?") keeps the plain order; 0 turns it off."""
    deps = _PROP_DEPS

    def order(text: str, **cfg: Any) -> list[str]:
        hits = [_spoken(deps, "a", 0.9, "assistant"), _spoken(deps, "b", 0.8, "Ann")]
        config = AggregateConfig(demote_covered=False, latest_first=latest_first, **cfg)
        out = Aggregate(config, deps).filter(query(deps, text), hits, {})
        return [h.node.id for h in out if h.node.id in ("a", "b")]

    assert order("When did Ann adopt the dog?") == ["b", "a"]
    assert order("What did you suggest about the dog?") == ["a", "b"]
    assert order("When did Ann adopt the dog?", agent_penalty=0.0) == ["a", "b"]


def test_session_penalty_lets_other_sessions_in_and_keeps_scores_ranked() -> None:
    """Two close hits of session 1 and a slightly weaker one of session 2: with the
    penalty, session 2 takes the second place; without it, the order is the score's."""
    deps = graph()

    def ranked(penalty: float, pool: int = 30, when: str = "all",
               text: str = "dog beach") -> list[Hit]:
        hits = [_session_hit(deps, "a", 0.90, "1"), _session_hit(deps, "b", 0.88, "1"),
                _session_hit(deps, "c", 0.85, "2"), _session_hit(deps, "f", 0.40, None)]
        cfg = AggregateConfig(alpha=1.0, session_penalty=penalty, diversity_pool=pool,
                              diversity_for=when,  # type: ignore[arg-type]
                              present_recency_weight=0.0)
        return Aggregate(cfg, deps).filter(query(deps, text), hits, {})

    assert [h.node.id for h in ranked(0.0)] == ["a", "b", "c", "f"]
    diverse = ranked(0.05)
    assert [h.node.id for h in diverse] == ["a", "c", "b", "f"]
    assert [h.score for h in diverse] == sorted((h.score for h in diverse), reverse=True)
    assert diverse[2].scores["aggregate"] == pytest.approx(0.88)
    # a penalty too small to matter, or a pool of one, keeps the score order
    assert [h.node.id for h in ranked(0.01)] == ["a", "b", "c", "f"]
    assert [h.node.id for h in ranked(0.05, pool=1)] == ["a", "b", "c", "f"]
    # by default only questions asking for several things are diversified
    assert [h.node.id for h in ranked(0.05, when="many", text="Where did Ann go?")] \
        == ["a", "b", "c", "f"]
    assert [h.node.id for h in ranked(0.05, when="many", text="Where has Ann been?")] \
        == ["a", "c", "b", "f"]


@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.sampled_from(["1", "2", "3", None])),
                min_size=1, max_size=12), st.floats(0.0, 1.0))
@settings(max_examples=40, deadline=None)
def test_aggregate_output_is_a_permutation_with_falling_scores(
    spec: list[tuple[float, str | None]], penalty: float,
) -> None:
    """Whatever the scores, sessions and penalty: every hit comes out once (up to
    top-k), and the scores shown never rise down the list."""
    deps = _PROP_DEPS
    ids = [n[0] for n in NODES if n[1] in ("realm.event", "realm.fact")]
    hits = [_session_hit(deps, ids[i % len(ids)], s, sess) for i, (s, sess) in enumerate(spec)]
    hits = [attrs.evolve(h, node=attrs.evolve(h.node, id=f"{h.node.id}{i}",
                                              sources=(f"S{i}",))) for i, h in enumerate(hits)]
    cfg = AggregateConfig(top_k=20, session_penalty=penalty)
    out = Aggregate(cfg, deps).filter(query(deps, "dog beach"), hits, {})
    assert sorted(h.node.id for h in out) == sorted(h.node.id for h in hits)
    assert all(b.score <= a.score for a, b in itertools.pairwise(out))


_PROP_DEPS = graph()


def _replaced_graph(**texts: str) -> Deps:
    """``graph(texts=texts)`` where event ``c`` (day 61) replaced event ``f`` (day 30)."""
    deps = graph(texts=texts)
    (f,) = deps.store.get_nodes(NS, ["f"])
    deps.store.upsert_nodes(NS, [superseded(f, "c", _day(61))])
    deps.store.upsert_edges(NS, [Edge(id=edge_id("c", "realm.supersedes", "f"), src="c",
                                      dst="f", predicate="realm.supersedes", weight=0.9)])
    return deps


def _ranked(deps: Deps, text: str, scores: dict[str, float], *, as_of: datetime | None = None,
            latest_first: bool = True) -> list[str]:
    hits = [_seed_hit(deps, i, s) for i, s in scores.items()]
    # the validity order alone (the recency lean is tested on its own below)
    cfg = AggregateConfig(demote_covered=False, latest_first=latest_first, recency_weight=0.0)
    out = Aggregate(cfg, deps).filter(query(deps, text, as_of=as_of), hits, {})
    return [h.node.id for h in out if h.node.id in ("c", "f")]


def test_now_questions_rank_what_replaced_a_hit_above_it() -> None:
    """A question about now (a cue, or no time cue at all) gets the replacing node
    first even when it scored lower; the replaced one stays right below it."""
    deps = _replaced_graph()
    for text in ("What does Ann bake now?", "What does Ann bake these days?",
                 "Does Ann still bake?", "What does Ann bake?"):
        assert _ranked(deps, text, {"f": 0.9, "c": 0.5}) == ["c", "f"], text
    assert _ranked(deps, "What does Ann bake now?", {"f": 0.9, "c": 0.5},
                   latest_first=False) == ["f", "c"]


def test_a_replacement_about_another_kind_of_value_is_not_lifted() -> None:
    """A turn can tell two things ("I'm a pharmacist … and I do keto"): what replaced
    it for one of them ("I'm done with keto") is not lifted above it for a question
    about the other, nor shown first for a question about then; it still is for a
    question about its own kind, and a replacement of no known kind still is."""
    deps = _replaced_graph(c="I'm done with keto, normal food")
    scores = {"f": 0.9, "c": 0.5}
    assert _ranked(deps, "What does Ann do for work now?", scores) == ["f", "c"]
    assert _ranked(deps, "What is Ann's diet now?", scores) == ["c", "f"]
    assert _ranked(deps, "What did Ann use to do for work?", {"f": 0.5, "c": 0.9}) \
        == ["c", "f"]
    assert _ranked(deps, "What did Ann use to eat?", {"f": 0.5, "c": 0.9}) == ["f", "c"]
    plain = _replaced_graph()  # "went to the beach" talks about no known kind
    assert _ranked(plain, "What does Ann do for work now?", scores) == ["c", "f"]


def test_now_questions_fetch_the_replacing_node_when_it_was_not_found() -> None:
    deps = _replaced_graph()
    out = Aggregate(AggregateConfig(), deps).filter(
        query(deps, "What does Ann bake now?"), [_seed_hit(deps, "f", 0.9)], {})
    assert [h.node.id for h in out][:2] == ["c", "f"]
    assert out[0].via.path == ("f", "c") and out[0].is_current and not out[1].is_current
    assert out[1].superseded_by == ("c",)


def test_present_questions_without_a_cue_fetch_what_replaced_a_hit_when_asked_to() -> None:
    """No cue of time, but a replaced hit: the question is about something that
    changed, so what replaced it is fetched with ``fetch_present``; without it
    (the default), only what the search found is reordered."""
    deps = _replaced_graph()
    out = Aggregate(AggregateConfig(fetch_present=True), deps).filter(
        query(deps, "What does Ann bake?"), [_seed_hit(deps, "f", 0.9)], {})
    assert [h.node.id for h in out][:2] == ["c", "f"]
    out = Aggregate(AggregateConfig(), deps).filter(
        query(deps, "What does Ann bake?"), [_seed_hit(deps, "f", 0.9)], {})
    assert [h.node.id for h in out] == ["f"]


def test_then_questions_rank_the_replaced_node_above_what_replaced_it() -> None:
    deps = _replaced_graph()
    for text in ("What did Ann use to bake?", "What did Ann bake before?",
                 "What did Ann bake previously?"):
        assert _ranked(deps, text, {"f": 0.5, "c": 0.9}) == ["f", "c"], text
    out = Aggregate(AggregateConfig(), deps).filter(
        query(deps, "What did Ann use to bake?"), [_seed_hit(deps, "c", 0.9)], {})
    assert [h.node.id for h in out][:2] == ["f", "c"]


def test_questions_about_a_time_or_an_event_keep_the_score_order() -> None:
    deps = _replaced_graph()
    for text in ("When did Ann start baking?", "What did Ann bake?"):
        assert _ranked(deps, text, {"f": 0.9, "c": 0.5}) == ["f", "c"], text
        assert _ranked(deps, text, {"f": 0.5, "c": 0.9}) == ["c", "f"], text


def test_questions_that_say_now_or_then_lean_to_the_latest_or_earliest() -> None:
    """No supersession recorded between ``a`` (day 0) and ``b`` (day 9): a question
    that says "now" leans to the later, "used to" to the earlier; a plain
    present-tense one and a question about a time keep the score order."""
    deps = graph()

    def first(text: str, scores: dict[str, float], *, lean: bool = True) -> str:
        hits = [_seed_hit(deps, i, s) for i, s in scores.items()]
        cfg = AggregateConfig(demote_covered=False, recency_weight=1.0 if lean else 0.0)
        out = Aggregate(cfg, deps).filter(query(deps, text), hits, {})
        return next(h.node.id for h in out if h.node.id in scores)

    assert first("Where does Max run these days?", {"a": 0.8, "b": 0.75}) == "b"
    assert first("Where did Max use to run?", {"a": 0.75, "b": 0.8}) == "a"
    for text in ("Where does Max run?", "When did Max run on the beach?"):
        for scores in ({"a": 0.8, "b": 0.75}, {"a": 0.75, "b": 0.8}):
            assert first(text, scores) == first(text, scores, lean=False), text
    # far below the best, a late hit gains nothing
    assert first("Where does Max run these days?", {"a": 0.9, "b": -0.5}) == "a"


def test_a_replacement_after_as_of_is_not_applied() -> None:
    """Asked as of day 40, before ``c`` replaced ``f``: ``f`` is current then."""
    deps = _replaced_graph()
    assert _ranked(deps, "What does Ann bake now?", {"f": 0.9, "c": 0.5},
                   as_of=_day(40)) == ["f", "c"]


def test_configs_reject_unknown_kinds() -> None:
    with pytest.raises(ValueError):
        AggregateConfig(evidence_kinds=("memory",))
    with pytest.raises(ValueError):
        SeedConfig(node_types=("thing",))
    with pytest.raises(ValueError):
        ControllerConfig(frontier_kinds=("thing",))


def test_keyword_scores_minmax_and_participant_names_dropped() -> None:
    deps = graph()
    # two events naming their speaker, a third naming someone else
    nodes = [
        Node(id=f"p{i}", kind="realm.event", content=t, description=t,
             embedding=deps.embedder.embed([t])[0], attrs={"speaker": "Zoe", "listener": "Ann"})
        for i, t in enumerate(["Zoe said the kayak trip was fun", "Zoe said the kayak broke",
                               "Zoe said nothing about boats"])
    ]
    deps.store.upsert_nodes(NS, nodes)
    q = query(deps, "Zoe kayak")
    s = seeder(deps, normalise_keywords="minmax")
    hits = s.seed(q, plan_state(query=q.text, keywords=("Zoe", "kayak"), node_types=None))
    kw = {h.node.id: h.scores["keyword"] for h in hits}
    assert max(kw.values()) == pytest.approx(1.0)
    assert s._keyword_text(NS, SeedPlan(query="q", keywords=("Zoe", "kayak")), q) == "kayak"
    keep = seeder(deps, drop_participants=False)
    keep.seed(q, plan_state(query=q.text, keywords=("Zoe", "kayak"), node_types=None))
    assert keep._keyword_text(NS, SeedPlan(query="q", keywords=("Zoe", "kayak")), q) == "Zoe kayak"


def test_question_time_range_keeps_both_readings_of_a_bare_month() -> None:
    """Asked in May, "in September" may be last September or the next one."""
    from datetime import UTC, datetime

    lo, hi = question_time_range("What is Maya doing in September?",
                                 datetime(2024, 5, 14, tzinfo=UTC)) or (None, None)
    assert lo == datetime(2023, 9, 1, tzinfo=UTC) and hi == datetime(2024, 10, 1, tzinfo=UTC)


def test_a_time_that_closes_a_span_opens_the_question_range_to_the_past() -> None:
    """ "As of December" asks what held by then: every earlier turn is in range."""
    from datetime import UTC, datetime

    asked = datetime(2024, 1, 6, tzinfo=UTC)
    lo, hi = question_time_range("How many pets did Andrew have, as of September 2023?",
                                 asked) or (None, None)
    assert hi == datetime(2023, 10, 1, tzinfo=UTC)
    assert lo is not None and lo <= datetime(1930, 1, 1, tzinfo=UTC)
    lo, _ = question_time_range("What had he finished by March 2023?", asked) or (None, None)
    assert lo is not None and lo < datetime(2000, 1, 1, tzinfo=UTC)
    # a place that merely precedes the time is not a deadline
    lo, _ = question_time_range("What did he do by the lake in March 2023?", asked) or (None, None)
    assert lo == datetime(2023, 3, 1, tzinfo=UTC)
    # the year after a cued month belongs to it ("during September 2023", not the next one)
    lo, hi = question_time_range("Where might Tim be during September 2023?", asked) or (None, None)
    assert (lo, hi) == (datetime(2023, 9, 1, tzinfo=UTC), datetime(2023, 10, 1, tzinfo=UTC))


def test_question_time_range_follows_the_question_tense() -> None:
    from datetime import UTC, datetime

    asked = datetime(2024, 5, 14, tzinfo=UTC)
    past = question_time_range("What did Maya do in September?", asked)
    future = question_time_range("What will Maya do in September?", asked)
    assert past == (datetime(2023, 9, 1, tzinfo=UTC), datetime(2023, 10, 1, tzinfo=UTC))
    assert future == (datetime(2024, 9, 1, tzinfo=UTC), datetime(2024, 10, 1, tzinfo=UTC))


@settings(max_examples=50, deadline=None)
@given(rows=st.lists(st.lists(st.floats(-10, 10), min_size=4, max_size=4), min_size=1,
                     max_size=6),
       v=st.lists(st.floats(-10, 10), min_size=4, max_size=4))
def test_batched_cosines_equal_the_kernel_cosine(rows: list[list[float]], v: list[float]) -> None:
    """For any vectors (zero ones included), the batched cosines of expansion equal
    `labile.plugin.cosine` of each vector with the query, key by key."""
    vectors = {f"k{i}": np.asarray(r, dtype=np.float32) for i, r in enumerate(rows)}
    query_vec = np.asarray(v, dtype=np.float32)
    got = cosines(vectors, query_vec)
    for key, vec in vectors.items():
        assert got[key] == pytest.approx(cosine(vec, query_vec), abs=1e-5)
