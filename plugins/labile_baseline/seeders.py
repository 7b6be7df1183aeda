"""Seeders over any `Store`: dense, BM25, and their reciprocal-rank fusion."""

from __future__ import annotations

from typing import Any

import attrs
from attrs.validators import ge

from labile.plugin import Deps, Hit, Query, Reach, Scored, bounded, rrf


@attrs.frozen(kw_only=True)
class DenseSeederConfig:
    """Options of ``baseline.dense``.

    Attributes:
        top_k: Candidates to return; 0 means the query's ``k``.
    """

    top_k: int = attrs.field(default=0, validator=bounded(0, 100_000))


@attrs.frozen(kw_only=True)
class BM25SeederConfig:
    """Options of ``baseline.bm25`` (see `DenseSeederConfig`)."""

    top_k: int = attrs.field(default=0, validator=bounded(0, 100_000))


@attrs.frozen(kw_only=True)
class HybridSeederConfig:
    """Options of ``baseline.hybrid``.

    Attributes:
        rrf_k: The reciprocal-rank-fusion constant (60 in the literature).
        candidates: How many hits each list contributes before fusion (at least
            the query's ``k``). Short lists fuse better: on LoCoMo dev, fusing the
            top 10 of each list gives R@5 56.8 against 52.2 with the top 50, as the
            deep tail of the weaker dense list only adds noise.
        dense_weight: Weight of the dense list's RRF term (BM25's is 1).
    """

    rrf_k: int = attrs.field(default=60, validator=bounded(1, 100_000))
    candidates: int = attrs.field(default=10, validator=bounded(1, 100_000))
    dense_weight: float = attrs.field(default=1.0, validator=ge(0.0))



def _hits(scored: list[Scored], atom: str) -> list[Hit]:
    return [Hit(node=n, score=s, via=Reach(atom=atom), scores={atom: s}) for n, s in scored]


class DenseSeeder:
    """Top nodes by cosine similarity to the query embedding."""

    def __init__(self, config: DenseSeederConfig, deps: Deps) -> None:
        self._k, self._store = config.top_k, deps.store

    def seed(self, query: Query, state: dict[str, Any]) -> list[Hit]:
        """Return the nearest nodes, best first."""
        assert query.vector is not None
        found = self._store.vector_search(query.namespace, query.vector, self._k or query.k)
        return _hits(found, "baseline.dense")


class BM25Seeder:
    """Top nodes by the store's BM25 full-text score."""

    def __init__(self, config: BM25SeederConfig, deps: Deps) -> None:
        self._k, self._store = config.top_k, deps.store

    def seed(self, query: Query, state: dict[str, Any]) -> list[Hit]:
        """Return the best lexical matches, best first."""
        found = self._store.text_search(query.namespace, query.text, self._k or query.k)
        return _hits(found, "baseline.bm25")


def rrf_fuse(
    lists: list[tuple[list[Scored], float]], *, rrf_k: int
) -> list[tuple[Any, float, dict[str, float]]]:
    """Reciprocal-rank fusion (`labile._fusion.rrf`) of scored node lists.

    Returns ``(node, fused score, {list index: rank})`` best first, ties by id.
    """
    nodes: dict[str, Any] = {}
    ranks: dict[str, dict[str, float]] = {}
    for li, (scored, _weight) in enumerate(lists):
        for rank, (node, _score) in enumerate(scored, start=1):
            nodes.setdefault(node.id, node)
            ranks.setdefault(node.id, {})[str(li)] = float(rank)
    fused = rrf([([n.id for n, _ in scored], weight) for scored, weight in lists], rrf_k)
    out = [(nodes[i], score, ranks[i]) for i, score in fused.items()]
    out.sort(key=lambda item: (-item[1], item[0].id))
    return out


class HybridSeeder:
    """Dense and BM25 lists fused by reciprocal rank."""

    def __init__(self, config: HybridSeederConfig, deps: Deps) -> None:
        self._config, self._store = config, deps.store

    def seed(self, query: Query, state: dict[str, Any]) -> list[Hit]:
        """Return the fused ranking, best first."""
        assert query.vector is not None
        n = max(self._config.candidates, query.k)
        dense = self._store.vector_search(query.namespace, query.vector, n)
        lexical = self._store.text_search(query.namespace, query.text, n)
        fused = rrf_fuse([(lexical, 1.0), (dense, self._config.dense_weight)],
                         rrf_k=self._config.rrf_k)
        return [
            Hit(node=node, score=score, via=Reach(atom="baseline.hybrid"),
                scores={"bm25_rank": ranks.get("0", 0.0), "dense_rank": ranks.get("1", 0.0)})
            for node, score, ranks in fused
        ]
