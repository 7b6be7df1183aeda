"""All-Mem retrieval: visible anchors, typed-link expansion, rerank.

The paper's coarse-to-fine, topology-aware retrieval, in three stages:

* ``allmem.visible_anchor`` (Stage 1): the top-k (10) units of the *visible
  surface* by cosine. ``mode = "hybrid"`` is a configured improvement that is
  not in the paper: the cosine list and the store's BM25 list (both over the
  visible surface) fused by reciprocal rank.
* ``allmem.typed_expand`` (Stage 2): breadth-first over active typed links,
  at most ``hop_budget`` (H = 4) hops from the anchors, until the candidate pool
  holds ``candidate_budget`` (L = 40) units, anchors included. Within a hop the
  budget is spent by link-type priority (default: version, lineage, sibling,
  temporal, semantic), then by the rank of the unit the link leaves, then by
  link weight. Archived units are reachable here (that is how superseded and
  replaced evidence comes back), and expansion continues through them.
* ``allmem.rerank`` (Stage 3): candidates re-scored by query cosine, top K (16)
  kept. ``mode = "hybrid"`` (configured improvement) fuses the cosine ranking
  with the BM25 ranking of the candidates by reciprocal rank.

Stage timings go to ``state["allmem"]["ms"]`` (the kernel trace also has them).
"""

from __future__ import annotations

import time
from typing import Any, Literal

import attrs
from attrs.validators import ge, in_

from labile.plugin import Deps, Edge, Hit, Node, Query, Reach, bounded, rrf
from labile.plugin import cosine as vector_cosine
from labile_allmem.schema import (
    PREDICATE_BY_SHORT,
    UNIT,
    VISIBLE_UNITS,
    is_active,
    node_filter,
)

__all__ = [
    "AnchorConfig",
    "ExpandConfig",
    "RerankConfig",
    "Reranker",
    "TypedExpander",
    "VisibleAnchorSeeder",
    "rrf",
]

SEED = "allmem.visible_anchor"
EXPAND = "allmem.typed_expand"



def _stage_ms(state: dict[str, Any], stage: str, ms: float) -> None:
    state.setdefault("allmem", {}).setdefault("ms", {})[stage] = ms


def cosine(query: Query, node: Node) -> float:
    """Cosine of the query vector and the node's embedding (0 without one)."""
    return vector_cosine(query.vector, node.embedding)


@attrs.frozen(kw_only=True)
class AnchorConfig:
    """Options of ``allmem.visible_anchor``.

    Attributes:
        top_k: Anchors (k; paper: 10).
        mode: ``"cosine"`` (the paper) or ``"hybrid"`` (cosine + BM25, RRF).
        pool: Hybrid: candidates taken from each list before fusion.
        rrf_k: Hybrid: the RRF constant.
        lexical_weight: Hybrid: weight of the BM25 list (cosine's is 1).
    """

    top_k: int = attrs.field(default=10, validator=bounded(1, 100_000))
    mode: Literal["cosine", "hybrid"] = attrs.field(
        default="cosine", validator=in_(("cosine", "hybrid")))
    pool: int = attrs.field(default=50, validator=bounded(1, 100_000))
    rrf_k: int = attrs.field(default=60, validator=bounded(1, 100_000))
    lexical_weight: float = attrs.field(default=1.0, validator=ge(0.0))


class VisibleAnchorSeeder:
    """Stage 1: anchors from the visible surface only."""

    def __init__(self, config: AnchorConfig, deps: Deps) -> None:
        """Build from the config and the pipeline deps."""
        self.config, self._store = config, deps.store

    def seed(self, query: Query, state: dict[str, Any]) -> list[Hit]:
        """Return the anchors, best first."""
        t0 = time.perf_counter()
        cfg = self.config
        assert query.vector is not None
        if cfg.mode == "cosine":
            found = self._store.vector_search(query.namespace, query.vector, cfg.top_k,
                                              where=VISIBLE_UNITS)
            hits = [Hit(node=n, score=s, via=Reach(atom=SEED), scores={"cosine": s})
                    for n, s in found]
        else:
            n = max(cfg.pool, cfg.top_k)
            dense = self._store.vector_search(query.namespace, query.vector, n,
                                              where=VISIBLE_UNITS)
            lexical = self._store.text_search(query.namespace, query.text, n,
                                              where=VISIBLE_UNITS)
            fused = rrf([([x.id for x, _ in dense], 1.0),
                         ([x.id for x, _ in lexical], cfg.lexical_weight)], cfg.rrf_k)
            nodes = {x.id: x for x, _ in [*dense, *lexical]}
            cos = {x.id: s for x, s in dense}
            bm25 = {x.id: s for x, s in lexical}
            ranked = sorted(fused, key=lambda i: (-fused[i], i))[: cfg.top_k]
            hits = [
                Hit(node=nodes[i], score=fused[i], via=Reach(atom=SEED),
                    scores={"rrf": fused[i], "cosine": cos.get(i, cosine(query, nodes[i])),
                            "bm25": bm25.get(i, 0.0)})
                for i in ranked
            ]
        state.setdefault("allmem", {})["anchors"] = [h.node.id for h in hits]
        _stage_ms(state, "anchor", (time.perf_counter() - t0) * 1000)
        return hits


@attrs.frozen(kw_only=True)
class ExpandConfig:
    """Options of ``allmem.typed_expand``.

    Attributes:
        hop_budget: H, the most hops from an anchor (paper default 4).
        candidate_budget: L, the most candidates in the pool, anchors included (40).
        priority: Link types in the order the budget is spent on them
            (``version``, ``lineage``, ``sibling``, ``temporal``, ``semantic``);
            types left out are not followed.
        both_directions: Link types also followed backwards (``temporal`` by
            default: the turn after an anchor is as useful as the one before).
    """

    hop_budget: int = attrs.field(default=4, validator=bounded(0, 100))
    candidate_budget: int = attrs.field(default=40, validator=bounded(1, 100_000))
    priority: tuple[str, ...] = attrs.field(
        default=("version", "lineage", "sibling", "temporal", "semantic"))
    both_directions: tuple[str, ...] = attrs.field(default=("temporal",))

    @priority.validator
    def _check_priority(self, _attr: attrs.Attribute[tuple[str, ...]],
                        value: tuple[str, ...]) -> None:
        unknown = [v for v in value if v not in PREDICATE_BY_SHORT]
        if unknown:
            raise ValueError(f"unknown link type(s) {unknown} "
                             f"(known: {', '.join(PREDICATE_BY_SHORT)})")

    @both_directions.validator
    def _check_both(self, _attr: attrs.Attribute[tuple[str, ...]],
                    value: tuple[str, ...]) -> None:
        unknown = [v for v in value if v not in PREDICATE_BY_SHORT]
        if unknown:
            raise ValueError(f"unknown link type(s) {unknown}")


class TypedExpander:
    """Stage 2: hop- and candidate-bounded expansion over typed links."""

    def __init__(self, config: ExpandConfig, deps: Deps) -> None:
        """Build from the config and the pipeline deps."""
        self.config, self._store = config, deps.store
        self._rank = {PREDICATE_BY_SHORT[p]: i for i, p in enumerate(config.priority)}
        self._backward = [PREDICATE_BY_SHORT[p] for p in config.both_directions
                          if p in config.priority]

    def expand(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        """Return the anchors plus the units reached, anchors first."""
        t0 = time.perf_counter()
        cfg, ns = self.config, query.namespace
        pool: dict[str, Hit] = {h.node.id: h for h in hits}
        order: dict[str, int] = {h.node.id: i for i, h in enumerate(hits)}
        frontier = [h.node.id for h in hits]
        forward = list(self._rank)
        reached = 0
        for hop in range(1, cfg.hop_budget + 1):
            if not frontier or len(pool) >= cfg.candidate_budget:
                break
            steps: list[tuple[tuple[int, int, float, str], str, str, Edge]] = []
            for e in self._store.edges_of(ns, frontier, direction="out", predicates=forward):
                if is_active(e) and e.dst not in pool:
                    steps.append((self._key(e, e.src, order), e.src, e.dst, e))
            if self._backward:
                for e in self._store.edges_of(ns, frontier, direction="in",
                                              predicates=self._backward):
                    if is_active(e) and e.src not in pool:
                        steps.append((self._key(e, e.dst, order), e.dst, e.src, e))
            steps.sort(key=lambda s: s[0])
            admitted: dict[str, tuple[str, Edge]] = {}
            room = cfg.candidate_budget - len(pool)
            for _key, parent, child, edge in steps:
                if len(admitted) >= room:
                    break
                if child not in admitted:
                    admitted[child] = (parent, edge)
            if not admitted:
                break
            nodes = {n.id: n for n in self._store.get_nodes(ns, list(admitted))}
            frontier = []
            for child, (parent, edge) in admitted.items():
                node = nodes.get(child)
                if node is None or node.kind != UNIT:
                    continue
                via = pool[parent].via
                pool[child] = Hit(
                    node=node, score=cosine(query, node),
                    via=Reach(atom=EXPAND, stage="expand", hop=hop,
                              path=(*(via.path or (parent,)), child),
                              edges=(*via.edges, edge.id)),
                    scores={"cosine": cosine(query, node)},
                )
                order[child] = len(order)
                frontier.append(child)
                reached += 1
        state.setdefault("allmem", {})["expanded"] = reached
        _stage_ms(state, "expand", (time.perf_counter() - t0) * 1000)
        return list(pool.values())

    def _key(self, edge: Edge, parent: str, order: dict[str, int]) -> tuple[int, int, float, str]:
        """Budget priority: link type, then the parent's rank, then link weight."""
        return (self._rank[edge.predicate], order.get(parent, 1 << 30), -edge.weight, edge.id)


@attrs.frozen(kw_only=True)
class RerankConfig:
    """Options of ``allmem.rerank``.

    Attributes:
        top_k: K, the candidates kept (paper: 16).
        mode: ``"cosine"`` (the paper) or ``"hybrid"`` (cosine + BM25 ranks, RRF).
        rrf_k: Hybrid: the RRF constant.
        lexical_weight: Hybrid: weight of the BM25 ranking (cosine's is 1).
    """

    top_k: int = attrs.field(default=16, validator=bounded(1, 100_000))
    mode: Literal["cosine", "hybrid"] = attrs.field(
        default="cosine", validator=in_(("cosine", "hybrid")))
    rrf_k: int = attrs.field(default=60, validator=bounded(1, 100_000))
    lexical_weight: float = attrs.field(default=1.0, validator=ge(0.0))


class Reranker:
    """Stage 3: rerank the bounded candidate set and keep the top K."""

    def __init__(self, config: RerankConfig, deps: Deps) -> None:
        """Build from the config and the pipeline deps."""
        self.config, self._store = config, deps.store

    def filter(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        """Return the top-K candidates, best first."""
        t0 = time.perf_counter()
        cfg = self.config
        cos = {h.node.id: cosine(query, h.node) for h in hits}
        by_id = {h.node.id: h for h in hits}
        if cfg.mode == "cosine":
            score = cos
        else:
            ids = list(by_id)
            lexical = self._store.text_search(query.namespace, query.text, len(ids),
                                              where=node_filter(ids=ids))
            dense_rank = sorted(ids, key=lambda i: (-cos[i], i))
            score = rrf([(dense_rank, 1.0), ([n.id for n, _ in lexical], cfg.lexical_weight)],
                        cfg.rrf_k)
        ranked = sorted(by_id, key=lambda i: (-score.get(i, 0.0), i))[: cfg.top_k]
        out = []
        for i in ranked:
            hit = by_id[i]
            out.append(Hit(node=hit.node, score=score.get(i, 0.0), via=hit.via,
                           scores={**hit.scores, "cosine": cos[i], "rerank": score.get(i, 0.0)}))
        _stage_ms(state, "rerank", (time.perf_counter() - t0) * 1000)
        return out
