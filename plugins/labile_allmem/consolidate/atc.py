"""``allmem.atc``: the All-Mem consolidator (the paper's ATC, Algorithm 1).

One run over a namespace:

1. the buffer is every unit whose ``buffered`` flag is set (it lives in the
   store, so it survives restarts); the visible ones are diagnosed over their
   top-k visible neighbourhoods (read-only);
2. proposals pass the confidence gate (θ per operator, 0.9 by default) and Norm;
3. the queues run serially, Split then Merge then Update. For each target the
   applicability re-check comes first (all ids exist, the visibility and arity
   constraints hold, no id was created, modified or archived earlier in this
   run), then the plan, its validation and its execution. No retries: every
   target ends Executed, Skipped or Noop, with a reason;
4. the buffer is cleared and a run record (``allmem.run`` node, invisible, no
   embedding) is appended to the edit log with the counts and every outcome.

`after_add` runs a pass automatically once the buffer spans
``every_n_sessions`` sessions (3 by default, as in the paper; 0 disables it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Literal

import attrs
from attrs.validators import ge, le

from labile.plugin import (
    AddReport,
    ComponentSpec,
    Deps,
    Node,
    OperationReport,
    Store,
    bounded,
    component_field,
    get_logger,
)
from labile_allmem.consolidate.diagnose import build_neighbourhoods
from labile_allmem.consolidate.execute import Executor
from labile_allmem.consolidate.gate import gate, normalize
from labile_allmem.consolidate.records import OPS, Outcome, PlanError, Proposal
from labile_allmem.consolidate.validate import validate_merge, validate_split, validate_update
from labile_allmem.decisions import (
    DESCRIPTOR,
    DIAGNOSER,
    REPAIR_PLANNER,
    Describer,
    Diagnoser,
    RepairPlanner,
)
from labile_allmem.schema import (
    RUN,
    RUN_FILTER,
    UNIT_FILTER,
    VISIBLE_UNITS,
    iter_units,
    session_key,
    unit_order,
)

log = get_logger(__name__)

__all__ = ["ATC", "ATCConfig", "run_records"]

OPERATOR = "allmem.atc"


@attrs.frozen(kw_only=True)
class ATCConfig:
    """Options of ``allmem.atc``.

    Attributes:
        every_n_sessions: Run automatically once the buffer spans this many
            sessions (0: only on explicit ``consolidate``).
        neighbourhood_k: Neighbours per buffered unit in diagnosis (top-k).
        split_threshold: θ of Split.
        merge_threshold: θ of Merge.
        update_threshold: θ of Update.
        diagnoser: Who proposes edits: an ``allmem.diagnoser`` (``….offline`` or ``….llm``).
        planner: Who plans each accepted edit: an ``allmem.repair_planner``.
        descriptor: Who describes split siblings and updated units: an
            ``allmem.descriptor``.
        semantic_cap: d_σ for rewired links (keep equal to the writer's).
        semantic_threshold: Minimum cosine of a rewired link (keep equal to the writer's).
        support_min: Share of a planned descriptor's terms its sources must contain.
        max_merge: Largest Merge set executed (larger targets are Skipped).

    The keys ``offline`` (thresholds of the offline diagnoser and repair
    planner, and of the LLM diagnoser's borrowed rules), ``workers`` (of the
    LLM diagnoser) and ``descriptor_offline`` (the descriptor's ``offline``)
    are still read from this table, for configs written when they were the
    consolidator's, and moved into the components that take them.
    """

    every_n_sessions: int = attrs.field(default=3, validator=bounded(0, 100_000))
    neighbourhood_k: int = attrs.field(default=10, validator=bounded(1, 100_000))
    split_threshold: float = attrs.field(default=0.9, validator=[ge(0.0), le(1.0)])
    merge_threshold: float = attrs.field(default=0.9, validator=[ge(0.0), le(1.0)])
    update_threshold: float = attrs.field(default=0.9, validator=[ge(0.0), le(1.0)])
    diagnoser: ComponentSpec = component_field(DIAGNOSER, f"{DIAGNOSER}.offline",
                                               moved=("offline", "workers"))
    planner: ComponentSpec = component_field(REPAIR_PLANNER, f"{REPAIR_PLANNER}.offline",
                                             moved=("offline",))
    descriptor: ComponentSpec = component_field(DESCRIPTOR, f"{DESCRIPTOR}.offline",
                                                moved={"descriptor_offline": "offline"})
    semantic_cap: int = attrs.field(default=8, validator=bounded(0, 10_000))
    semantic_threshold: float = attrs.field(default=0.3, validator=[ge(-1.0), le(1.0)])
    support_min: float = attrs.field(default=0.5, validator=[ge(0.0), le(1.0)])
    max_merge: int = attrs.field(default=8, validator=bounded(2, 10_000))


class ATC:
    """The ``allmem.atc`` consolidator (see the module doc).

    ``diagnoser`` and ``planner`` may be replaced after construction (tests,
    experiments); everything else follows the config.
    """

    def __init__(self, config: ATCConfig, deps: Deps) -> None:
        """Build from the config and the pipeline deps, with the decisions it names."""
        self.config = config
        self._store: Store = deps.store
        self._clock: Callable[[], datetime] = deps.clock
        registries = deps.registries
        self.describer: Describer = registries.build(config.descriptor, deps)
        self._embedder = deps.embedder
        self.diagnoser: Diagnoser = registries.build(config.diagnoser, deps)
        self.planner: RepairPlanner = registries.build(config.planner, deps, self.describer)

    # -- the Consolidator protocol -------------------------------------------
    def on_rollback(self, namespace: str) -> None:
        """Nothing to undo: a pass writes only to the store, which rolled it back.

        The diagnoser's caches (embeddings and terms of evidence, by unit id)
        hold only units that existed before the pass, and evidence never
        changes, so they stay true; a rerun of the pass sees the same values.
        """
        del namespace

    def after_add(self, namespace: str, report: AddReport) -> OperationReport | None:
        """Run a pass once the buffer spans ``every_n_sessions`` sessions."""
        n = self.config.every_n_sessions
        if n <= 0 or not report.added:
            return None
        sessions = {session_key(u) for u in iter_units(self._store, namespace)
                    if u.attrs.get("buffered")}
        if len(sessions) < n:
            return None
        log.info("allmem_auto_consolidation", namespace=namespace, sessions=len(sessions))
        with self._store.batch(namespace):
            return self.consolidate(namespace)

    def consolidate(self, namespace: str) -> OperationReport:
        """Run one ATC pass over ``namespace`` and return its report."""
        start = time.perf_counter()
        cfg, store = self.config, self._store
        report = OperationReport(operator=OPERATOR, namespace=namespace)
        units = list(iter_units(store, namespace))
        buffered = sorted((u for u in units if u.attrs.get("buffered")), key=unit_order)
        report.counts["buffered"] = len(buffered)
        visible_before = sum(1 for u in units if u.visible)

        # 1. diagnosis (read-only)
        t0 = time.perf_counter()
        hoods = build_neighbourhoods(store, namespace, [u for u in buffered if u.visible],
                                     cfg.neighbourhood_k)
        failures_before = self.diagnoser.failures
        proposals = self.diagnoser.diagnose(hoods)
        diagnose_ms = (time.perf_counter() - t0) * 1000
        report.counts["neighbourhoods"] = len(hoods)
        report.counts["diagnosis_failures"] = self.diagnoser.failures - failures_before
        for op in OPS:
            report.counts[f"{op}.proposed"] = sum(1 for p in proposals if p.op == op)

        # 2–3. gate and Norm
        thresholds = {"split": cfg.split_threshold, "merge": cfg.merge_threshold,
                      "update": cfg.update_threshold}
        accepted, _rejected = gate(proposals, thresholds)
        queues, dropped = normalize(accepted, store, namespace)
        for op in OPS:
            report.counts[f"{op}.gated"] = sum(1 for p in accepted if p.op == op)
            report.counts[f"{op}.dropped"] = sum(1 for p, _ in dropped if p.op == op)
            report.counts[f"{op}.queued"] = len(queues[op])
        for prop, reason in dropped:
            report.log.append({"op": prop.op, "target": list(prop.target), "status": "dropped",
                               "reason": reason, "confidence": prop.confidence})

        # 4–6. serial execution: Split -> Merge -> Update
        t1 = time.perf_counter()
        executor = Executor(store, namespace, embedder=self._embedder, describer=self.describer,
                            cap=cfg.semantic_cap, threshold=cfg.semantic_threshold,
                            clock=self._clock)
        touched: set[str] = set()
        outcomes: list[Outcome] = []
        for op in OPS:
            for prop in queues[op]:
                outcome = self._run_target(executor, namespace, prop, touched)
                outcomes.append(outcome)
                report.bump(f"{op}.{outcome.status}")
                report.bump(outcome.status)
                report.log.append(outcome.to_log())
        execute_ms = (time.perf_counter() - t1) * 1000
        for key in ("executed", "skipped", "noop"):
            report.counts.setdefault(key, 0)
            for op in OPS:
                report.counts.setdefault(f"{op}.{key}", 0)

        # Clear the buffer: every unit buffered at the start has been diagnosed.
        if buffered:
            fresh = store.get_nodes(namespace, [u.id for u in buffered])
            store.upsert_nodes(namespace, [
                attrs.evolve(u, attrs={**u.attrs, "buffered": False}) for u in fresh
            ])
        visible_after = store.count_nodes(namespace, VISIBLE_UNITS)
        report.counts["visible_before"] = visible_before
        report.counts["visible_after"] = visible_after
        report.ms = (time.perf_counter() - start) * 1000
        self._record(namespace, report, outcomes, len(units),
                     {"diagnose": diagnose_ms, "execute": execute_ms, "total": report.ms})
        log.info("allmem_consolidated", namespace=namespace,
                 executed=report.counts["executed"], skipped=report.counts["skipped"],
                 noop=report.counts["noop"], visible=visible_after)
        return report

    # -- one target ---------------------------------------------------------
    def _run_target(
        self, executor: Executor, namespace: str, prop: Proposal, touched: set[str]
    ) -> Outcome:
        op, target = prop.op, prop.target

        def end(status: Literal["executed", "skipped", "noop"], reason: str = "",
                created: Sequence[str] = (), archived: Sequence[str] = ()) -> Outcome:
            return Outcome(op=op, target=target, status=status, reason=reason,
                           confidence=prop.confidence, created=tuple(created),
                           archived=tuple(archived))

        nodes = self._store.get_nodes(namespace, list(target))
        stale = _applicability(op, target, nodes, touched, self.config.max_merge)
        if stale:
            return end("skipped", "stale: " + stale)
        try:
            if op == "split":
                (unit,) = nodes
                verdict = validate_split(unit, self.planner.plan_split(unit))
                if verdict.status != "ok":
                    return end(verdict.status, verdict.reason)
                created = executor.split(unit, verdict.segments)
                touched.update((*target, *created))
                return end("executed", created=created, archived=target)
            if op == "merge":
                verdict = validate_merge(nodes, self.planner.plan_merge(nodes),
                                         support_min=self.config.support_min)
                if verdict.status != "ok":
                    return end(verdict.status, verdict.reason)
                cid = executor.merge(nodes, verdict.summary, verdict.keywords)
                touched.update((*target, cid))
                return end("executed", created=(cid,), archived=target)
            current, old = nodes
            verdict = validate_update(current, old, self.planner.plan_update(current, old),
                                      support_min=self.config.support_min)
            if verdict.status != "ok":
                return end(verdict.status, verdict.reason)
            executor.update(current, old, verdict.summary, verdict.keywords)
            touched.update(target)
            return end("executed", archived=(old.id,))
        except PlanError as exc:
            return end("skipped", f"invalid plan: {exc}")

    # -- edit log -------------------------------------------------------------
    def _record(
        self, namespace: str, report: OperationReport, outcomes: list[Outcome],
        total_units: int, ms: dict[str, float],
    ) -> None:
        """Append this run's compact record to the edit log (an ``allmem.run`` node)."""
        seq = 1 + self._store.count_nodes(namespace, RUN_FILTER)
        history = sum(1 for _ in self._store.iter_observations(namespace))
        units_now = self._store.count_nodes(namespace, UNIT_FILTER)
        record: dict[str, Any] = {
            "run": seq,
            "counts": dict(sorted(report.counts.items())),
            "outcomes": [[o.op, list(o.target), o.status, o.reason, round(o.confidence, 4)]
                         for o in outcomes],
        }
        now = self._clock()
        self._store.upsert_nodes(namespace, [Node(
            id=f"allmem.run:{seq:06d}", kind=RUN, content=json.dumps(record, sort_keys=True),
            description=f"consolidation run {seq}", visible=False, created_at=now,
            updated_at=now, time_start=now,
            attrs={"seq": seq, "counts": dict(report.counts), "visible_units":
                   report.counts["visible_after"], "total_units": units_now,
                   "units_before": total_units, "history": history,
                   "ms": {k: round(v, 3) for k, v in ms.items()}},
        )])


def _applicability(
    op: str, target: tuple[str, ...], nodes: list[Node], touched: set[str], max_merge: int
) -> str:
    """Why a queued target no longer applies ("" if it does)."""
    if len(nodes) != len(target):
        return "a unit no longer exists"
    already = [i for i in target if i in touched]
    if already:
        return f"already edited in this run: {', '.join(already)}"
    hidden = [n.id for n in nodes if not n.visible]
    if hidden:
        return f"not visible: {', '.join(hidden)}"
    if op == "split" and len(nodes) != 1:
        return "split takes one unit"
    if op == "merge" and not 2 <= len(nodes) <= max_merge:
        return f"merge needs 2..{max_merge} units, got {len(nodes)}"
    if op == "update" and len(nodes) != 2:
        return "update takes two units"
    return ""


def run_records(store: Store, namespace: str) -> list[dict[str, Any]]:
    """The edit log: every run record of ``namespace``, oldest first."""
    runs = sorted(store.iter_nodes(namespace, RUN_FILTER),
                  key=lambda n: int(n.attrs.get("seq", 0)))
    out = []
    for node in runs:
        record = json.loads(node.content)
        record["visible_units"] = node.attrs.get("visible_units")
        record["total_units"] = node.attrs.get("total_units")
        record["history"] = node.attrs.get("history")
        record["ms"] = node.attrs.get("ms", {})
        record["at"] = node.created_at.isoformat()
        out.append(record)
    return out
