"""Reconsolidation (Algorithm 3, eq. 11–12): decisions, weights, edit log, LLM decider."""

from __future__ import annotations

from typing import Any

import pytest
from realm_helpers import CHAT_1, CHAT_2, TOPOLOGY, open_memory, reply, session

from labile._errors import ConfigError
from labile._memory import Memory
from labile._model import Edge, Feedback, Hit, Node, Reach, RetrievalResult, Subgraph, edge_id
from labile._model import Query as Q
from labile.testing import make_deps
from labile_llm import ScriptedLLM
from labile_realm.reconsolidate import (
    EdgeDecision,
    RealmReconsolidator,
    ReconsolidateConfig,
    replay,
    undo,
    update_weight,
)
from labile_realm.reconsolidate_decide import OfflineReconsolidationConfig

NS = "r"


@pytest.mark.parametrize(("w", "action", "c", "expected"), [
    (None, "add", 0.5, 0.4),                      # new edge: w = 0.8 * c
    (None, "add", 0.01, 0.05),                    # ... never below w_min
    (0.5, "strengthen", 1.0, 1.0),                # eta = 1 - w_b
    (0.5, "strengthen", 0.5, 0.75),
    (0.5, "weaken", 1.0, 0.05),                   # eta = -(w_b - w_min)
    (0.5, "weaken", 0.5, 0.275),
    (1.0, "strengthen", 1.0, 1.0),
    (0.05, "weaken", 1.0, 0.05),
    (0.5, "add", 0.5, 0.75),                      # add on an existing edge strengthens
    (0.0, "weaken", 1.0, 0.05),                   # clipped into [w_min, 1]
])
def test_update_weight_follows_eq_11_12(w: float | None, action: Any, c: float,
                                        expected: float) -> None:
    assert update_weight(w, action, c, eta_add=0.8, w_min=0.05) == pytest.approx(expected)


def _deps(llm: ScriptedLLM | None = None) -> Any:
    deps = make_deps(llm=llm)
    texts = {
        "a": "Ann adopted a dog named Max",
        "b": "Max the dog loves the beach",
        "c": "Ann bakes bread on Sundays",
        "d": "The weather was cold in Oslo",
    }
    vecs = deps.embedder.embed(list(texts.values()))
    deps.store.upsert_nodes(NS, [
        Node(id=i, kind="realm.event", content=t, description=t, embedding=v, sources=(f"T{i}",))
        for (i, t), v in zip(texts.items(), vecs, strict=True)
    ])
    deps.store.upsert_edges(NS, [
        Edge(id=edge_id("a", "realm.precedes", "b"), src="a", dst="b",
             predicate="realm.precedes", weight=0.5, description="adoption then beach"),
        Edge(id=edge_id("b", "realm.precedes", "d"), src="b", dst="d",
             predicate="realm.precedes", weight=0.6, description="then the weather"),
    ])
    return deps


def _result(deps: Any, text: str, ids: list[str],
            expanded: dict[str, tuple[str, ...]] | None = None) -> RetrievalResult:
    expanded = expanded or {}
    nodes = {n.id: n for n in deps.store.get_nodes(NS, ids)}
    hits = []
    for i in ids:
        if i in expanded:
            path = expanded[i]
            via = Reach(atom="x", stage="expand", hop=len(path) - 1, path=path,
                        edges=(edge_id(path[-2], "realm.precedes", path[-1]),))
        else:
            via = Reach(atom="x")
        hits.append(Hit(node=nodes[i], score=1.0, via=via, scores={"seed": 1.0}))
    edges = tuple(e for e in deps.store.edges_of(NS, ids) if e.dst in ids)
    q = Q(text=text, namespace=NS, vector=deps.embedder.embed([text])[0])
    return RetrievalResult(query=q, hits=tuple(hits),
                           subgraph=Subgraph(node_ids=tuple(ids), edges=edges), trace=())


def _weights(deps: Any) -> dict[str, float]:
    return {e.id: e.weight for e in deps.store.iter_edges(NS)}


def test_offline_strengthens_supported_edges_and_weakens_misleading_ones() -> None:
    deps = _deps()
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(), deps)
    result = _result(deps, "Where did the adopted dog go?", ["a", "b", "d"],
                     expanded={"d": ("b", "d")})
    report = op.reconsolidate(result, Feedback(answer="the adopted dog loves the beach"))
    w = _weights(deps)
    assert w[edge_id("a", "realm.precedes", "b")] > 0.5
    assert w[edge_id("b", "realm.precedes", "d")] < 0.6
    assert report.counts["strengthened"] == 1 and report.counts["weakened"] == 1
    assert report.counts["misleading"] == 1
    for entry in report.log:
        assert {"by", "at", "decision", "edge", "old_weight", "new_weight", "reason"} <= set(entry)
    (edge,) = deps.store.get_edges(NS, [edge_id("a", "realm.precedes", "b")])
    assert edge.origin == "reconsolidation" and edge.attrs["history"][-1]["old_weight"] == 0.5


def test_offline_adds_edges_only_on_a_strong_signal() -> None:
    q = "Did Ann bake bread after adopting the dog?"
    deps = _deps()
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(), deps)
    op.reconsolidate(_result(deps, q, ["c", "a", "d"]), Feedback())
    assert not [e for e in deps.store.iter_edges(NS) if e.predicate == "realm.correlates"]
    deps2 = _deps()
    op2 = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(), deps2)
    report = op2.reconsolidate(_result(deps2, q, ["c", "a", "d"]),
                               Feedback(answer="Ann adopted the dog, then she bakes bread"))
    assert report.counts.get("added", 0) == 1
    added = [e for e in deps2.store.iter_edges(NS) if e.predicate == "realm.correlates"]
    assert {(e.src, e.dst) for e in added} == {("c", "a"), ("a", "c")}  # symmetric
    assert all(e.origin == "reconsolidation" for e in added)
    assert added[0].weight == pytest.approx(0.8 * 0.5)


def test_decisions_outside_the_recalled_nodes_are_skipped() -> None:
    deps = _deps()
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(), deps)
    from labile._model import OperationReport

    report = OperationReport(operator="x", namespace=NS)
    op.apply(NS, [EdgeDecision(src="a", dst="d", action="add", predicate="realm.implies",
                               confidence=1.0)], {"a", "b"}, report)
    assert report.counts == {"skipped": 1}
    assert edge_id("a", "realm.implies", "d") not in _weights(deps)


def test_edit_log_replays_and_undoes() -> None:
    deps = _deps()
    before = _weights(deps)
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(), deps)
    report = op.reconsolidate(_result(deps, "Where does Max the dog go?", ["a", "b", "d"],
                                      expanded={"d": ("b", "d")}),
                              Feedback(answer="Max the dog loves the beach with Ann"))
    after = _weights(deps)
    assert replay(report.log, before) == after
    undo(deps.store, NS, report.log)
    restored = _weights(deps)
    for eid, w in before.items():
        assert restored[eid] == pytest.approx(w)
    for eid in set(restored) - set(before):
        (e,) = deps.store.get_edges(NS, [eid])
        assert e.attrs.get("retired")


def test_node_content_never_changes() -> None:
    deps = _deps()
    before = {n.id: (n.content, n.description) for n in deps.store.iter_nodes(NS)}
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(), deps)
    op.reconsolidate(_result(deps, "dog beach", ["a", "b", "c", "d"]), Feedback(answer="beach"))
    assert {n.id: (n.content, n.description) for n in deps.store.iter_nodes(NS)} == before


GOOD = {"topic": "Ann's dog", "gold_supporting_node_ids": [1, 2],
        "supporting_associated_node_ids": [], "misleading_node_ids": [3],
        "unrelated_node_ids": [],
        "operations": [
            {"action": "strengthen_edge", "edge_id": 1, "confidence": 0.8, "reason": "core"},
            {"action": "weaken_edge", "edge_id": 2, "confidence": 0.5},
            {"action": "add_edge", "source": 1, "target": 2, "predicate": "results_in",
             "confidence": 0.5},
        ]}


def test_llm_decider_applies_valid_edits() -> None:
    llm = ScriptedLLM(rules=[(TOPOLOGY, reply(GOOD))])
    deps = _deps(llm)
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(decider="llm"), deps)
    report = op.reconsolidate(_result(deps, "Where does Max go?", ["a", "b", "d"]),
                              Feedback(answer="the beach"))
    w = _weights(deps)
    assert w[edge_id("a", "realm.precedes", "b")] == pytest.approx(0.5 + 0.5 * 0.8)
    assert w[edge_id("b", "realm.precedes", "d")] == pytest.approx(0.6 - 0.55 * 0.5)
    assert w[edge_id("a", "realm.results_in", "b")] == pytest.approx(0.4)
    assert report.counts["key"] == 2 and report.counts["misleading"] == 1
    assert not any(n in llm.calls[0].prompt for n in ("'a'", "precedes|b"))


@pytest.mark.parametrize("bad", [
    "{not json",
    reply({**GOOD, "gold_supporting_node_ids": [9]}),
    reply({**GOOD, "operations": [{"action": "add_edge", "source": 1, "target": 2,
                                   "predicate": "loves", "confidence": 0.5}]}),
    reply({**GOOD, "operations": [{"action": "strengthen_edge", "edge_id": 7,
                                   "confidence": 0.5}]}),
    reply({**GOOD, "operations": [{"action": "strengthen_edge", "edge_id": 1,
                                   "confidence": 1.5}]}),
    reply({**GOOD, "operations": [{"action": "delete_edge", "edge_id": 1, "confidence": 0.5}]}),
    reply({**GOOD, "operations": [{"action": "add_edge", "source": 1, "confidence": 0.5}]}),
])
def test_llm_decider_rejects_invalid_replies_whole(bad: str) -> None:
    llm = ScriptedLLM(rules=[(TOPOLOGY, bad)])
    deps = _deps(llm)
    before = _weights(deps)
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(decider="llm"), deps)
    report = op.reconsolidate(_result(deps, "Where does Max go?", ["a", "b", "d"]),
                              Feedback(answer="the beach"))
    assert report.counts == {"rejected": 1}
    assert _weights(deps) == before


def test_llm_decider_needs_an_llm() -> None:
    """A pipeline without a model refuses the LLM decider, naming it, its path and the fix."""
    with pytest.raises(ConfigError) as info:
        Memory.open({"preset": "realm", "store": {"type": "memory"},
                     "embedder": {"type": "hashing"},
                     "reconsolidate": [{"type": "realm.reconsolidate", "decider": "llm"}]})
    msg = str(info.value)
    assert "'realm.reconsolidation_decider.llm' @ $.reconsolidate[0].decider" in msg
    assert '[llm] type = "litellm"' in msg
    assert "realm.reconsolidation_decider.offline" in msg


def test_config_validation() -> None:
    with pytest.raises(ValueError):
        OfflineReconsolidationConfig(add_predicate="loves")
    with pytest.raises(ValueError):
        ReconsolidateConfig(w_min=1.5)


def test_feedback_through_memory_after_search() -> None:
    mem = open_memory()
    mem.add(session(1, CHAT_1), namespace="u")
    mem.add(session(2, CHAT_2), namespace="u")
    before = {n.id: n.content for n in mem.store.iter_nodes("u")}
    result = mem.search("What is Caroline researching?", namespace="u", k=5)
    (report,) = mem.feedback(result, answer="adoption agencies")
    assert report.operator == "realm.reconsolidate"
    assert {n.id: n.content for n in mem.store.iter_nodes("u")} == before
    recalled = set(result.node_ids)
    for entry in report.log:
        if "edge" in entry:
            assert entry["src"] in recalled and entry["dst"] in recalled


def test_actions_option_limits_the_edits() -> None:
    deps = _deps()
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(actions=("weaken",)),
                             deps)
    result = _result(deps, "Where did the adopted dog go?", ["a", "b", "d"],
                     expanded={"d": ("b", "d")})
    report = op.reconsolidate(result, Feedback(answer="the adopted dog loves the beach"))
    w = _weights(deps)
    assert w[edge_id("a", "realm.precedes", "b")] == 0.5
    assert w[edge_id("b", "realm.precedes", "d")] < 0.6
    assert report.counts["not_allowed"] >= 1
    with pytest.raises(ValueError):
        ReconsolidateConfig(actions=("delete",))


_FILLER = [
    "I watched a documentary about whales last night.", "The weather has been rainy all week.",
    "My sister started a new job at the bakery.", "We tried a new pasta recipe for dinner.",
    "I'm reading a novel about space explorers.", "The garden tomatoes are finally ripe.",
    "Our team won the volleyball match on Friday.", "I fixed the leaking kitchen tap myself.",
    "The museum has a new exhibit on ancient Egypt.", "I signed up for a pottery class.",
    "My cat knocked over the plant again.", "We are planning a trip to the mountains.",
    "The concert downtown was really loud.", "I finally cleaned out the garage.",
    "My neighbour lent me his lawn mower.", "I baked banana bread this morning.",
]


def _rank_of_address_after_feedback(preset: str) -> int | None:
    """Ask about Gina, cite the two turns used, then ask where to fetch the key.

    The key turn (session 2) and the address turn (session 7) share nothing
    but a name the second question does not use; citing both for the first
    question is what should link them.
    """
    mem = open_memory(preset)
    for s in range(1, 9):
        turns = [("Ana", _FILLER[(2 * s) % 16]), ("Ben", _FILLER[(2 * s + 1) % 16])]
        if s == 2:
            turns.append(("Ana", "Jon told me the spare key is with Gina."))
        if s == 7:
            turns.append(("Ben", "Gina moved to 14 Elm Street last month."))
        mem.add(session(s, turns), namespace="u")
    first = mem.search("What do I know about Gina?", namespace="u", k=5)
    cited = [h.node.id for h in first.hits
             if h.node.kind == "realm.event" and h.node.sources[0] in ("D2:3", "D7:3")]
    assert len(cited) == 2, "the first question must recall both turns"
    mem.feedback(first, answer="Gina has the spare key and moved to 14 Elm Street.", cited=cited)
    later = mem.search("Where do I go to pick up the spare key?", namespace="u", k=10)
    turns = [h.node.sources[0] for h in later.hits]
    return turns.index("D7:3") if "D7:3" in turns else None


def test_cited_feedback_helps_a_later_question() -> None:
    """With a real signal (the caller's citations) reconsolidation on beats off."""
    off = _rank_of_address_after_feedback("realm-no-recon")
    on = _rank_of_address_after_feedback("realm")
    assert off is None  # without the learned link the address is not recalled
    assert on is not None and on < 10


def test_added_edges_carry_the_cue_that_formed_them() -> None:
    deps = _deps()
    op = RealmReconsolidator("realm.reconsolidate", ReconsolidateConfig(), deps)
    result = _result(deps, "Where did the adopted dog go?", ["a", "c"])
    report = op.reconsolidate(result, Feedback(answer="to the beach", cited=("a", "c")))
    added = [e for e in report.log if e.get("decision") == "add"]
    assert added and added[0]["new_weight"] == pytest.approx(0.8)  # cited: full confidence
    (edge,) = deps.store.get_edges(NS, [added[0]["edge"]])
    assert edge.description == ("recalled together for: Where did the adopted dog go? "
                                "(answer: to the beach)")
