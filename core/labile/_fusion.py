"""Reciprocal-rank fusion, the one formula every hybrid ranking in labile uses."""

from __future__ import annotations

from collections.abc import Sequence


def rrf(rankings: Sequence[tuple[Sequence[str], float]], k: int) -> dict[str, float]:
    """Fuse ranked id lists: score(v) = Σ weight / (k + rank(v)), rank from 1.

    Args:
        rankings: ``(ids best first, weight)`` per list.
        k: The RRF constant (60 in the literature).

    Returns:
        Fused scores by id, in first-seen order (so a stable sort keeps the
        earlier lists' order on ties).
    """
    fused: dict[str, float] = {}
    for ids, weight in rankings:
        for rank, node_id in enumerate(ids, start=1):
            fused[node_id] = fused.get(node_id, 0.0) + weight / (k + rank)
    return fused
