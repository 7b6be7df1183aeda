"""Reconsolidation (Algorithm 3, eq. 11–12): retrieval feedback reshapes the recalled subgraph.

After a retrieval has been used, a decider classifies the recalled nodes
(key evidence / supporting context / misleading / unrelated) and proposes
edge decisions d = (v_i, v_j, action, predicate, confidence) with action in
{add, strengthen, weaken}. They are applied with the bounded update of
eq. 11–12 (the paper's §3.4.2, which we follow rather than the slightly
different form of its Algorithm 3 listing)::

    w_b = max(w_min, min(1, w))
    w  ← clip(w + η·c, w_min, 1),   η = η_add (0.8)   for add (a new edge starts at 0: w = η·c)
                                    η = 1 − w_b        for strengthen
                                    η = −(w_b − w_min) for weaken

Path credit: besides the decider's decisions among the recalled nodes, the
edges retrieval *followed* to reach a recalled node (its ``via.edges``) are
the ones that shaped the result, so they get the credit or blame: every edge
on the path to a key or supporting node is strengthened (confidence
``path_credit``, scaled like the decider's by the strength of the signal), and
the last edge to a misleading node is weakened. Without it, reconsolidation
re-weights edges among the top hits, which expansion seldom follows.

Guarantees: decisions touch only edges whose two ends are both recalled
nodes (the hits and the nodes on the paths that reached them); edges are
never deleted; node content is never read for writing, let
alone changed; every touched weight ends in [w_min, 1]. Every edit is
recorded (who, when, why, old and new weight) in the operation report and
in the edge's ``attrs["history"]``, so it can be inspected, replayed
(`replay`) or undone (`undo`); the reverse of a symmetric edge, which the
store keeps in step, gets its own log entry (``mirror_of``).

The decider is a ``realm.reconsolidation_decider`` named in the options
(`labile_realm.reconsolidate_decide` has the bundled offline and LLM ones).
Feedback is the system's own answer or the caller's signal, never gold labels.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from attrs.validators import ge, le

from labile.plugin import (
    ComponentSpec,
    Deps,
    Edge,
    Feedback,
    LLMError,
    OperationReport,
    Origin,
    RetrievalResult,
    Store,
    component_field,
    edge_id,
    get_logger,
)
from labile_realm.decisions import RECONSOLIDATION_DECIDER, ReconsolidationDecider
from labile_realm.reconsolidate_decide import Action, Classification, EdgeDecision
from labile_realm.schema import PREDICATE_BY_NAME, is_symmetric

log = get_logger(__name__)

HISTORY_KEY = "history"


def bounded(w: float, w_min: float) -> float:
    """w_b = max(w_min, min(1, w))."""
    return max(w_min, min(1.0, w))


def update_weight(
    w: float | None, action: Action, confidence: float, *, eta_add: float = 0.8,
    w_min: float = 0.05,
) -> float:
    """Eq. 11–12: the new weight after one decision.

    Args:
        w: Current weight, ``None`` when the edge does not exist yet.
        action: ``add``, ``strengthen`` or ``weaken``.
        confidence: c, clipped to [0, 1].
        eta_add: η of ``add``.
        w_min: The lowest weight a reconsolidated edge may have.

    Returns:
        The new weight, in [w_min, 1]. ``add`` on an existing edge strengthens it.
    """
    c = min(1.0, max(0.0, confidence))
    if w is None:
        return min(1.0, max(w_min, eta_add * c))
    if action == "add":
        action = "strengthen"
    w_b = bounded(w, w_min)
    eta = (1.0 - w_b) if action == "strengthen" else -(w_b - w_min)
    return min(1.0, max(w_min, w + eta * c))


def replay(entries: Iterable[Mapping[str, Any]], weights: Mapping[str, float]) -> dict[str, float]:
    """Weights after applying an edit log to ``weights`` (edge id -> weight).

    Each entry's ``new_weight`` is set on its ``edge``; a replay of a run's
    log over the weights before the run gives the weights after it.
    """
    out = dict(weights)
    for entry in entries:
        if "edge" in entry and "new_weight" in entry:
            out[str(entry["edge"])] = float(entry["new_weight"])
    return out


def undo(store: Store, namespace: str, entries: Sequence[Mapping[str, Any]]) -> int:
    """Restore the weights an edit log changed, newest edit first.

    An edge the log created cannot be deleted (the store never deletes
    edges); it is retired instead (weight 0, ``attrs["retired"]``), which
    retrieval never traverses.

    Returns:
        How many edges were restored or retired.
    """
    n = 0
    for entry in reversed(entries):
        eid = str(entry.get("edge", ""))
        found = store.get_edges(namespace, [eid]) if eid else []
        if not found:
            continue
        edge = found[0]
        old = entry.get("old_weight")
        if old is None:
            edge = attrs.evolve(edge, weight=0.0, attrs={**edge.attrs, "retired": True})
        else:
            edge = attrs.evolve(edge, weight=float(old))
        store.upsert_edges(namespace, [edge])
        n += 1
    return n


@attrs.frozen(kw_only=True)
class ReconsolidateConfig:
    """Options of ``realm.reconsolidate``.

    Attributes:
        decider: Who classifies and proposes: a ``realm.reconsolidation_decider``
            (``….offline`` or ``….llm``).
        eta_add: η for ``add`` (a new edge gets w = η·c).
        w_min: Lower bound of reconsolidated weights.
        weak_confidence: Confidence scale of the path-credit edits when there
            is no answer (the query alone is only a weak signal).
        max_history: Edits kept in an edge's ``attrs["history"]``.
        actions: The edits this operator may make (any of add, strengthen, weaken).
        path_credit: Confidence of the path-credit edits (0 turns them off).

    The keys ``support_overlap``, ``weak_confidence``, ``max_add``,
    ``add_needs_answer``, ``add_predicate`` and ``key_rank`` (options of the
    offline decider) are still read from this table, for configs written
    when they were the operator's, and moved into the decider
    (``weak_confidence`` stays the operator's too).
    """

    decider: ComponentSpec = component_field(
        RECONSOLIDATION_DECIDER, f"{RECONSOLIDATION_DECIDER}.offline",
        moved=("support_overlap", "weak_confidence", "max_add", "add_needs_answer",
               "add_predicate", "key_rank"))
    eta_add: float = attrs.field(default=0.8, validator=[ge(0.0), le(1.0)])
    w_min: float = attrs.field(default=0.05, validator=[ge(0.0), le(1.0)])
    weak_confidence: float = attrs.field(default=0.5, validator=[ge(0.0), le(1.0)])
    max_history: int = attrs.field(default=20, validator=[ge(0), le(10_000)])
    actions: tuple[str, ...] = attrs.field(default=("add", "strengthen", "weaken"))
    path_credit: float = attrs.field(default=0.5, validator=[ge(0.0), le(1.0)])

    @actions.validator
    def _check_actions(self, _attr: object, value: tuple[str, ...]) -> None:
        bad = set(value) - {"add", "strengthen", "weaken"}
        if bad:
            raise ValueError(f"unknown action(s) {sorted(bad)} (use add, strengthen, weaken)")


class RealmReconsolidator:
    """``realm.reconsolidate``: classify, decide, apply eq. 11–12, log every edit."""

    def __init__(self, name: str, config: ReconsolidateConfig, deps: Deps) -> None:
        self.name, self.config, self.deps = name, config, deps
        self.store: Store = deps.store
        self.decider: ReconsolidationDecider = deps.registries.build(config.decider, deps)
        #: The decider's registered name, recorded in every edit.
        self.decider_name = deps.registries.component(config.decider).name

    def on_rollback(self, namespace: str) -> None:
        """Nothing to undo: every edit goes to the store, which rolled it back."""
        del namespace

    def reconsolidate(self, result: RetrievalResult, feedback: Feedback) -> OperationReport:
        """Apply feedback about ``result`` to the edges among its recalled nodes."""
        t0 = time.perf_counter()
        ns = result.query.namespace
        report = OperationReport(operator=self.name, namespace=ns)
        recalled = [h.node.id for h in result.hits]
        if len(recalled) < 2:
            report.ms = (time.perf_counter() - t0) * 1000
            return report
        rset = set(recalled)
        edges = [e for e in self.store.edges_of(ns, recalled, direction="out")
                 if e.dst in rset and not e.attrs.get("retired")]
        followed = self._followed_edges(ns, result, {e.id: e for e in edges})
        on_paths = {n for h in result.hits for n in h.via.path}
        try:
            cls, decisions = self.decider.decide(result, feedback, edges)
        except (LLMError, KeyError) as exc:
            report.bump("rejected")
            report.log.append({"decision": "rejected", "reason": str(exc)[:300]})
            log.warning("realm_llm_rejected", operation="reconsolidate", error=str(exc)[:300])
            report.ms = (time.perf_counter() - t0) * 1000
            return report
        report.bump("key", len(cls.key))
        report.bump("supporting", len(cls.supporting))
        report.bump("misleading", len(cls.misleading))
        report.bump("unrelated", len(cls.unrelated))
        decisions = [*decisions, *self._path_credit(result, feedback, cls, followed)]
        self.apply(ns, decisions, rset | on_paths, report)
        report.ms = (time.perf_counter() - t0) * 1000
        return report

    def _followed_edges(
        self, namespace: str, result: RetrievalResult, known: Mapping[str, Edge]
    ) -> dict[str, Edge]:
        """The live edges on the paths that reached the hits, by id (``known`` ones
        are not read again)."""
        ids = list(dict.fromkeys(i for h in result.hits for i in h.via.edges))
        out = {i: known[i] for i in ids if i in known}
        wanted = [i for i in ids if i not in known]
        found = self.store.get_edges(namespace, wanted) if wanted else []
        out.update((e.id, e) for e in found)
        return {i: e for i, e in out.items() if not e.attrs.get("retired")}

    def _path_credit(
        self, result: RetrievalResult, feedback: Feedback, cls: Classification,
        followed: Mapping[str, Edge],
    ) -> list[EdgeDecision]:
        """Strengthen the paths to useful nodes, weaken the last step to misleading ones."""
        cfg = self.config
        if cfg.path_credit <= 0 or not followed:
            return []
        strong = bool(feedback.answer) or bool(feedback.cited)
        c = cfg.path_credit * (1.0 if strong else cfg.weak_confidence)
        if feedback.useful is False:
            c *= 0.5
        useful = set(cls.key) | set(cls.supporting)
        misleading = set(cls.misleading)
        out: list[EdgeDecision] = []
        for h in result.hits:
            path = [followed[i] for i in h.via.edges if i in followed]
            if h.node.id in useful:
                out.extend(EdgeDecision(src=e.src, dst=e.dst, action="strengthen",
                                        predicate=e.predicate, confidence=c,
                                        reason="on the path retrieval followed to useful evidence")
                           for e in path)
            elif h.node.id in misleading and h.via.edges and h.via.edges[-1] in followed:
                e = followed[h.via.edges[-1]]
                out.append(EdgeDecision(src=e.src, dst=e.dst, action="weaken",
                                        predicate=e.predicate, confidence=c * 0.5,
                                        reason="the step retrieval followed to a misleading node"))
        return out

    def apply(
        self,
        namespace: str,
        decisions: Sequence[EdgeDecision],
        recalled: set[str],
        report: OperationReport,
    ) -> None:
        """Apply decisions with eq. 11–12; only among ``recalled``; log every edit."""
        cfg = self.config
        now = self.deps.clock()
        done: set[tuple[str, str, str]] = set()
        for d in decisions:
            if d.action not in cfg.actions:
                report.bump("not_allowed")
                continue
            if d.src not in recalled or d.dst not in recalled or d.src == d.dst:
                report.bump("skipped")
                report.log.append({"decision": "skipped", "reason": "not among recalled nodes",
                                   "src": d.src, "dst": d.dst})
                continue
            if d.predicate not in PREDICATE_BY_NAME:
                report.bump("skipped")
                continue
            key = (d.src, d.predicate, d.dst)
            if is_symmetric(d.predicate):
                key = (min(d.src, d.dst), d.predicate, max(d.src, d.dst))
            if key in done:
                continue
            done.add(key)
            eid = edge_id(d.src, d.predicate, d.dst)
            found = self.store.get_edges(namespace, [eid])
            old = found[0] if found else None
            if old is not None and old.attrs.get("retired"):
                report.bump("skipped")
                continue
            if old is None and d.action != "add":
                report.bump("skipped")
                continue
            old_w = old.weight if old is not None else None
            new_w = update_weight(old_w, d.action, d.confidence, eta_add=cfg.eta_add,
                                  w_min=cfg.w_min)
            entry = {
                "by": self.name, "decider": self.decider_name, "at": now.isoformat(),
                "decision": d.action, "edge": eid, "src": d.src, "dst": d.dst,
                "predicate": d.predicate, "confidence": round(d.confidence, 4),
                "old_weight": old_w, "new_weight": new_w, "reason": d.reason,
            }
            history = list(old.attrs.get(HISTORY_KEY, [])) if old is not None else []
            history.append({k: entry[k] for k in ("at", "by", "decision", "old_weight",
                                                    "new_weight", "confidence", "reason")})
            history = history[-cfg.max_history:] if cfg.max_history else []
            edge = Edge(
                id=eid, src=d.src, dst=d.dst, predicate=d.predicate, weight=new_w,
                description=(old.description if old is not None
                             else d.description or _added_description(d)),
                origin=Origin.RECONSOLIDATION,
                created_at=old.created_at if old is not None else now, updated_at=now,
                attrs={**(old.attrs if old is not None else {}), HISTORY_KEY: history},
            )
            mirror = None
            if is_symmetric(d.predicate):
                rid = edge_id(d.dst, d.predicate, d.src)
                found_r = self.store.get_edges(namespace, [rid])
                mirror = {**entry, "edge": rid, "src": d.dst, "dst": d.src, "mirror_of": eid,
                          "old_weight": found_r[0].weight if found_r else None}
            self.store.upsert_edges(namespace, [edge])
            report.log.append(entry)
            if mirror is not None:
                report.log.append(mirror)
            if old is None:
                report.bump("added")
            else:
                report.bump("weakened" if d.action == "weaken" else "strengthened")


def _added_description(d: EdgeDecision) -> str:
    return f"recalled together: {d.reason}" if d.reason else "recalled together"


def make_reconsolidator(name: str) -> Any:
    """A factory ``(config, deps) -> RealmReconsolidator`` registered as ``name``."""

    def factory(config: ReconsolidateConfig, deps: Deps) -> RealmReconsolidator:
        return RealmReconsolidator(name, config, deps)

    return factory


__all__ = [
    "Action", "Classification", "EdgeDecision", "RealmReconsolidator", "ReconsolidateConfig",
    "replay", "undo", "update_weight",
]
