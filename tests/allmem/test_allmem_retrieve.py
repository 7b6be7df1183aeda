"""Retrieval: visible anchors, budgeted typed expansion, rerank."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from allmem_helpers import open_memory, session

import labile_allmem
from labile._memstore import MemoryStore
from labile._model import Edge, Hit, Node, Query, Reach, edge_id
from labile.testing import make_deps, make_registries
from labile_allmem.retrieve import (
    AnchorConfig,
    ExpandConfig,
    RerankConfig,
    Reranker,
    TypedExpander,
    VisibleAnchorSeeder,
    rrf,
)
from labile_allmem.schema import LINEAGE, SEMANTIC, TEMPORAL, UNIT, VERSION

T = datetime(2024, 1, 1, tzinfo=UTC)


def vec(i: int, dim: int = 16) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i % dim] = 1.0
    return v


def unit(nid: str, i: int, visible: bool = True, text: str = "") -> Node:
    return Node(id=nid, kind=UNIT, content=text or nid, visible=visible, embedding=vec(i),
                time_start=T, sources=(nid,))


def link(src: str, pred: str, dst: str, weight: float = 1.0, active: bool = True) -> Edge:
    return Edge(id=edge_id(src, pred, dst), src=src, dst=dst, predicate=pred, weight=weight,
                attrs={} if active else {"active": False})


@pytest.fixture
def deps():
    return make_deps(registries=make_registries(labile_allmem, entry_points=False),
                     store=MemoryStore())


def query(v: np.ndarray, text: str = "q") -> Query:
    return Query(text=text, namespace="n", k=10, vector=v)


def test_anchors_come_from_the_visible_surface_only(deps):
    """An archived unit identical to the query is never an anchor."""
    deps.store.upsert_nodes("n", [unit("old", 0, visible=False), unit("a", 1), unit("b", 2)])
    seeder = VisibleAnchorSeeder(AnchorConfig(top_k=10), deps)
    hits = seeder.seed(query(vec(0) + 0.1 * vec(1)), {})
    assert [h.node.id for h in hits] == ["a", "b"]
    assert all(h.node.visible for h in hits)


def test_hybrid_anchors_fuse_cosine_and_bm25(deps):
    """In hybrid mode a lexical match with a poor embedding still becomes an anchor."""
    deps.store.upsert_nodes("n", [unit("lex", 5, text="zebra crossing"), unit("dense", 0),
                                  unit("other", 3)])
    state: dict = {}
    hits = VisibleAnchorSeeder(AnchorConfig(top_k=2, mode="hybrid"), deps).seed(
        query(vec(0), "zebra"), state)
    assert {h.node.id for h in hits} == {"lex", "dense"}
    assert state["allmem"]["anchors"] == [h.node.id for h in hits]
    assert "anchor" in state["allmem"]["ms"]


def test_expansion_reaches_archived_units_by_priority_within_budgets(deps):
    """Version links are spent first; archived units are reachable; L caps the pool."""
    deps.store.upsert_nodes("n", [
        unit("a", 0), unit("v_old", 1, visible=False), unit("t_prev", 2), unit("s1", 3),
        unit("s2", 4), unit("deep", 5, visible=False),
    ])
    deps.store.upsert_edges("n", [
        link("a", SEMANTIC, "s1", 0.9), link("a", SEMANTIC, "s2", 0.8),
        link("a", TEMPORAL, "t_prev"), link("a", VERSION, "v_old"),
        link("v_old", LINEAGE, "deep"),
    ])
    anchors = [Hit(node=deps.store.get_nodes("n", ["a"])[0], score=1.0,
                   via=Reach(atom="allmem.visible_anchor"))]
    exp = TypedExpander(ExpandConfig(candidate_budget=3), deps)
    out = exp.expand(query(vec(0)), anchors, {})
    assert [h.node.id for h in out] == ["a", "v_old", "t_prev"]
    assert out[1].via.stage == "expand" and out[1].via.hop == 1
    assert out[1].via.path == ("a", "v_old")
    full = TypedExpander(ExpandConfig(), deps).expand(query(vec(0)), anchors, {})
    by_id = {h.node.id: h for h in full}
    assert set(by_id) == {"a", "v_old", "t_prev", "s1", "s2", "deep"}
    assert by_id["deep"].via.hop == 2 and by_id["deep"].via.path == ("a", "v_old", "deep")


def test_hop_budget_and_inactive_links(deps):
    """H bounds the depth; deactivated links are never followed."""
    deps.store.upsert_nodes("n", [unit(f"n{i}", i) for i in range(6)])
    deps.store.upsert_edges("n", [link(f"n{i}", LINEAGE, f"n{i + 1}") for i in range(4)]
                            + [link("n0", SEMANTIC, "n5", active=False)])
    anchors = [Hit(node=deps.store.get_nodes("n", ["n0"])[0], score=1.0,
                   via=Reach(atom="x"))]
    out = TypedExpander(ExpandConfig(hop_budget=2), deps).expand(query(vec(0)), anchors, {})
    assert [h.node.id for h in out] == ["n0", "n1", "n2"]
    out = TypedExpander(ExpandConfig(hop_budget=0), deps).expand(query(vec(0)), anchors, {})
    assert [h.node.id for h in out] == ["n0"]


def test_temporal_links_are_followed_both_ways_by_default(deps):
    """The turn after an anchor is reachable through the incoming temporal link."""
    deps.store.upsert_nodes("n", [unit("q", 0), unit("answer", 1)])
    deps.store.upsert_edges("n", [link("answer", TEMPORAL, "q")])
    anchors = [Hit(node=deps.store.get_nodes("n", ["q"])[0], score=1.0, via=Reach(atom="x"))]
    out = TypedExpander(ExpandConfig(), deps).expand(query(vec(0)), anchors, {})
    assert [h.node.id for h in out] == ["q", "answer"]
    out = TypedExpander(ExpandConfig(both_directions=()), deps).expand(query(vec(0)), anchors,
                                                                      {})
    assert [h.node.id for h in out] == ["q"]


def test_rerank_by_query_cosine_keeps_top_k(deps):
    """Stage 3 orders candidates by cosine and keeps K of them."""
    nodes = [unit(f"n{i}", i) for i in range(5)]
    hits = [Hit(node=n, score=0.0, via=Reach(atom="x")) for n in nodes]
    q = query(vec(3) * 2 + vec(1))
    out = Reranker(RerankConfig(top_k=2), deps).filter(q, hits, {})
    assert [h.node.id for h in out] == ["n3", "n1"]
    assert out[0].scores["cosine"] > out[1].scores["cosine"]


def test_rrf_fusion():
    """RRF sums weight / (k + rank) over the rankings."""
    fused = rrf([(["a", "b"], 1.0), (["b", "c"], 2.0)], 60)
    assert fused["b"] == pytest.approx(1 / 62 + 2 / 61)
    assert fused["a"] == pytest.approx(1 / 61)


def test_search_recovers_superseded_evidence_through_stage_two():
    """After an Update the old unit is off the surface but comes back via the version link."""
    nurse = "I work as a nurse at the city hospital in Boston."
    teacher = ("I no longer work as a nurse at the city hospital in Boston, "
               "I switched to teaching.")
    mem = open_memory()
    mem.add(session(1, [("Ann", nurse)]), namespace="n")
    mem.add(session(2, [("Ann", teacher)]), namespace="n")
    (report,) = mem.consolidate(namespace="n")
    assert report.counts["update.executed"] == 1
    res = mem.search("Where did Ann work as a nurse?", namespace="n", k=10)
    by_id = {h.node.id: h for h in res.hits}
    assert by_id["u:s2:0"].via.stage == "seed"
    assert by_id["u:s1:0"].via.stage == "expand" and not by_id["u:s1:0"].node.visible
    assert [s.atom for s in res.trace] == [
        "allmem.visible_anchor", "allmem.typed_expand", "allmem.rerank"]
    assert set(res.state["allmem"]["ms"]) == {"anchor", "expand", "rerank"}
