"""One ``add`` call's pending writes, and how edge operations land in them.

Construction writes every node and edge of an ``add`` call in one upsert
each at the end; until then they live here, and the decisions read them as if
they were stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

import attrs

from labile.plugin import Edge, Node, Origin, Store, cosine, edge_id
from labile_realm.construct.neighbourhood import Candidate
from labile_realm.construct.ops import EdgeOp


@attrs.define
class WriteBatch:
    """Nodes and edges of one ``add`` call, written together at the end.

    Attributes:
        nodes: Pending nodes by id.
        edges: Pending edges by id.
        counts: Operation counts (reported in ``AddReport.details``).
        failures: Rejected LLM replies per operation.
        reembed: Ids of pending nodes whose description changed.
        unbuilt: Observations whose units could not be extracted (no answer
            from the model): pending, to be built again later.
    """

    nodes: dict[str, Node] = attrs.field(factory=dict)
    edges: dict[str, Edge] = attrs.field(factory=dict)
    counts: Counter[str] = attrs.field(factory=Counter)
    failures: Counter[str] = attrs.field(factory=Counter)
    reembed: set[str] = attrs.field(factory=set)
    unbuilt: list[str] = attrs.field(factory=list)

    def existing_edges(
        self, store: Store, namespace: str, node_id: str, others: Sequence[str]
    ) -> list[Edge]:
        """Live edges between ``node_id`` and ``others``, stored or pending."""
        wanted = set(others)
        found: dict[str, Edge] = {}
        for e in store.edges_of(namespace, [node_id], direction="both"):
            if (e.src in wanted or e.dst in wanted) and not e.attrs.get("retired"):
                found[e.id] = e
        for e in self.edges.values():
            if node_id in (e.src, e.dst) and (e.src in wanted or e.dst in wanted):
                found[e.id] = e
        return list(found.values())

    def apply(self, store: Store, namespace: str, ops: Sequence[EdgeOp], now: datetime) -> None:
        """Turn edge operations into pending edges.

        ``add`` and ``modify`` write the edge (keeping an existing edge's
        creation time and attributes); ``delete`` retires it (weight 0,
        ``attrs["retired"]``: stores never delete edges); ``no_change`` and
        operations on an edge that does not exist only count.
        """
        for op in ops:
            if op.action == "no_change":
                self.counts["edge_no_change"] += 1
                continue
            eid = edge_id(op.src, op.predicate, op.dst)
            old = self.edges.get(eid)
            if old is None and op.action in ("modify", "delete"):
                found = store.get_edges(namespace, [eid])
                old = found[0] if found else None
                if old is None:
                    continue
            if op.action == "delete":
                assert old is not None
                self.edges[eid] = attrs.evolve(
                    old, weight=0.0, updated_at=now,
                    attrs={**old.attrs, "retired": True, "retired_at": now.isoformat()},
                )
                self.counts["edge_delete"] += 1
                continue
            created = old.created_at if old is not None else now
            self.edges[eid] = Edge(
                id=eid, src=op.src, dst=op.dst, predicate=op.predicate,
                weight=min(1.0, max(0.0, float(op.weight))), description=op.description,
                origin=Origin.CONSTRUCTION, created_at=created, updated_at=now,
                attrs=dict(old.attrs) if old is not None else {},
            )
            self.counts[f"edge_{op.action}"] += 1


def with_previous_turn(cands: list[Candidate], prev: Node, node: Node) -> list[Candidate]:
    """``cands`` with the event of the turn before ``node`` flagged (added if missing)."""
    for c in cands:
        if c.node.id == prev.id:
            c.previous_turn = True
            return cands
    sim = cosine(node.embedding, prev.embedding) \
        if node.embedding is not None and prev.embedding is not None else 0.0
    return [*cands, Candidate(node=prev, similarity=sim, source="time", previous_turn=True)]
