"""What the web app shows beyond search: timeline, archived units, an edge's edits.

Plain functions over a `labile.Memory`'s store, run in a worker thread by the
routes. Each caps what it returns (``limit``) so a large namespace cannot
make one request unbounded.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import attrs

from labile import Memory
from labile_http.errors import ApiError
from labile_io.graphs import edge_dict, node_dict

#: Who an undo made over HTTP is recorded as, in the edge's history.
UNDO_BY = "http.undo"


def timeline(memory: Memory, namespace: str, *, limit: int) -> dict[str, Any]:
    """Sessions (turn count, first and last time) and up to ``limit`` dated memories by day."""
    store = memory.store
    sessions: dict[str, dict[str, Any]] = {}
    for obs in store.iter_observations(namespace):
        key = obs.session or "(no session)"
        stamp = obs.timestamp.isoformat()
        s = sessions.setdefault(key, {"session": key, "turns": 0, "first": stamp, "last": stamp})
        s["turns"] += 1
        s["first"], s["last"] = min(s["first"], stamp), max(s["last"], stamp)
    dated = sorted((n for n in store.iter_nodes(namespace) if n.time_start and n.visible),
                   key=lambda n: (n.time_start or datetime.min.replace(tzinfo=UTC), n.id))
    days: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for node in dated[:limit]:
        assert node.time_start is not None  # filtered above
        view = node_dict(node)
        days[node.time_start.date().isoformat()].append(
            {k: view[k] for k in ("id", "kind", "label", "current", "sources")})
    return {"namespace": namespace,
            "sessions": sorted(sessions.values(), key=lambda s: s["first"]),
            "days": [{"date": d, "memories": m} for d, m in sorted(days.items())],
            "dated_memories": len(dated), "shown": min(len(dated), limit)}


def archived(memory: Memory, namespace: str, *, limit: int) -> dict[str, Any]:
    """Up to ``limit`` invisible nodes (All-Mem's archived units, superseded records) with the
    edges that point at them: which derived or newer nodes replaced each."""
    store = memory.store
    # Units stand for turns (sources); run records and other bookkeeping nodes do not.
    hidden = [n for n in store.iter_nodes(namespace) if not n.visible and n.sources]
    shown = hidden[:limit]
    incoming: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in store.edges_of(namespace, [n.id for n in shown], direction="in"):
        incoming[e.dst].append({"from": e.src, "predicate": e.predicate,
                                "weight": round(e.weight, 6)})
    return {"namespace": namespace, "total": len(hidden),
            "units": [{**node_dict(n), "replaced_by": incoming.get(n.id, [])} for n in shown]}


def edge_audit(memory: Memory, namespace: str, edge_id: str) -> dict[str, Any]:
    """The edge with its reconsolidation edits (oldest first), and whether one can be undone."""
    found = memory.store.get_edges(namespace, [edge_id])
    if not found:
        raise ApiError(404, f"no edge {edge_id!r} in namespace {namespace!r}", "id")
    view = edge_dict(found[0])
    view["undoable"] = bool(view["history"])
    return view


def undo_last_edit(memory: Memory, namespace: str, edge_id: str) -> dict[str, Any]:
    """Restore the weight the edge had before its latest edit (an edge that edit created is
    retired: weight 0), and record the undo in its history.

    Raises:
        ApiError: no such edge (404), or it has no edit to undo (409).
    """
    from labile_realm.reconsolidate import HISTORY_KEY, undo

    with memory.write_lock, memory.store.batch(namespace):
        before = edge_audit(memory, namespace, edge_id)
        if not before["history"]:
            raise ApiError(409, f"edge {edge_id!r} has no reconsolidation edit to undo", "id")
        last = before["history"][-1]
        undo(memory.store, namespace, [{"edge": edge_id, "old_weight": last.get("old_weight")}])
        edge = memory.store.get_edges(namespace, [edge_id])[0]
        entry = {"at": datetime.now(UTC).isoformat(), "by": UNDO_BY, "decision": "undo",
                 "old_weight": before["weight"], "new_weight": edge.weight,
                 "confidence": 1.0, "reason": f"undo of the edit made at {last.get('at')}"}
        history = [*edge.attrs.get(HISTORY_KEY, []), entry]
        memory.store.upsert_edges(namespace, [attrs.evolve(
            edge, attrs={**edge.attrs, HISTORY_KEY: history})])
    memory.reload_components()  # retrieval may cache the graph's weights
    return edge_audit(memory, namespace, edge_id)
