"""Split, Merge and Update on REALM's graph, without destroying evidence.

All-Mem's operators, written in REALM's own vocabulary so that REALM's
retrieval and reconsolidation understand the result (no All-Mem link kinds
REALM never follows):

* **Split** of an event creates one visible ``realm.event`` per segment (its
  text an exact passage of the source's), linked ``source -realm.comprises->
  part`` (the target is a part of the source); the parts take over the
  source's place in its episode and in the turn order (``comprises`` from the
  episode, ``precedes``), and the source is archived.
* **Merge** creates one visible ``realm.event`` whose evidence is the members'
  texts joined (oldest first), linked ``merged -realm.summarizes-> member``
  for each member; it takes over every edge of every member (two units that
  say the same thing relate to the same things), and the members are archived.
* **Update** links ``current -realm.supersedes-> old`` and archives the old
  event; the current event keeps its text and description.

Archiving flips ``visible``; nothing is deleted and no evidence is rewritten,
so REALM's typed expansion still reaches every archived event through the
links above. New ids derive from their targets, so replaying the same plans
on the same state writes the same graph.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Final

import attrs
import numpy as np

from labile.plugin import Edge, Embedder, Node, Origin, Store, edge_id, superseded
from labile_realm.schema import COMPRISES, EPISODE, PRECEDES, SUMMARIZES, SUPERSEDES
from labile_text.keywords import keyphrases
from labile_unite.evidence import ORIGIN, said_at

__all__ = ["RealmExecutor", "merged_id", "part_id"]

#: Edges a split part takes over from its source: its place in the episode and the turn order.
_PART_CARRY: Final = frozenset({COMPRISES, PRECEDES})


def part_id(source_id: str, index: int) -> str:
    """The id of the ``index``-th (1-based) split part of ``source_id``."""
    return f"{source_id}~s{index}"


def merged_id(member_ids: Sequence[str]) -> str:
    """The id of the event merging ``member_ids`` (order-independent)."""
    digest = hashlib.sha1("\n".join(sorted(member_ids)).encode("utf-8")).hexdigest()
    return f"m:{digest[:16]}"


def _said(node: Node) -> datetime:
    return said_at(node) or datetime.min


class RealmExecutor:
    """Applies Split / Merge / Update to REALM events of one namespace (module doc)."""

    def __init__(self, store: Store, namespace: str, *, embedder: Embedder,
                 clock: Callable[[], datetime]) -> None:
        """Create the executor (writes happen inside the caller's batch)."""
        self._store, self._ns, self._embedder, self._clock = store, namespace, embedder, clock

    def split(self, event: Node, segments: Sequence[str]) -> tuple[str, ...]:
        """Replace ``event`` on the surface by one part per segment; returns their ids."""
        now = self._clock()
        head = _speaker_prefix(event)
        descriptions = [f"{head}: {seg}" if head else seg for seg in segments]
        vectors = self._embed(descriptions)
        parts = [
            attrs.evolve(
                event, id=part_id(event.id, i + 1), content=seg, description=desc,
                keywords=tuple(keyphrases(seg, k=5)), embedding=vectors[i], visible=True,
                created_at=now, updated_at=now,
                attrs={**event.attrs, "description": desc, ORIGIN: "split",
                       "derived_from": [event.id], "segment": i + 1},
            )
            for i, (seg, desc) in enumerate(zip(segments, descriptions, strict=True))
        ]
        self._store.upsert_nodes(self._ns, parts)
        edges = [self._edge(event.id, COMPRISES, p.id, now) for p in parts]
        edges.extend(self._carry([event], parts, now, only=_PART_CARRY))
        self._store.upsert_edges(self._ns, edges)
        self._archive([event], now)
        return tuple(p.id for p in parts)

    def merge(self, members: Sequence[Node]) -> str:
        """Replace ``members`` on the surface by one merged event; returns its id."""
        now = self._clock()
        ordered = sorted(members, key=lambda n: (_said(n), n.id))
        latest = ordered[-1]
        sources = tuple(dict.fromkeys(s for m in ordered for s in m.sources))
        keywords = tuple(dict.fromkeys(k for m in reversed(ordered) for k in m.keywords))[:8]
        starts = [m.time_start for m in ordered if m.time_start is not None]
        ends = [m.time_end or m.time_start for m in ordered if m.time_start is not None]
        merged = attrs.evolve(
            latest, id=merged_id([m.id for m in ordered]),
            content="\n".join(m.content for m in ordered), keywords=keywords,
            time_start=min(starts) if starts else None,
            time_end=max(e for e in ends if e is not None) if ends else None,
            sources=sources, visible=True, created_at=now, updated_at=now,
            attrs={**latest.attrs, ORIGIN: "merge", "derived_from": [m.id for m in ordered]},
        )
        self._store.upsert_nodes(self._ns, [merged])
        edges = [self._edge(merged.id, SUMMARIZES, m.id, now) for m in ordered]
        edges.extend(self._carry(ordered, [merged], now))
        self._store.upsert_edges(self._ns, edges)
        self._archive(ordered, now)
        return merged.id

    def update(self, current: Node, old: Node) -> None:
        """Link ``current`` to the ``old`` event it supersedes and archive ``old``."""
        now = self._clock()
        self._store.upsert_edges(self._ns, [self._edge(current.id, SUPERSEDES, old.id, now)])
        self._archive([old], now, replaced_by=current)

    # -- helpers ----------------------------------------------------------
    def _embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        vecs = np.asarray(self._embedder.embed(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return list(vecs / np.where(norms > 0, norms, 1.0))

    def _edge(self, src: str, predicate: str, dst: str, now: datetime) -> Edge:
        return Edge(id=edge_id(src, predicate, dst), src=src, dst=dst, predicate=predicate,
                    weight=1.0, origin=Origin.CONSOLIDATION, created_at=now, updated_at=now)

    def _carry(self, old: Sequence[Node], new: Sequence[Node], now: datetime,
               only: frozenset[str] | None = None) -> list[Edge]:
        """The edges of ``old`` nodes (to nodes outside them), re-attached to each new node."""
        old_ids = {n.id for n in old}
        edges = self._store.edges_of(self._ns, sorted(old_ids), direction="both")
        out: dict[str, Edge] = {}
        for e in edges:
            if only is not None and e.predicate not in only:
                continue
            if e.src in old_ids and e.dst in old_ids:
                continue
            for node in new:
                src = node.id if e.src in old_ids else e.src
                dst = node.id if e.dst in old_ids else e.dst
                eid = edge_id(src, e.predicate, dst)
                out.setdefault(eid, attrs.evolve(e, id=eid, src=src, dst=dst,
                                                 origin=Origin.CONSOLIDATION,
                                                 created_at=now, updated_at=now))
        if only is not None:
            # A part's place in the turn order: only the episode's comprises
            # and the neighbours' precedes, never a part of the source itself.
            episodes = {n.id for n in self._store.get_nodes(
                self._ns, sorted({e.src for e in out.values() if e.predicate == COMPRISES}))
                if n.kind == EPISODE}
            out = {k: e for k, e in out.items()
                   if e.predicate != COMPRISES or e.src in episodes}
        return list(out.values())

    def _archive(self, nodes: Sequence[Node], now: datetime,
                 replaced_by: Node | None = None) -> None:
        """Hide ``nodes``; with ``replaced_by`` (an Update), also write the validity
        contract REALM's construction writes (`labile.plugin.superseded`), so both
        mechanisms keep one record of what is current."""
        current = self._store.get_nodes(self._ns, [n.id for n in nodes])
        if replaced_by is not None:
            current = [superseded(n, replaced_by.id, replaced_by.learned_at) for n in current]
        self._store.upsert_nodes(self._ns, [attrs.evolve(n, visible=False, updated_at=now)
                                            for n in current])


def _speaker_prefix(event: Node) -> str:
    """``"On <date>, <speaker> said …"``: the part of a REALM event description before
    the quoted text (empty when the description has no such head)."""
    head, sep, _ = event.description.partition(": ")
    return head if sep and len(head) < 120 else ""
