"""The offline planner reads the question: cues, people, parts, layers, beam or path."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile._model import (
    Edge,
    Feedback,
    Hit,
    Node,
    Query,
    Reach,
    RetrievalResult,
    Subgraph,
    edge_id,
)
from labile.testing import make_deps
from labile_realm.reconsolidate import RealmReconsolidator, ReconsolidateConfig
from labile_realm.retrieve.expand import ExpandConfig, RealmExpander
from labile_realm.retrieve.plan import (
    ExpansionAction,
    LayerFilter,
    OfflineExpansionPolicy,
    OfflinePlanner,
    OfflinePlannerConfig,
)
from labile_realm.retrieve.question import question_parts, read_question
from labile_realm.schema import ENTITY, EVENT, PREDICATES_BY_LAYER

AS_OF = datetime(2024, 6, 1, tzinfo=UTC)


def q(text: str) -> Query:
    return Query(text=text, namespace="n", as_of=AS_OF)


@pytest.mark.parametrize(("text", "time", "cause"), [
    ("Why did Jon start his dance studio?", False, True),
    ("When did Gina go to Paris?", True, False),
    ("What inspired Ana to paint in June?", True, True),
    ("What does Ana like to eat?", False, False),
    ("What led to Ben quitting his job?", False, True),
])
def test_cues(text: str, time: bool, cause: bool) -> None:
    r = read_question(text)
    assert (r.asks_time, r.asks_cause) == (time, cause)


def test_layers_follow_the_cues_and_exist_in_the_schema() -> None:
    assert read_question("Why did Jon quit?").layers == ("causal", "logical")
    assert read_question("When did Jon quit?").layers == ("causal",)
    assert read_question("What does Jon like?").layers == ()
    for text in ("Why did Jon quit?", "When did Jon quit?"):
        assert set(read_question(text).layers) <= set(PREDICATES_BY_LAYER)


def test_parts_of_a_question() -> None:
    assert question_parts("When did Gina go to Paris and what did she buy there?") == (
        "When did Gina go to Paris", "what did she buy there?")
    assert question_parts("What did Ana cook? Where did she eat it?") == (
        "What did Ana cook?", "Where did she eat it?")
    # names joined by "and" are not two questions unless the question compares them
    assert question_parts("Did Ana and Ben go hiking?") == ("Did Ana and Ben go hiking?",)
    both = question_parts("What do Ana and Ben both like?", ("Ana", "Ben"))
    assert both == ("What do Ana both like?", "What do Ben both like?")


@given(st.text(max_size=200))
def test_parts_are_few_and_never_empty(text: str) -> None:
    """Any text splits into one to three non-empty parts."""
    parts = question_parts(text)
    assert 1 <= len(parts) <= 3
    assert all(p.strip() for p in parts) or parts == (text,)


def test_one_plan_per_part_with_the_names_restored() -> None:
    planner = OfflinePlanner()
    text = "When did Gina go to Paris and what did she buy there?"
    plans = planner.seed_plans(q(text), max_plans=3, state={})
    assert [p.query for p in plans] == [text, "When did Gina go to Paris",
                                        "Gina Paris: what did she buy there?"]
    assert all(p.anchors == ("Gina",) for p in plans)
    assert "Gina" in plans[2].keywords and "Paris" in plans[2].keywords
    assert len(planner.seed_plans(q(text), max_plans=1, state={})) == 1
    plain = OfflinePlanner(OfflinePlannerConfig(split_parts=False, anchor_people=False))
    (only,) = plain.seed_plans(q(text), max_plans=3, state={})
    assert only.anchors == ()


def test_expansion_action_per_node() -> None:
    policy = OfflineExpansionPolicy()
    plan = OfflinePlanner().seed_plans(q("Why did Jon quit?"), 1, {})[0]
    defaults = ExpansionAction()
    event = Hit(node=Node(id="e", kind=EVENT), score=1.0, via=Reach(atom="s"))
    entity = Hit(node=Node(id="j", kind=ENTITY), score=1.0, via=Reach(atom="s"))
    acts = policy.actions(q("Why did Jon quit?"), ["e", "j"], {"e": event, "j": entity},
                          plan, defaults, {})
    assert acts["e"].mode == "path_search" and acts["j"].mode == "subgraph_beam"
    assert acts["e"].include == (LayerFilter(layer="causal"), LayerFilter(layer="logical"))
    plain = OfflineExpansionPolicy(OfflinePlannerConfig(layer_filters=False, choose_mode=False))
    acts = plain.actions(q("Why did Jon quit?"), ["e"], {"e": event}, plan, defaults, {})
    assert acts["e"].include == () and acts["e"].mode == "subgraph_beam"
    # explicit filters in the defaults win over the question's
    fixed = ExpansionAction(include=(LayerFilter(layer="taxonomic"),))
    acts = policy.actions(q("Why did Jon quit?"), ["e"], {"e": event}, plan, fixed, {})
    assert acts["e"].include == fixed.include


def _chain() -> Any:
    deps = make_deps()
    texts = {"a": "Jon lost his job at the bank", "b": "Jon opened a dance studio",
             "c": "Jon likes red shoes"}
    vecs = deps.embedder.embed(list(texts.values()))
    deps.store.upsert_nodes("n", [
        Node(id=i, kind=EVENT, content=t, description=t, embedding=v, sources=(f"T{i}",),
             time_start=AS_OF)
        for (i, t), v in zip(texts.items(), vecs, strict=True)])
    deps.store.upsert_edges("n", [
        Edge(id=edge_id("a", "realm.triggers", "b"), src="a", dst="b",
             predicate="realm.triggers", weight=0.6, description="losing the job led to it"),
        Edge(id=edge_id("a", "realm.correlates", "c"), src="a", dst="c",
             predicate="realm.correlates", weight=0.6, description="about Jon"),
    ])
    return deps


def _expand(deps: Any, text: str, **cfg: Any) -> dict[str, Hit]:
    base = {"score_threshold": 0.0, "max_rounds": 1, "activation": "edge"}
    exp = RealmExpander("realm.subgraph_beam", "subgraph_beam",
                        ExpandConfig(**{**base, **cfg}), deps)
    (seed,) = deps.store.get_nodes("n", ["a"])
    query = Query(text=text, namespace="n", as_of=AS_OF, vector=deps.embedder.embed([text])[0])
    hits = [Hit(node=seed, score=1.0, via=Reach(atom="s"), scores={"seed": 1.0})]
    return {h.node.id: h for h in exp.expand(query, hits, {})}


def test_cause_question_follows_causal_edges_only() -> None:
    deps = _chain()
    assert set(_expand(deps, "Why did Jon open a studio?")) == {"a", "b"}
    assert set(_expand(deps, "What about Jon?")) == {"a", "b", "c"}


def test_untyped_expansion_ignores_filters_and_descriptions() -> None:
    deps = _chain()
    out = _expand(deps, "Why did Jon open a studio?", typed=False)
    assert set(out) == {"a", "b", "c"}
    # every edge reads the same description, so equal weights give equal edge scores
    assert out["b"].scores["edge"] == pytest.approx(out["c"].scores["edge"])


def test_reconsolidation_credits_the_path_retrieval_followed() -> None:
    """An edge followed from a seed outside the top hits to a useful node is strengthened."""
    deps = _chain()
    nodes = {n.id: n for n in deps.store.get_nodes("n", ["a", "b", "c"])}
    via_b = Reach(atom="x", stage="expand", hop=1, path=("a", "b"),
                  edges=(edge_id("a", "realm.triggers", "b"),))
    hits = (Hit(node=nodes["b"], score=1.0, via=via_b, scores={"access": 1.0}),
            Hit(node=nodes["c"], score=0.5, via=Reach(atom="x"), scores={"seed": 0.5}))
    text = "Why did Jon open a dance studio?"
    result = RetrievalResult(query=Query(text=text, namespace="n", as_of=AS_OF,
                                         vector=deps.embedder.embed([text])[0]),
                             hits=hits, subgraph=Subgraph(node_ids=("b", "c")), trace=())
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(), deps)
    report = op.reconsolidate(result, Feedback(answer="Jon opened a dance studio"))
    (edge,) = deps.store.get_edges("n", [edge_id("a", "realm.triggers", "b")])
    assert edge.weight > 0.6 and report.counts["strengthened"] >= 1
    off = _chain()
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(path_credit=0.0), off)
    op.reconsolidate(result, Feedback(answer="Jon opened a dance studio"))
    (edge,) = off.store.get_edges("n", [edge_id("a", "realm.triggers", "b")])
    assert edge.weight == pytest.approx(0.6)


def _twins() -> Any:
    """Two events saying the same thing, by different speakers, and one unrelated."""
    deps = make_deps()
    rows = [("x", "Ben", "I love painting sunsets by the lake"),
            ("y", "Ana", "I love painting sunsets by the lake"),
            ("z", "Ana", "The bus was late again this morning")]
    vecs = deps.embedder.embed([t for _, _, t in rows])
    deps.store.upsert_nodes("n", [
        Node(id=i, kind=EVENT, content=t, description=t, embedding=v, sources=(f"T{i}",),
             time_start=AS_OF, attrs={"speaker": who})
        for (i, who, t), v in zip(rows, vecs, strict=True)])
    return deps


@pytest.mark.parametrize("fusion", ["weighted", "zscore"])
def test_anchor_boost_favours_the_named_speaker(fusion: str) -> None:
    from labile_realm.retrieve.seed import RealmSeeder, SeedConfig

    deps = _twins()
    text = "What does Ana love painting?"
    query = Query(text=text, namespace="n", as_of=AS_OF, vector=deps.embedder.embed([text])[0])
    hits = RealmSeeder("realm.hybrid_match", "hybrid_match",
                       SeedConfig(fusion=fusion, anchor_boost=0.3, drop_participants=False),  # type: ignore[arg-type]
                       deps).seed(query, {})
    assert [h.node.id for h in hits][:2] == ["y", "x"]
    assert hits[0].scores["anchor"] == 0.3 and "anchor" not in hits[1].scores
    if fusion == "zscore":
        assert all(0.0 < h.score < 1.0 for h in hits)
    plain = RealmSeeder("realm.hybrid_match", "hybrid_match",
                        SeedConfig(fusion=fusion, drop_participants=False),  # type: ignore[arg-type]
                        deps).seed(query, {})
    assert plain[0].score == pytest.approx(plain[1].score)  # the twins tie without anchors


def test_context_weight_finds_the_reply_through_precedes() -> None:
    """A reply sharing no word with the question is seeded through the turn before it."""
    from labile_realm.retrieve.seed import RealmSeeder, SeedConfig

    deps = make_deps()
    rows = [("q1", "Have you ever been to the lighthouse museum?"),
            ("r1", "Yes, twice last year with my sister!"),
            ("o1", "My sister bakes bread every Sunday")]
    vecs = deps.embedder.embed([t for _, t in rows])
    deps.store.upsert_nodes("n", [
        Node(id=i, kind=EVENT, content=t, description=t, embedding=v, sources=(f"T{i}",),
             time_start=AS_OF) for (i, t), v in zip(rows, vecs, strict=True)])
    deps.store.upsert_edges("n", [Edge(id=edge_id("q1", "realm.precedes", "r1"), src="q1",
                                       dst="r1", predicate="realm.precedes", weight=0.8)])
    text = "lighthouse museum"
    query = Query(text=text, namespace="n", as_of=AS_OF, vector=deps.embedder.embed([text])[0])

    def seed(gamma: float) -> dict[str, float]:
        cfg = SeedConfig(context_weight=gamma, normalise_keywords="max", candidates=1)
        hits = RealmSeeder("realm.keywords_match", "keywords_match", cfg, deps).seed(query, {})
        return {h.node.id: h.score for h in hits}

    assert "r1" not in seed(0.0)
    with_context = seed(0.5)
    assert with_context["q1"] == 1.0 and with_context["r1"] == pytest.approx(0.5)
    assert "o1" not in with_context


def test_context_edge_is_recorded_and_its_weight_can_count() -> None:
    """The ``precedes`` edge that lent a seed its context is on the seed's path (so
    reconsolidation credits it); with ``context_by_weight`` its weight scales the share."""
    from labile_realm.retrieve.seed import RealmSeeder, SeedConfig

    deps = make_deps()
    rows = [("q1", "Have you ever been to the lighthouse museum?"),
            ("r1", "Yes, twice last year with my sister!")]
    vecs = deps.embedder.embed([t for _, t in rows])
    deps.store.upsert_nodes("n", [
        Node(id=i, kind=EVENT, content=t, description=t, embedding=v, sources=(f"T{i}",),
             time_start=AS_OF) for (i, t), v in zip(rows, vecs, strict=True)])
    eid = edge_id("q1", "realm.precedes", "r1")
    deps.store.upsert_edges("n", [Edge(id=eid, src="q1", dst="r1", predicate="realm.precedes",
                                       weight=0.4)])
    text = "lighthouse museum"
    query = Query(text=text, namespace="n", as_of=AS_OF, vector=deps.embedder.embed([text])[0])

    def seed(by_weight: bool) -> dict[str, Hit]:
        cfg = SeedConfig(context_weight=0.5, normalise_keywords="max", candidates=1,
                         context_by_weight=by_weight)
        hits = RealmSeeder("realm.keywords_match", "keywords_match", cfg, deps).seed(query, {})
        return {h.node.id: h for h in hits}

    plain, weighted = seed(False), seed(True)
    assert plain["r1"].via.edges == (eid,) and plain["r1"].via.path == ("q1", "r1")
    assert plain["q1"].via.edges == ()
    assert plain["r1"].score == pytest.approx(0.5)
    assert weighted["r1"].score == pytest.approx(0.5 * 0.4)


@pytest.mark.parametrize(("text", "current"), [
    ("Where does Ann live now?", True), ("Is Jon still dancing?", True),
    ("What is Gina's current job?", True), ("Where did Ann live in 2020?", False),
    ("What does Ann like about snow?", False)])
def test_present_state_cue(text: str, current: bool) -> None:
    assert read_question(text).asks_current is current


@pytest.mark.parametrize(("text", "many"), [
    ("What books has Ann read?", True), ("Where has Jon travelled?", True),
    ("What kinds of games does Gina play?", True), ("How many pets does Ann have?", True),
    ("What activities does Jon enjoy?", True), ("What are Ann's hobbies?", True),
    ("What did Ann research?", False), ("When did Jon go to Rome?", False),
    ("What does Gina do to relax?", False), ("Which city does Ann live in?", False),
    ("What was Jon's dog's name?", False), ("What is Gina's address?", False)])
def test_many_cue(text: str, many: bool) -> None:
    """A question asking for several things (a plural object, a count, the present
    perfect) reads as asking for evidence spread over the conversation."""
    assert read_question(text).asks_many is many


@given(st.text(max_size=80))
def test_many_cue_never_fails(text: str) -> None:
    """Any text at all reads to a yes or no on the many cue, without raising."""
    assert isinstance(read_question(text).asks_many, bool)
