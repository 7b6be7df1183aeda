"""The rule-based executor of validated plans (ATC, Algorithm 1: execution).

Nothing here asks a model (sibling descriptors come from the configured
describer, like any new unit's). Every edit is non-destructive: it creates
units, archives units (``visible`` flips to ``False``, nothing else changes)
and adds links; no unit is deleted and no evidence is rewritten.

* **Split** creates one visible sibling per segment (evidence = the segment,
  time/speaker/sources inherited), links the siblings to each other
  (``allmem.sibling``) and each one to the source (``allmem.lineage``), carries
  the source's temporal links over, then archives the source.
* **Merge** creates one canonical visible unit (evidence = the members'
  evidence joined by newlines, oldest first; sources = their union; the
  planned descriptor), links it to every member (``allmem.lineage``), carries
  their temporal links over, then archives the members.
* **Update** refreshes the current unit's descriptor and embedding, links it to
  the superseded unit (``allmem.version``), then archives the superseded unit.

Then the semantic links are rewired: every active semantic link into or out of
an archived unit is deactivated, and the new (or refreshed) units are linked in
both directions to the visible units the archived ones were linked with, if
similar enough; every touched node is pruned back to the cap d_σ.

New ids are derived from the target (``<source>~s<i>`` for siblings,
``m:<hash of member ids>`` for a merged unit), so two runs over the same state
with the same plans produce the same graph.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime

import attrs
import numpy as np

from labile.plugin import Edge, Embedder, Node, Origin, Store, edge_id, superseded
from labile_allmem.consolidate.plan_offline import evidence_of
from labile_allmem.decisions import Describer
from labile_allmem.describe import Descriptor
from labile_allmem.links import SemanticLinker, clip01
from labile_allmem.schema import (
    LINEAGE,
    ORIGIN_MERGE,
    ORIGIN_SPLIT,
    SEMANTIC,
    SIBLING,
    TEMPORAL,
    UNIT,
    VERSION,
    is_active,
    unit_order,
)
from labile_allmem.write import normalized_rows

__all__ = ["Executor", "merged_id", "sibling_id"]


def sibling_id(source_id: str, index: int) -> str:
    """The id of the ``index``-th (1-based) split sibling of ``source_id``."""
    return f"{source_id}~s{index}"


def merged_id(member_ids: Sequence[str]) -> str:
    """The id of the unit merging ``member_ids`` (order-independent)."""
    digest = hashlib.sha1("\n".join(sorted(member_ids)).encode("utf-8")).hexdigest()
    return f"m:{digest[:16]}"


class Executor:
    """Applies validated plans to one namespace (see the module doc)."""

    def __init__(
        self,
        store: Store,
        namespace: str,
        *,
        embedder: Embedder,
        describer: Describer,
        cap: int,
        threshold: float,
        clock: Callable[[], datetime],
    ) -> None:
        """Create the executor.

        Args:
            store: The store (writes happen inside the caller's batch).
            namespace: The namespace edited.
            embedder: Embeds new and refreshed descriptors.
            describer: Describes split siblings.
            cap: d_σ for rewired semantic links.
            threshold: Minimum cosine of a rewired semantic link.
            clock: Time source.
        """
        self._store, self._ns = store, namespace
        self._embedder, self._describer = embedder, describer
        self._cap, self._threshold, self._clock = cap, threshold, clock

    # -- operators ------------------------------------------------------------
    def split(self, unit: Node, segments: Sequence[str]) -> tuple[str, ...]:
        """Replace ``unit`` on the surface by one sibling per segment; returns their ids."""
        now = self._clock()
        base = evidence_of(unit, self._store)
        descs = self._describer.describe([attrs.evolve(base, text=seg) for seg in segments])
        vecs = self._embed(descs)
        siblings = [
            Node(
                id=sibling_id(unit.id, i + 1), kind=UNIT, content=seg, description=d.description(),
                keywords=d.keywords, time_start=unit.time_start, time_end=unit.time_end,
                created_at=now, updated_at=now, visible=True, sources=unit.sources,
                embedding=vecs[i],
                attrs={**_inherited(unit), "seq": unit.attrs.get("seq", 0),
                       "reply_to": unit.attrs.get("reply_to"),
                       "origin": ORIGIN_SPLIT, "buffered": False, "derived_from": [unit.id],
                       "segment": i + 1},
            )
            for i, (seg, d) in enumerate(zip(segments, descs, strict=True))
        ]
        self._store.upsert_nodes(self._ns, siblings)
        edges: list[Edge] = []
        for i, a in enumerate(siblings):
            edges.append(self._edge(a.id, LINEAGE, unit.id, now))
            edges.extend(self._edge(a.id, SIBLING, b.id, now) for b in siblings[i + 1:])
        edges.extend(self._temporal_carry([unit], siblings, now))
        self._store.upsert_edges(self._ns, edges)
        self._archive([unit], now)
        self._rewire([unit], siblings)
        return tuple(s.id for s in siblings)

    def merge(self, units: Sequence[Node], summary: str, keywords: Sequence[str]) -> str:
        """Replace ``units`` on the surface by one canonical unit; returns its id."""
        now = self._clock()
        members = sorted(units, key=unit_order)
        latest = members[-1]
        sources = tuple(dict.fromkeys(s for u in members for s in u.sources))
        speakers = {u.attrs.get("speaker") for u in members}
        captions = [c for c in dict.fromkeys(u.attrs.get("caption") for u in members) if c]
        times = [u.time_start for u in members if u.time_start is not None]
        desc = Descriptor(summary=summary, keywords=tuple(keywords),
                          when=self._when(latest))
        canonical = Node(
            id=merged_id([u.id for u in members]), kind=UNIT,
            content="\n".join(u.content for u in members),
            description=desc.description(), keywords=desc.keywords,
            time_start=min(times) if times else None,
            time_end=max(times) if len(times) > 1 else None,
            created_at=now, updated_at=now, visible=True, sources=sources,
            embedding=self._embed([desc])[0],
            attrs={
                "speaker": speakers.pop() if len(speakers) == 1 else None,
                "session": latest.attrs.get("session"),
                "caption": " | ".join(captions) or None,
                "date_text": latest.attrs.get("date_text"),
                "seq": max(int(u.attrs.get("seq", 0)) for u in members),
                "origin": ORIGIN_MERGE, "buffered": False,
                "derived_from": [u.id for u in members],
            },
        )
        self._store.upsert_nodes(self._ns, [canonical])
        edges = [self._edge(canonical.id, LINEAGE, u.id, now) for u in members]
        edges.extend(self._temporal_carry(members, [canonical], now))
        self._store.upsert_edges(self._ns, edges)
        self._archive(members, now)
        self._rewire(members, [canonical])
        return canonical.id

    def update(self, current: Node, old: Node, summary: str, keywords: Sequence[str]) -> None:
        """Refresh ``current``'s descriptor, archive ``old``, link current -> old."""
        now = self._clock()
        desc = Descriptor(summary=summary, keywords=tuple(keywords), when=self._when(current))
        superseded = [*current.attrs.get("supersedes", []), old.id]
        refreshed = attrs.evolve(
            current, description=desc.description(), keywords=desc.keywords,
            embedding=self._embed([desc])[0], updated_at=now,
            attrs={**current.attrs, "supersedes": superseded},
        )
        self._store.upsert_nodes(self._ns, [refreshed])
        self._store.upsert_edges(self._ns, [self._edge(current.id, VERSION, old.id, now)])
        self._archive([old], now, replaced_by=current)
        self._rewire([old], [refreshed])

    # -- helpers ------------------------------------------------------------
    def _when(self, unit: Node) -> str:
        """The date tag a unit's description carries ("" if none)."""
        when = unit.attrs.get("date_text")
        return str(when) if when and unit.description.startswith(f"[{when}] ") else ""

    def _embed(self, descs: Sequence[Descriptor]) -> np.ndarray:
        return normalized_rows(self._embedder.embed([d.text() for d in descs]))

    def _edge(self, src: str, predicate: str, dst: str, now: datetime) -> Edge:
        return Edge(id=edge_id(src, predicate, dst), src=src, dst=dst, predicate=predicate,
                    weight=1.0, origin=Origin.CONSOLIDATION, created_at=now, updated_at=now)

    def _archive(self, units: Sequence[Node], now: datetime,
                 replaced_by: Node | None = None) -> None:
        """Flip visibility off; nothing else about the unit changes, except that an
        Update (``replaced_by``) also writes the validity contract every bundle
        reads (`labile.plugin.superseded`: ``valid_to``, ``superseded_by``)."""
        current = self._store.get_nodes(self._ns, [u.id for u in units])
        if replaced_by is not None:
            current = [superseded(u, replaced_by.id, replaced_by.learned_at) for u in current]
        self._store.upsert_nodes(
            self._ns, [attrs.evolve(u, visible=False, updated_at=now) for u in current]
        )

    def _temporal_carry(
        self, old: Sequence[Node], new: Sequence[Node], now: datetime
    ) -> list[Edge]:
        """Give the new units the temporal neighbours of the units they replace."""
        old_ids = {u.id for u in old}
        out_edges = self._store.edges_of(self._ns, list(old_ids), direction="out",
                                         predicates=[TEMPORAL])
        in_edges = self._store.edges_of(self._ns, list(old_ids), direction="in",
                                        predicates=[TEMPORAL])
        edges: list[Edge] = []
        for e in out_edges:
            if e.dst not in old_ids:
                edges.extend(self._temporal(n.id, e.dst, now) for n in new)
        for e in in_edges:
            if e.src not in old_ids:
                edges.extend(self._temporal(e.src, n.id, now) for n in new)
        return edges

    def _temporal(self, src: str, dst: str, now: datetime) -> Edge:
        return Edge(id=edge_id(src, TEMPORAL, dst), src=src, dst=dst, predicate=TEMPORAL,
                    weight=1.0, origin=Origin.CONSOLIDATION, created_at=now, updated_at=now)

    def _rewire(self, archived: Sequence[Node], fresh: Sequence[Node]) -> None:
        """Move semantic links off archived units onto the fresh ones, within the cap."""
        linker = SemanticLinker(self._store, self._ns, cap=self._cap, clock=self._clock,
                                origin=Origin.CONSOLIDATION)
        gone = {u.id for u in archived}
        new_ids = {u.id for u in fresh}
        touching = [
            e for e in self._store.edges_of(self._ns, sorted(gone), direction="both",
                                            predicates=[SEMANTIC])
            if is_active(e)
        ]
        neighbours: set[str] = set()
        for e in sorted(touching, key=lambda e: e.id):
            linker.unlink(e.src, e.dst, reason="rewired")
            for end in (e.src, e.dst):
                if end not in gone and end not in new_ids:
                    neighbours.add(end)
        candidates = [
            n for n in self._store.get_nodes(self._ns, sorted(neighbours))
            if n.visible and n.kind == UNIT and n.embedding is not None
        ]
        touched = set(gone)
        if candidates and self._cap > 0:
            cand_vecs = normalized_rows(
                np.stack([np.asarray(n.embedding, dtype=np.float32) for n in candidates]))
            for node in fresh:
                if node.embedding is None:
                    continue
                vec = normalized_rows(np.asarray(node.embedding))[0]
                sims = cand_vecs @ vec
                order = np.argsort(-sims, kind="stable")
                for j in order:
                    sim = float(sims[j])
                    if sim < self._threshold:
                        break
                    other = candidates[j].id
                    linker.link(node.id, other, clip01(sim))
                    linker.link(other, node.id, clip01(sim))
                    touched.update((node.id, other))
        linker.enforce(touched | new_ids)
        linker.flush()


def _inherited(unit: Node) -> dict[str, object]:
    """The attrs a derived unit takes over from its source."""
    keep = ("speaker", "session", "caption", "date_text")
    return {k: unit.attrs.get(k) for k in keep}
