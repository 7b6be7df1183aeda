"""The confidence gate and Norm (ATC, Algorithm 1: gate and Norm).

`gate` keeps a proposal iff its confidence reaches its operator's threshold.
`normalize` then turns the accepted proposals into per-operator queues:

* ids are canonicalised: surrounding whitespace stripped, and a raw turn id
  resolved to its unit id (``"D1:3"`` -> ``"u:D1:3"``) when only that exists;
* invalid targets are dropped with a reason: unknown operator, unknown id, a
  node that is not a unit, wrong arity (Split 1 id, Merge >= 2 distinct ids,
  Update exactly 2), or an Update whose "current" unit is older than the one
  it would supersede;
* duplicates are merged: Merge targets are sets (sorted oldest first), Split
  and Update targets are ordered; one queue entry per distinct target keeps the
  highest confidence;
* each queue is sorted by confidence (highest first), then by target ids, so
  the serial execution order never depends on diagnosis order.

Visibility and "already touched" are *not* checked here: they can change while
the queues execute, so the executor re-checks them right before planning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from labile.plugin import Node, Store
from labile_allmem.consolidate.records import OPS, Proposal
from labile_allmem.schema import is_unit, unit_id, unit_order

__all__ = ["Dropped", "gate", "normalize"]

#: ``(proposal, reason)`` of a proposal Norm dropped.
Dropped = tuple[Proposal, str]


def gate(
    proposals: Sequence[Proposal], thresholds: Mapping[str, float]
) -> tuple[list[Proposal], list[Proposal]]:
    """Split proposals into accepted (p >= θ_op) and rejected ones.

    Proposals of an operator without a threshold are rejected.
    """
    accepted, rejected = [], []
    for prop in proposals:
        theta = thresholds.get(prop.op)
        if theta is not None and prop.confidence >= theta:
            accepted.append(prop)
        else:
            rejected.append(prop)
    return accepted, rejected


def normalize(
    proposals: Sequence[Proposal], store: Store, namespace: str
) -> tuple[dict[str, list[Proposal]], list[Dropped]]:
    """Canonicalise, validate and deduplicate accepted proposals into per-op queues.

    Returns:
        ``(queues, dropped)``: ``queues[op]`` in execution order for each op of
        `OPS`, and every dropped proposal with its reason.
    """
    raw_ids = {t.strip() for p in proposals for t in p.target}
    lookup = {*raw_ids, *(unit_id(i) for i in raw_ids)}
    nodes = {n.id: n for n in store.get_nodes(namespace, sorted(lookup))}
    best: dict[tuple[str, tuple[str, ...]], Proposal] = {}
    dropped: list[Dropped] = []
    for prop in proposals:
        canonical, reason = _canonical(prop, nodes)
        if canonical is None:
            dropped.append((prop, reason))
            continue
        key = (canonical.op, canonical.target)
        old = best.get(key)
        if old is None or canonical.confidence > old.confidence:
            best[key] = canonical
    queues: dict[str, list[Proposal]] = {op: [] for op in OPS}
    for prop in best.values():
        queues[prop.op].append(prop)
    for queue in queues.values():
        # Offline confidences are per kind of rule; the raw strength orders within one.
        queue.sort(key=lambda p: (-p.confidence, -(p.raw or 0.0), p.target))
    return queues, dropped


def _canonical(prop: Proposal, nodes: Mapping[str, Node]) -> tuple[Proposal | None, str]:
    if prop.op not in OPS:
        return None, f"unknown operator {prop.op!r}"
    ids: list[str] = []
    for raw in prop.target:
        tid = raw.strip()
        if tid not in nodes and unit_id(tid) in nodes:
            tid = unit_id(tid)
        node = nodes.get(tid)
        if node is None:
            return None, f"unknown id {raw!r}"
        if not is_unit(node):
            return None, f"{tid!r} is not a memory unit"
        ids.append(tid)
    if prop.op == "split":
        if len(ids) != 1:
            return None, f"split takes one unit, got {len(ids)}"
        target = tuple(ids)
    elif prop.op == "merge":
        distinct = sorted(set(ids), key=lambda i: unit_order(nodes[i]))
        if len(distinct) < 2:
            return None, "merge needs at least two distinct units"
        target = tuple(distinct)
    else:
        if len(ids) != 2 or ids[0] == ids[1]:
            return None, "update takes (current, superseded): two distinct units"
        if unit_order(nodes[ids[0]]) < unit_order(nodes[ids[1]]):
            return None, "the current unit is older than the one it would supersede"
        target = (ids[0], ids[1])
    conf = min(1.0, max(0.0, float(prop.confidence)))
    return Proposal(op=prop.op, target=target, confidence=conf, reason=prop.reason,
                    anchor=prop.anchor, raw=prop.raw, kind=prop.kind), ""
