"""``unite.atc``: All-Mem's non-destructive consolidation over REALM's typed graph.

One run over a namespace:

1. the buffer is every visible ``realm.event`` not yet diagnosed
   (`labile_unite.evidence`); each is diagnosed over its top-k visible
   events by All-Mem's offline rules (``allmem.diagnoser.offline``: Merge of
   restatements, Update of revised plans and values, Split of turns carrying
   several facts), read through `labile_unite.evidence.evidence_view`;
2. the proposals pass All-Mem's calibrated gate (θ = 0.9 per operator);
3. they run serially, Split then Merge then Update, each after an
   applicability check (all targets exist, are visible and untouched in this
   run), through `labile_unite.execute.RealmExecutor`, which writes REALM
   events and REALM predicates only;
4. a run record (`labile_unite.evidence.record_run`) lists the events it
   diagnosed and created, which leaves the buffer.

`after_add` runs a pass once the buffer spans ``every_n_sessions`` sessions.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime

import attrs
from attrs.validators import ge, le

from labile.plugin import AddReport, Deps, Node, OperationReport, Store, bounded, get_logger
from labile_allmem.consolidate.diagnose import (
    OfflineDiagnoser,
    OfflineDiagnosisConfig,
    split_candidates,
)
from labile_allmem.consolidate.gate import gate
from labile_allmem.consolidate.records import OPS, Neighbourhood, Proposal
from labile_allmem.schema import session_key, unit_order
from labile_unite.evidence import (
    EVIDENCE_KINDS,
    VISIBLE_EVIDENCE,
    buffered,
    diagnosed_ids,
    evidence_view,
    observation_order,
    record_run,
)
from labile_unite.execute import RealmExecutor

log = get_logger(__name__)

__all__ = ["UniteATC", "UniteATCConfig"]

OPERATOR = "unite.atc"


@attrs.frozen(kw_only=True)
class UniteATCConfig:
    """Options of ``unite.atc``.

    Attributes:
        every_n_sessions: Run automatically once the buffer spans this many
            sessions (0: only on an explicit ``consolidate``).
        neighbourhood_k: Neighbours per buffered event in diagnosis.
        split_threshold: θ of Split (a calibrated probability).
        merge_threshold: θ of Merge.
        update_threshold: θ of Update.
        max_merge: Largest Merge set executed.
        offline: Thresholds of All-Mem's offline diagnoser.
    """

    every_n_sessions: int = attrs.field(default=3, validator=bounded(0, 100_000))
    neighbourhood_k: int = attrs.field(default=20, validator=bounded(1, 100_000))
    split_threshold: float = attrs.field(default=0.9, validator=[ge(0.0), le(1.0)])
    merge_threshold: float = attrs.field(default=0.9, validator=[ge(0.0), le(1.0)])
    update_threshold: float = attrs.field(default=0.9, validator=[ge(0.0), le(1.0)])
    max_merge: int = attrs.field(default=8, validator=bounded(2, 10_000))
    offline: OfflineDiagnosisConfig = attrs.field(factory=OfflineDiagnosisConfig)


class UniteATC:
    """The ``unite.atc`` consolidator (see the module doc)."""

    def __init__(self, config: UniteATCConfig, deps: Deps) -> None:
        """Build from the config and the pipeline deps (store, embedder, clock)."""
        self.config = config
        self._store: Store = deps.store
        self._embedder = deps.embedder
        self._clock: Callable[[], datetime] = deps.clock
        self.diagnoser = OfflineDiagnoser(config.offline, deps.embedder)

    def after_add(self, namespace: str, report: AddReport) -> OperationReport | None:
        """Run a pass once the buffer spans ``every_n_sessions`` sessions."""
        n = self.config.every_n_sessions
        if n <= 0 or not report.added:
            return None
        todo = buffered(self._store.iter_nodes(namespace, VISIBLE_EVIDENCE),
                        diagnosed_ids(self._store, namespace))
        if len({session_key(e) for e in todo}) < n:
            return None
        with self._store.batch(namespace):
            return self.consolidate(namespace)

    def consolidate(self, namespace: str) -> OperationReport:
        """Run one pass over ``namespace`` and return its report."""
        start = time.perf_counter()
        cfg, store = self.config, self._store
        report = OperationReport(operator=OPERATOR, namespace=namespace)
        order = observation_order(store, namespace)
        visible = list(store.iter_nodes(namespace, VISIBLE_EVIDENCE))
        todo = sorted((evidence_view(n, order)
                       for n in buffered(visible, diagnosed_ids(store, namespace))),
                      key=unit_order)
        report.counts["buffered"] = len(todo)
        report.counts["visible_before"] = len(visible)
        views = {n.id: evidence_view(n, order) for n in visible}
        hoods = self._neighbourhoods(namespace, todo, views)
        proposals = self.diagnoser.diagnose(hoods)
        accepted, _ = gate(proposals, {"split": cfg.split_threshold,
                                       "merge": cfg.merge_threshold,
                                       "update": cfg.update_threshold})
        for op in OPS:
            report.counts[f"{op}.proposed"] = sum(1 for p in proposals if p.op == op)
            report.counts[f"{op}.gated"] = sum(1 for p in accepted if p.op == op)
        executor = RealmExecutor(store, namespace, embedder=self._embedder, clock=self._clock)
        touched: set[str] = set()
        created: set[str] = set()
        outcomes: Counter[str] = Counter()
        for prop in _queue(accepted, views):
            status, reason = self._run(executor, namespace, prop, views, touched, created)
            outcomes[f"{prop.op}.{status}"] += 1
            outcomes[status] += 1
            report.log.append({"op": prop.op, "target": list(prop.target), "status": status,
                               "reason": reason, "confidence": prop.confidence})
        for op in OPS:
            for status in ("executed", "skipped", "noop"):
                report.counts[f"{op}.{status}"] = outcomes[f"{op}.{status}"]
        for status in ("executed", "skipped", "noop"):
            report.counts[status] = outcomes[status]
        report.counts["visible_after"] = store.count_nodes(namespace, VISIBLE_EVIDENCE)
        record_run(store, namespace, [*(n.id for n in todo), *created], report.counts,
                   self._clock())
        report.ms = (time.perf_counter() - start) * 1000
        log.info("unite_consolidated", namespace=namespace, executed=report.counts["executed"],
                 visible=report.counts["visible_after"])
        return report

    def _neighbourhoods(self, namespace: str, anchors: Sequence[Node],
                        views: dict[str, Node]) -> list[Neighbourhood]:
        k = self.config.neighbourhood_k
        hoods = []
        for anchor in anchors:
            if anchor.embedding is None:
                continue
            found = self._store.vector_search(namespace, anchor.embedding, k + 1,
                                              where=VISIBLE_EVIDENCE)
            others = [views[n.id] for n, _ in found if n.id != anchor.id and n.id in views][:k]
            hoods.append(Neighbourhood(anchor=anchor, units=(anchor, *others)))
        return hoods

    def _run(self, executor: RealmExecutor, namespace: str, prop: Proposal,
             views: dict[str, Node], touched: set[str], created: set[str]) -> tuple[str, str]:
        nodes = self._store.get_nodes(namespace, list(prop.target))
        if len(nodes) != len(prop.target):
            return "skipped", "stale: a target no longer exists"
        if any(n.id in touched for n in nodes):
            return "skipped", "stale: already edited in this run"
        if any(not n.visible or n.kind not in EVIDENCE_KINDS for n in nodes):
            return "skipped", "stale: a target is archived"
        if prop.op == "split":
            (event,) = nodes
            view = views[event.id]
            seg = split_candidates([view], self._embedder, self.config.offline).get(event.id)
            if seg is None or len(seg.spans) < 2:
                return "noop", "fewer than two segments"
            parts = executor.split(event, seg.segments(view.content))
            touched.update((event.id, *parts))
            created.update(parts)
            return "executed", ""
        if prop.op == "merge":
            if not 2 <= len(nodes) <= self.config.max_merge:
                return "skipped", f"merge needs 2..{self.config.max_merge} events"
            merged = executor.merge(nodes)
            touched.update((*prop.target, merged))
            created.add(merged)
            return "executed", ""
        current, old = nodes
        executor.update(current, old)
        touched.update(prop.target)
        return "executed", ""


def _queue(accepted: Sequence[Proposal], views: dict[str, Node]) -> list[Proposal]:
    """Accepted proposals on known events, one per target, Split → Merge → Update,
    each operator's queue by confidence, then raw strength, then ids."""
    best: dict[tuple[str, tuple[str, ...]], Proposal] = {}
    for prop in accepted:
        if any(t not in views for t in prop.target):
            continue
        target = (tuple(sorted(set(prop.target), key=lambda i: unit_order(views[i])))
                  if prop.op == "merge" else prop.target)
        if (prop.op == "merge" and len(target) < 2) or (prop.op == "update" and (
                len(target) != 2 or unit_order(views[target[0]]) < unit_order(views[target[1]]))):
            continue
        key = (prop.op, target)
        if key not in best or prop.confidence > best[key].confidence:
            best[key] = attrs.evolve(prop, target=target)
    return sorted(best.values(),
                  key=lambda p: (OPS.index(p.op), -p.confidence, -(p.raw or 0.0), p.target))
