"""Score fusion shared by the bundles: reciprocal-rank fusion and z-scores."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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


def zscores(values: Sequence[float]) -> list[float]:
    """``(v - mean) / std`` of each value; all 0 when the values do not vary (or are none)."""
    arr = np.asarray(values, dtype=np.float64)
    std = float(arr.std()) if arr.size else 0.0
    # relative: equal large values leave a rounding-sized std, which must not scale to ±1
    if std <= 1e-9 * max(1.0, float(np.abs(arr).max()) if arr.size else 0.0):
        return [0.0] * int(arr.size)
    return [float(z) for z in (arr - arr.mean()) / std]
