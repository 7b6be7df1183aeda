"""Semantic links under the out-degree cap d_σ, shared by the write path and ATC.

`SemanticLinker` is the only writer of ``allmem.semantic`` edges. It keeps, for
every node it has touched, the node's *active* semantic out-edges, and admits a
new link only within the cap: when a node already has d_σ active out-links, the
new one replaces the weakest if it is stronger, and is refused otherwise
(ties broken by the target id, so the outcome never depends on set order).
A replaced link is deactivated, never deleted (the store has no deletion).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

import attrs

from labile.plugin import Edge, Origin, Store, edge_id
from labile_allmem.schema import SEMANTIC, is_active


def clip01(value: float) -> float:
    """``value`` clipped to [0, 1] (edge weights must lie there)."""
    return 0.0 if value != value else min(1.0, max(0.0, float(value)))


class SemanticLinker:
    """Adds and removes semantic links of one namespace, enforcing the cap.

    Writes are buffered until `flush`; reads of the links of a node go through
    the linker's view, which already includes the buffered changes. Use one
    linker per write batch or consolidation target and flush it before anyone
    else reads semantic edges from the store.
    """

    def __init__(
        self,
        store: Store,
        namespace: str,
        *,
        cap: int,
        clock: Callable[[], datetime],
        origin: Origin = Origin.CONSTRUCTION,
    ) -> None:
        """Create a linker.

        Args:
            store: Where the links live.
            namespace: The namespace written.
            cap: d_σ, the maximum number of active semantic out-links per node.
            clock: The time source for edge timestamps.
            origin: The origin stamped on the links this linker writes.
        """
        self._store, self._ns, self._cap = store, namespace, cap
        self._clock, self._origin = clock, origin
        self._out: dict[str, dict[str, Edge]] = {}
        self._pending: dict[str, Edge] = {}

    @property
    def cap(self) -> int:
        """d_σ."""
        return self._cap

    def _load(self, src: str) -> dict[str, Edge]:
        out = self._out.get(src)
        if out is None:
            edges = self._store.edges_of(self._ns, [src], direction="out", predicates=[SEMANTIC])
            out = {e.dst: e for e in edges if is_active(e)}
            self._out[src] = out
        return out

    def link(self, src: str, dst: str, weight: float) -> bool:
        """Add ``src -> dst`` with ``weight`` if the cap allows it.

        An existing active link keeps the larger of its weight and ``weight``.

        Returns:
            Whether the link is active afterwards.
        """
        if src == dst:
            return False
        weight = clip01(weight)
        out = self._load(src)
        old = out.get(dst)
        if old is not None:
            if weight > old.weight:
                self._put(attrs.evolve(old, weight=weight, updated_at=self._clock()))
            return True
        if self._cap <= 0:
            return False
        if len(out) >= self._cap:
            weakest = _weakest(out)
            if not _stronger(weight, dst, weakest):
                return False
            self.unlink(src, weakest.dst, reason="pruned")
        now = self._clock()
        self._put(
            Edge(
                id=edge_id(src, SEMANTIC, dst), src=src, dst=dst, predicate=SEMANTIC,
                weight=weight, origin=self._origin, created_at=now, updated_at=now,
                attrs={"active": True},
            )
        )
        return True

    def unlink(self, src: str, dst: str, *, reason: str) -> bool:
        """Deactivate ``src -> dst`` (weight 0, ``active = False``) if it is active."""
        out = self._load(src)
        edge = out.get(dst)
        if edge is None:
            return False
        dead = attrs.evolve(
            edge, weight=0.0, updated_at=self._clock(), origin=self._origin,
            attrs={**edge.attrs, "active": False, "reason": reason},
        )
        del out[dst]
        self._pending[dead.id] = dead
        return True

    def enforce(self, ids: Iterable[str]) -> int:
        """Prune every node of ``ids`` down to the cap; returns links deactivated."""
        pruned = 0
        for src in sorted(set(ids)):
            out = self._load(src)
            while len(out) > self._cap:
                weakest = _weakest(out)
                self.unlink(src, weakest.dst, reason="pruned")
                pruned += 1
        return pruned

    def _put(self, edge: Edge) -> None:
        self._load(edge.src)[edge.dst] = edge
        self._pending[edge.id] = edge

    def flush(self) -> int:
        """Write the buffered changes; returns how many edges were written."""
        if not self._pending:
            return 0
        edges = [self._pending[k] for k in sorted(self._pending)]
        self._store.upsert_edges(self._ns, edges)
        self._pending.clear()
        return len(edges)


def _weakest(out: dict[str, Edge]) -> Edge:
    """The weakest link: lowest weight; on a tie, the larger target id."""
    low = min(e.weight for e in out.values())
    return max((e for e in out.values() if e.weight == low), key=lambda e: e.dst)


def _stronger(weight: float, dst: str, than: Edge) -> bool:
    """Whether a link to ``dst`` with ``weight`` beats ``than`` (same tie rule)."""
    return weight > than.weight or (weight == than.weight and dst < than.dst)
