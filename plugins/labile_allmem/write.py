"""Online writing (the paper's online writing): the ``allmem.write`` extractor.

Per turn: compress the evidence into a descriptor (summary + keywords, by the
``allmem.descriptor`` named in the options; see `labile_allmem.describe`),
write a new visible unit whose evidence is exactly the turn text, link it to
the previous unit of its session (temporal) and to its most similar visible
units (semantic, under the out-degree cap), and put it into the consolidation
buffer (``attrs["buffered"] = True``). Descriptor fallbacks (an LLM reply that
could not be used) are counted in the add report's
``details["allmem"]["descriptor_fallbacks"]``. If the model did not answer at
all (an outage), the batch's observations are reported pending instead, and
``Memory.repair`` describes them once it is back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import attrs
import numpy as np
from attrs.validators import ge, le
from numpy.typing import NDArray

from labile.plugin import (
    AddReport,
    ComponentSpec,
    Deps,
    Edge,
    Node,
    Observation,
    Origin,
    Store,
    bounded,
    component_field,
    edge_id,
)
from labile_allmem.decisions import DESCRIPTOR, Describer
from labile_allmem.describe import Evidence
from labile_allmem.links import SemanticLinker, clip01
from labile_allmem.schema import (
    ORIGIN_TURN,
    TEMPORAL,
    UNIT,
    iter_units,
    session_key,
    unit_id,
    unit_order,
)

__all__ = ["WriteConfig", "WriteExtractor", "format_date", "normalized_rows"]


def format_date(ts: datetime) -> str:
    """A conversational date: ``1:56 pm on 8 May, 2023``."""
    hour = ts.hour % 12 or 12
    return f"{hour}:{ts.minute:02d} {'am' if ts.hour < 12 else 'pm'} on {ts.day} {ts:%B}, {ts.year}"


def normalized_rows(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    """``vectors`` with every row scaled to unit length (zero rows stay zero)."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return np.asarray(arr / np.clip(norms, 1e-12, None), dtype=np.float32)


@attrs.frozen(kw_only=True)
class WriteConfig:
    """Options of ``allmem.write``.

    Attributes:
        descriptor: Who writes descriptors: an ``allmem.descriptor``
            (``allmem.descriptor.offline``, the default, or ``allmem.descriptor.llm``).
        semantic_cap: d_σ, the maximum active semantic out-links per unit (paper: 8).
        semantic_threshold: Minimum cosine for a semantic link.
        reverse_links: Also link each similar older unit back to the new one (its
            own cap still holds; the weakest link gives way).
        temporal: Link each turn to the previous unit of its session.

    The key ``offline`` (the descriptor's options) is still read from this
    table, for configs written when it was the writer's, and moved into the
    descriptor.
    """

    descriptor: ComponentSpec = component_field(DESCRIPTOR, f"{DESCRIPTOR}.offline",
                                                moved=("offline",))
    semantic_cap: int = attrs.field(default=8, validator=bounded(0, 10_000))
    semantic_threshold: float = attrs.field(default=0.3, validator=[ge(-1.0), le(1.0)])
    reverse_links: bool = True
    temporal: bool = True


class WriteExtractor:
    """The ``allmem.write`` extractor: one visible, buffered unit per observation."""

    def __init__(self, config: WriteConfig, deps: Deps) -> None:
        """Build from the config and the pipeline deps."""
        self.config = config
        self._store: Store = deps.store
        self._embedder = deps.embedder
        self._clock: Callable[[], datetime] = deps.clock
        self.describer: Describer = deps.registries.build(config.descriptor, deps)

    def ingest(
        self, namespace: str, observations: Sequence[Observation], report: AddReport
    ) -> None:
        """Write one unit per observation with its temporal and semantic links."""
        if not observations:
            return
        store, cfg = self._store, self.config
        existing = list(iter_units(store, namespace))
        next_seq = 1 + max((int(u.attrs.get("seq", 0)) for u in existing), default=0)
        tails: dict[str, Node] = {}
        for unit in sorted(existing, key=unit_order):
            if unit.attrs.get("origin", ORIGIN_TURN) == ORIGIN_TURN:
                tails[session_key(unit)] = unit

        # Evidence items, each with the previous turn of its session as context.
        items: list[Evidence] = []
        prev_ids: list[str | None] = []
        last: dict[str, tuple[str, str | None, str]] = {
            k: (u.id, u.attrs.get("speaker"), u.content) for k, u in tails.items()
        }
        for obs in observations:
            key = obs.session or "day:" + obs.timestamp.date().isoformat()
            prev = last.get(key)
            caption = obs.metadata.get("caption")
            items.append(
                Evidence(
                    text=obs.text, speaker=obs.speaker,
                    caption=str(caption) if caption else None,
                    when=str(obs.metadata.get("date_text") or format_date(obs.timestamp)),
                    previous=(prev[1], prev[2]) if prev is not None else None,
                )
            )
            prev_ids.append(prev[0] if prev is not None else None)
            last[key] = (unit_id(obs.id), obs.speaker, obs.text)

        fallbacks_before = self.describer.fallbacks
        unanswered_before = getattr(self.describer, "unanswered", 0)
        descriptors = self.describer.describe(items)
        if getattr(self.describer, "unanswered", 0) > unanswered_before:
            # The model did not answer (an outage, not a bad reply): rather than
            # units described by the fallback, the batch waits for a repair.
            report.pending += [o.id for o in observations]
        vectors = normalized_rows(self._embedder.embed([d.text() for d in descriptors]))
        now = self._clock()
        nodes: list[Node] = []
        for i, (obs, item, desc) in enumerate(zip(observations, items, descriptors, strict=True)):
            nodes.append(
                Node(
                    id=unit_id(obs.id), kind=UNIT, content=obs.text,
                    description=desc.description(),
                    keywords=desc.keywords, time_start=obs.timestamp, created_at=now,
                    updated_at=now, visible=True, sources=(obs.id,), embedding=vectors[i],
                    attrs={
                        "speaker": obs.speaker, "session": obs.session, "caption": item.caption,
                        "date_text": item.when, "seq": next_seq + i, "origin": ORIGIN_TURN,
                        "buffered": True, "reply_to": prev_ids[i],
                    },
                )
            )
        store.upsert_nodes(namespace, nodes)

        temporal: list[Edge] = []
        if cfg.temporal:
            for node, prev_id in zip(nodes, prev_ids, strict=True):
                if prev_id is not None:
                    temporal.append(
                        Edge(
                            id=edge_id(node.id, TEMPORAL, prev_id), src=node.id, dst=prev_id,
                            predicate=TEMPORAL, weight=1.0, origin=Origin.CONSTRUCTION,
                            created_at=now, updated_at=now,
                        )
                    )
        linker = SemanticLinker(store, namespace, cap=cfg.semantic_cap, clock=self._clock)
        semantic = self._link_semantic(linker, existing, nodes, vectors)
        written = len(temporal)
        if temporal:
            store.upsert_edges(namespace, temporal)
        written += linker.flush()
        report.nodes_written += len(nodes)
        report.edges_written += written
        details = report.details.setdefault("allmem", {})
        details["units"] = details.get("units", 0) + len(nodes)
        details["semantic_links"] = details.get("semantic_links", 0) + semantic
        details["descriptor_fallbacks"] = (
            details.get("descriptor_fallbacks", 0) + self.describer.fallbacks - fallbacks_before
        )

    def on_rollback(self, namespace: str) -> None:
        """Nothing to undo: everything this extractor knows is read from the store."""
        del namespace

    def _link_semantic(
        self,
        linker: SemanticLinker,
        existing: list[Node],
        nodes: list[Node],
        vectors: NDArray[np.float32],
    ) -> int:
        """Link each new unit to its most similar visible units, within the cap."""
        cfg = self.config
        if cfg.semantic_cap <= 0:
            return 0
        pool = [u for u in existing if u.visible and u.embedding is not None]
        dim = vectors.shape[1]
        matrix = np.zeros((len(pool) + len(nodes), dim), dtype=np.float32)
        if pool:
            matrix[: len(pool)] = normalized_rows(
                np.stack([np.asarray(u.embedding, dtype=np.float32) for u in pool]))
        ids = [u.id for u in pool]
        made = 0
        for i, node in enumerate(nodes):
            n = len(ids)
            if n:
                sims = matrix[:n] @ vectors[i]
                order = np.argsort(-sims, kind="stable")
                chosen = [
                    (ids[j], float(sims[j])) for j in order[: cfg.semantic_cap]
                    if sims[j] >= cfg.semantic_threshold
                ]
                for other, sim in chosen:
                    made += int(linker.link(node.id, other, clip01(sim)))
                    if cfg.reverse_links:
                        made += int(linker.link(other, node.id, clip01(sim)))
            matrix[n] = vectors[i]
            ids.append(node.id)
        return made
