"""The scoring formulas of REALM retrieval (the paper's §3.3, eq. 8–9), as pure functions.

* edge score: ``clip(w_sem·cos(e.description, reasoning) + w_edge·w_e + δ_temporal, 0, 1)``
  with w_sem = 0.6, w_edge = 0.4;
* path score: mean hop score − 0.03 per hop beyond the first;
* access score (eq. 8): ``β·sim(q, e.description) + (1 − β)·w_e − Δ_decay(t_v)``, β = 0.6;
* aggregation (eq. 9): ``α·s_acc(v) + (1 − α)·sim(v, q)``, α = 0.8.

``temporal_delta`` gives δ_temporal (≤ 0, or ``None`` when a hard window or
``missing_time_mode = "drop"`` excludes the node); Δ_decay = −δ_temporal.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from labile.plugin import Node
from labile_realm.retrieve.plan import TemporalDecay

#: Penalty for a node without a time when missing times are kept.
MISSING_TIME_PENALTY = 0.1
#: Largest penalty of the soft decay.
MAX_SOFT_PENALTY = 0.5


def clip01(x: float) -> float:
    """``x`` clipped to [0, 1]."""
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def edge_score(
    sim_description: float, weight: float, delta_temporal: float,
    *, w_sem: float = 0.6, w_edge: float = 0.4,
) -> float:
    """The score of reaching a node over one edge (clipped to [0, 1])."""
    return clip01(w_sem * sim_description + w_edge * weight + delta_temporal)


def path_score(hop_scores: Sequence[float], hop_penalty: float = 0.03) -> float:
    """Mean hop score minus ``hop_penalty`` for each hop beyond the first."""
    if not hop_scores:
        return 0.0
    return sum(hop_scores) / len(hop_scores) - hop_penalty * (len(hop_scores) - 1)


def access_score(
    sim_query_description: float, weight: float, decay: float, beta: float = 0.6
) -> float:
    """Eq. 8: how strongly a node reached over an edge is activated by the query.

    ``decay`` is Δ_decay ≥ 0 (subtracted).
    """
    return beta * sim_query_description + (1.0 - beta) * weight - decay


def aggregate_score(s_acc: float, sim_query: float, alpha: float = 0.8) -> float:
    """Eq. 9: the final evidence score."""
    return alpha * s_acc + (1.0 - alpha) * sim_query


def temporal_delta(node: Node, decay: TemporalDecay | None) -> float | None:
    """δ_temporal of ``node`` under ``decay``: 0 inside the window, negative outside.

    Returns ``None`` when the node must be dropped (hard window, or no time
    under ``missing_time_mode = "drop"``). The soft penalty grows linearly
    with the distance beyond the tolerance, one ``delta`` costing 0.1, capped
    at 0.5.
    """
    if decay is None:
        return 0.0
    start, end = node.time_start, node.time_end or node.time_start
    if start is None or end is None:
        return None if decay.missing_time_mode == "drop" else -MISSING_TIME_PENALTY
    lo, hi = decay.start - decay.delta, decay.end + decay.delta
    if end >= lo and start <= hi:
        return 0.0
    if decay.mode == "hard":
        return None
    distance = _gap(start, end, lo, hi)
    unit = max(decay.delta.total_seconds(), 86400.0)
    return -min(MAX_SOFT_PENALTY, 0.1 * distance / unit)


def _gap(start: datetime, end: datetime, lo: datetime, hi: datetime) -> float:
    if end < lo:
        return (lo - end).total_seconds()
    return (start - hi).total_seconds()
