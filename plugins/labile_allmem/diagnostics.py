"""All-Mem diagnostics, behind ``labile inspect allmem``.

The paper's structural measures: the visible surface and budgeted recoverability.

`inspect_namespace` reports, for one namespace:

* the visible surface against the history: turns observed, units written,
  visible units, archived units, and the same figures at every consolidation
  run (the edit log);
* budgeted recoverability: for every archived unit, the directed hop distance
  from the visible surface V+ over active typed links (any All-Mem predicate,
  followed in its stored direction; a symmetric ``sibling`` link is stored both
  ways). Reported: % unreachable, median distance, H_0.95 (the smallest hop
  budget within which 95% of archived units are reachable) and the share
  reachable within the configured budget H;
* link statistics: active/inactive links per type and the largest active
  semantic out-degree (must not exceed d_σ);
* edit counts by operator and outcome, summed over the edit log;
* per-stage retrieval latency (p50/p95 of query embedding, each stage and the
  total) when retrieval results are passed in.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Sequence
from typing import Any

from labile.plugin import RetrievalResult, Store
from labile_allmem.consolidate.atc import run_records
from labile_allmem.consolidate.records import OPS
from labile_allmem.schema import ALL_PREDICATES, SEMANTIC, SHORT_BY_PREDICATE, is_active, iter_units

__all__ = ["hop_distances", "inspect_namespace", "percentile"]


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0–100) by linear interpolation; ``None`` if empty."""
    if not values:
        return None
    data = sorted(values)
    pos = (len(data) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return float(data[lo] + (data[hi] - data[lo]) * (pos - lo))


def hop_distances(store: Store, namespace: str) -> tuple[dict[str, int | None], dict[str, Any]]:
    """Directed hop distance from the visible surface to every archived unit.

    Returns:
        ``(distances, links)``: archived unit id -> hops (``None`` if unreachable),
        and the link statistics (active/inactive per type, max semantic out-degree).
    """
    units = list(iter_units(store, namespace))
    visible = {u.id for u in units if u.visible}
    archived = [u.id for u in units if not u.visible]
    adjacency: dict[str, list[str]] = {}
    active: Counter[str] = Counter()
    inactive: Counter[str] = Counter()
    semantic_out: Counter[str] = Counter()
    wanted = set(ALL_PREDICATES)
    for edge in store.iter_edges(namespace):
        if edge.predicate not in wanted:
            continue
        short = SHORT_BY_PREDICATE[edge.predicate]
        if not is_active(edge):
            inactive[short] += 1
            continue
        active[short] += 1
        adjacency.setdefault(edge.src, []).append(edge.dst)
        if edge.predicate == SEMANTIC:
            semantic_out[edge.src] += 1
    dist: dict[str, int] = {v: 0 for v in visible}
    queue = deque(sorted(visible))
    while queue:
        node = queue.popleft()
        for nxt in adjacency.get(node, ()):
            if nxt not in dist:
                dist[nxt] = dist[node] + 1
                queue.append(nxt)
    links = {
        "active": dict(sorted(active.items())),
        "inactive": dict(sorted(inactive.items())),
        "max_semantic_out_degree": max(semantic_out.values(), default=0),
    }
    return {a: dist.get(a) for a in archived}, links


def inspect_namespace(
    store: Store,
    namespace: str,
    *,
    hop_budget: int = 4,
    results: Sequence[RetrievalResult] = (),
) -> dict[str, Any]:
    """Diagnostics of one namespace as a JSON-friendly dict (see the module doc).

    Args:
        store: The store holding the namespace (read only).
        namespace: The namespace.
        hop_budget: H for "reachable within budget" (the expander's hop budget).
        results: Retrieval results to summarise latency from (e.g. from a benchmark).

    Returns:
        ``{"surface", "recoverability", "links", "edits", "runs", "latency_ms"}``.
    """
    units = list(iter_units(store, namespace))
    history = sum(1 for _ in store.iter_observations(namespace))
    visible = sum(1 for u in units if u.visible)
    by_origin = Counter(str(u.attrs.get("origin", "turn")) for u in units)
    buffered = sum(1 for u in units if u.attrs.get("buffered"))
    surface = {
        "history": history,
        "units": len(units),
        "visible": visible,
        "archived": len(units) - visible,
        "buffered": buffered,
        "visible_per_turn": round(visible / history, 4) if history else None,
        "shrink_ratio": round(1 - visible / history, 4) if history else None,
        "units_by_origin": dict(sorted(by_origin.items())),
    }

    distances, links = hop_distances(store, namespace)
    reached = [d for d in distances.values() if d is not None]
    n_arch = len(distances)
    h95: int | None = None
    if reached and n_arch:
        need = math.ceil(0.95 * n_arch)
        counts = Counter(reached)
        total = 0
        for h in sorted(counts):
            total += counts[h]
            if total >= need:
                h95 = h
                break
    recoverability = {
        "archived": n_arch,
        "unreachable": n_arch - len(reached),
        "pct_unreachable": round(100 * (n_arch - len(reached)) / n_arch, 2) if n_arch else 0.0,
        "median_hops": percentile(reached, 50),
        "h95": h95,
        "hop_budget": hop_budget,
        "pct_within_budget": (
            round(100 * sum(1 for d in reached if d <= hop_budget) / n_arch, 2)
            if n_arch else 100.0
        ),
        "histogram": {str(h): c for h, c in sorted(Counter(reached).items())},
    }

    runs = run_records(store, namespace)
    edits: dict[str, dict[str, int]] = {op: {} for op in OPS}
    for run in runs:
        for key, value in run["counts"].items():
            op, _, stage = key.partition(".")
            if op in edits and stage:
                edits[op][stage] = edits[op].get(stage, 0) + int(value)
    timeline = [
        {"run": r["run"], "history": r.get("history"), "units": r.get("total_units"),
         "visible": r.get("visible_units"), "executed": r["counts"].get("executed", 0),
         "ms": r.get("ms", {}).get("total")}
        for r in runs
    ]
    return {
        "namespace": namespace,
        "surface": surface,
        "recoverability": recoverability,
        "links": links,
        "edits": edits,
        "runs": timeline,
        "latency_ms": _latency(results),
    }


def _latency(results: Sequence[RetrievalResult]) -> dict[str, dict[str, float | None]]:
    """p50/p95 per retrieval stage over ``results`` (empty when none are given)."""
    if not results:
        return {}
    stages: dict[str, list[float]] = {"embed": [], "total": []}
    for res in results:
        stages["embed"].append(res.embed_ms)
        stages["total"].append(res.total_ms)
        for step in res.trace:
            stages.setdefault(f"{step.stage}:{step.atom}", []).append(step.ms)
    return {
        name: {"p50": percentile(vals, 50), "p95": percentile(vals, 95), "n": float(len(vals))}
        for name, vals in stages.items()
    }
