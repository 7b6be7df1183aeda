"""Reconsolidation (Algorithm 3, eq. 11–12): retrieval feedback reshapes the recalled subgraph.

After a retrieval has been used, a decider classifies the recalled nodes
(key evidence / supporting context / misleading / unrelated) and proposes
edge decisions d = (v_i, v_j, action, predicate, confidence) with action in
{add, strengthen, weaken}. They are applied with the bounded update of
eq. 11–12 (SPEC §3.4, which we follow rather than the slightly different
form of the paper's Algorithm 3 listing)::

    w_b = max(w_min, min(1, w))
    w  ← clip(w + η·c, w_min, 1),   η = η_add (0.8)   for add (a new edge starts at 0: w = η·c)
                                    η = 1 − w_b        for strengthen
                                    η = −(w_b − w_min) for weaken

Guarantees: decisions touch only edges whose two ends are both recalled
nodes; edges are never deleted; node content is never read for writing, let
alone changed; every touched weight ends in [w_min, 1]. Every edit is
recorded (who, when, why, old and new weight) in the operation report and
in the edge's ``attrs["history"]``, so it can be inspected, replayed
(`replay`) or undone (`undo`); the reverse of a symmetric edge, which the
store keeps in step, gets its own log entry (``mirror_of``).

Deciders: ``"offline"`` (lexical support against the system's own answer,
see `OfflineReconsolidationDecider`) and ``"llm"`` (`LLMReconsolidationDecider`).
Feedback is the system's own answer or the caller's signal, never gold labels.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs
import structlog
from attrs.validators import ge, in_, le

from labile.errors import ConfigError, LLMError
from labile.model import Edge, Feedback, OperationReport, Origin, RetrievalResult, edge_id
from labile.protocols import Deps, LLMClient, Store
from labile.text.tokenize import terms
from labile_realm import prompts
from labile_realm.ids import IdMap
from labile_realm.schema import (
    ENTITY,
    EPISODE,
    PREDICATE_BY_NAME,
    is_symmetric,
    predicate_name,
)
from labile_text.entities import named_entities

log = structlog.get_logger(__name__)

Action = Literal["add", "strengthen", "weaken"]
HISTORY_KEY = "history"


@attrs.frozen(kw_only=True)
class EdgeDecision:
    """One reconsolidation decision d = (v_i, v_j, action, predicate, confidence).

    Attributes:
        src: Source node id (a recalled node).
        dst: Target node id (a recalled node).
        action: ``add``, ``strengthen`` or ``weaken``.
        predicate: Registered predicate name.
        confidence: c in [0, 1].
        reason: Why (kept in the edit log).
        description: The description of an edge this decision creates
            (default: from ``reason``); an existing edge keeps its own.
    """

    src: str
    dst: str
    action: Action
    predicate: str
    confidence: float
    reason: str = ""
    description: str = ""


@attrs.frozen(kw_only=True)
class Classification:
    """The decider's reading of the recalled nodes."""

    topic: str = ""
    key: tuple[str, ...] = ()
    supporting: tuple[str, ...] = ()
    misleading: tuple[str, ...] = ()
    unrelated: tuple[str, ...] = ()


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
        decider: ``"offline"`` or ``"llm"``.
        eta_add: η for ``add`` (a new edge gets w = η·c).
        w_min: Lower bound of reconsolidated weights.
        support_overlap: Share of the feedback's terms a node must contain to
            count as supporting.
        weak_confidence: Confidence scale when there is no answer (the query
            and the top hits' agreement are only a weak signal).
        max_add: New edges per feedback, at most.
        add_needs_answer: Add edges only on a strong signal (an answer or cited
            nodes); the weak signal of a query alone only re-weights existing
            edges. Measured on LoCoMo, adding edges from the weak signal made
            later retrieval worse.
        add_predicate: Predicate of offline-added edges.
        key_rank: Supporting nodes within this rank are key evidence.
        max_history: Edits kept in an edge's ``attrs["history"]``.
        actions: The edits this operator may make (any of add, strengthen, weaken).
    """

    decider: Literal["offline", "llm"] = attrs.field(default="offline",
                                                     validator=in_(("offline", "llm")))
    eta_add: float = attrs.field(default=0.8, validator=[ge(0.0), le(1.0)])
    w_min: float = attrs.field(default=0.05, validator=[ge(0.0), le(1.0)])
    support_overlap: float = attrs.field(default=0.34, validator=[ge(0.0), le(1.0)])
    weak_confidence: float = attrs.field(default=0.5, validator=[ge(0.0), le(1.0)])
    max_add: int = attrs.field(default=4, validator=ge(0))
    add_needs_answer: bool = True
    add_predicate: str = attrs.field(default="correlates")
    key_rank: int = attrs.field(default=3, validator=ge(1))
    max_history: int = attrs.field(default=20, validator=ge(0))
    actions: tuple[str, ...] = attrs.field(default=("add", "strengthen", "weaken"))

    @actions.validator
    def _check_actions(self, _attr: object, value: tuple[str, ...]) -> None:
        bad = set(value) - {"add", "strengthen", "weaken"}
        if bad:
            raise ValueError(f"unknown action(s) {sorted(bad)} (use add, strengthen, weaken)")

    @add_predicate.validator
    def _check_predicate(self, _attr: object, value: str) -> None:
        if predicate_name(value) is None:
            raise ValueError(f"unknown REALM predicate {value!r}")


def _name_terms(text: str) -> set[str]:
    """Terms of the people named in ``text``: they occur in nearly every memory of
    a conversation, so sharing them says nothing about relevance."""
    return {t for e in named_entities(text) if e.category == "person" for t in terms(e.name)}


def _signals(result: RetrievalResult, feedback: Feedback) -> tuple[list[set[str]], bool]:
    """The term sets a supporting node should cover, and whether an answer gave one.

    With an answer: its terms, and the query's. Without: the query's terms plus
    the terms at least two of the top three hits agree on. Names of people are
    left out (they occur in nearly every memory of a conversation).
    """
    names = _name_terms(result.query.text)
    query_terms = set(terms(result.query.text)) - names
    if feedback.answer and feedback.answer.strip():
        answer_terms = set(terms(feedback.answer)) - names
        return [s for s in (answer_terms, query_terms) if s], True
    top = [set(terms(h.node.description or h.node.content)) for h in result.hits[:3]]
    agreed = {t for t in set().union(*top) if sum(t in s for s in top) >= 2} if top else set()
    return [s for s in (query_terms | (agreed - names),) if s], False


def _support(node_terms: set[str], signals: list[set[str]]) -> float:
    """The best share of a signal's terms that the node contains."""
    return max((len(node_terms & s) / len(s) for s in signals), default=0.0)


class OfflineReconsolidationDecider:
    """Co-utilisation rules on lexical support (no LLM).

    A recalled node *supports* the feedback when its description contains at
    least ``support_overlap`` of the answer's terms or of the query's (with no
    answer: of the query's terms plus those at least two of the top three hits
    agree on, at ``weak_confidence``). Supporting nodes within
    ``key_rank`` are key evidence, the others supporting context; a node the
    caller cited supports fully. A node with no shared term is misleading when
    expansion brought it in and unrelated when a seeder did. Decisions:
    strengthen edges between supporting nodes; add ``correlates`` between
    supporting evidence nodes from different turns that are not linked yet
    (best ranked first, at most ``max_add``), described by the question and
    answer that linked them; weaken the edge that led to each misleading node
    when its other end is recalled.
    """

    def __init__(self, config: ReconsolidateConfig) -> None:
        self.config = config

    def decide(
        self, result: RetrievalResult, feedback: Feedback, edges: Sequence[Edge]
    ) -> tuple[Classification, list[EdgeDecision]]:
        """Classify the recalled nodes and propose the decisions."""
        cfg = self.config
        hits = list(result.hits)
        signals, from_answer = _signals(result, feedback)
        scale = 1.0 if from_answer else cfg.weak_confidence
        if feedback.useful is False:
            scale *= 0.5
        cited = set(feedback.cited)
        # A node the caller cited was used: that is the strongest signal there
        # is, whatever its wording shares with the answer.
        support = {
            h.node.id: 1.0 if h.node.id in cited
            else _support(set(terms(h.node.description or h.node.content)), signals)
            for h in hits
        }
        supporting = [h for h in hits
                      if support[h.node.id] >= cfg.support_overlap or h.node.id in cited]
        sup_ids = {h.node.id for h in supporting}
        key = tuple(
            h.node.id for i, h in enumerate(hits) if h.node.id in sup_ids and i < cfg.key_rank
        )
        misleading = tuple(h.node.id for h in hits
                           if support[h.node.id] == 0.0 and h.via.stage == "expand"
                           and h.node.id not in cited)
        unrelated = tuple(h.node.id for h in hits
                          if support[h.node.id] == 0.0 and h.via.stage != "expand"
                          and h.node.id not in cited)
        cls = Classification(
            topic=" ".join(sorted(set().union(*signals))[:12]), key=key,
            supporting=tuple(i for i in sup_ids if i not in key), misleading=misleading,
            unrelated=unrelated,
        )
        decisions: list[EdgeDecision] = []
        linked: set[frozenset[str]] = set()
        for e in edges:
            linked.add(frozenset((e.src, e.dst)))
            if e.src in sup_ids and e.dst in sup_ids:
                c = scale * min(1.0, (support[e.src] + support[e.dst]) / 2 + 0.25)
                decisions.append(EdgeDecision(src=e.src, dst=e.dst, action="strengthen",
                                              predicate=e.predicate, confidence=c,
                                              reason="both ends supported the answer"))
        evidence = [h for h in supporting if h.node.kind not in (ENTITY, EPISODE)]
        weak = not from_answer and not cited
        if weak and cfg.add_needs_answer:
            evidence = []
        elif weak:
            # a weak signal links only key evidence told in different sessions
            key_set = set(key)
            evidence = [h for h in evidence if h.node.id in key_set]
        pred = str(predicate_name(cfg.add_predicate))
        # The cue that formed the association becomes the new edge's description,
        # so a later query about the same thing scores the edge (eq. 8) highly.
        cue = _cue(result.query.text, feedback.answer)
        added = 0
        for i, a in enumerate(evidence):
            for b in evidence[i + 1:]:
                if added >= cfg.max_add:
                    break
                pair = frozenset((a.node.id, b.node.id))
                if pair in linked or set(a.node.sources) == set(b.node.sources):
                    continue
                if weak and a.node.attrs.get("session") == b.node.attrs.get("session"):
                    continue
                linked.add(pair)
                c = scale * min(support[a.node.id], support[b.node.id])
                decisions.append(EdgeDecision(
                    src=a.node.id, dst=b.node.id, action="add", predicate=pred, confidence=c,
                    reason="recalled together in support of the answer", description=cue))
                added += 1
        by_id = {h.node.id: h for h in hits}
        recalled = set(by_id)
        for node_id in misleading:
            hit = by_id[node_id]
            if not hit.via.edges or len(hit.via.path) < 2:
                continue
            parent = hit.via.path[-2]
            if parent not in recalled:
                continue
            for e in edges:
                if e.id == hit.via.edges[-1]:
                    decisions.append(EdgeDecision(src=e.src, dst=e.dst, action="weaken",
                                                  predicate=e.predicate, confidence=scale * 0.5,
                                                  reason="led to a node unrelated to the answer"))
        return cls, decisions


class LLMReconsolidationDecider:
    """Asks the LLM to audit the recalled subgraph (topic, classification, edits).

    The reply is rejected whole when it names a node or edge the prompt did
    not show, an unknown predicate, or an operation without the fields it
    needs; nothing is applied then.
    """

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm

    def decide(
        self, result: RetrievalResult, feedback: Feedback, edges: Sequence[Edge]
    ) -> tuple[Classification, list[EdgeDecision]]:
        """Classify and propose decisions, or raise `LLMOutputError` (fail closed)."""
        from labile.errors import LLMOutputError

        ids = IdMap(h.node.id for h in result.hits)
        edge_ids = IdMap(e.id for e in edges)
        by_edge = {e.id: e for e in edges}
        prompt = prompts.topology_prompt(
            result.query.text, feedback.answer,
            [(ids.short(h.node.id), h.node) for h in result.hits],
            [(edge_ids.short(e.id), ids.short(e.src), ids.short(e.dst), e) for e in edges
             if e.src in ids and e.dst in ids],
        )
        reply = self.llm.complete_json(prompt, prompts.TOPOLOGY_SCHEMA,
                                       operation="realm.reconsolidate", system=prompts.SYSTEM)
        cls = Classification(
            topic=str(reply["topic"]),
            key=tuple(ids.real(i) for i in reply["gold_supporting_node_ids"]),
            supporting=tuple(ids.real(i) for i in reply["supporting_associated_node_ids"]),
            misleading=tuple(ids.real(i) for i in reply["misleading_node_ids"]),
            unrelated=tuple(ids.real(i) for i in reply["unrelated_node_ids"]),
        )
        decisions: list[EdgeDecision] = []
        for op in reply["operations"]:
            action = op["action"]
            confidence = float(op["confidence"])
            if action == "add_edge":
                if "source" not in op or "target" not in op or "predicate" not in op:
                    raise LLMOutputError("add_edge needs source, target and predicate")
                pred = predicate_name(str(op["predicate"]))
                if pred is None:
                    raise LLMOutputError(f"unknown predicate {op['predicate']!r}")
                src, dst = ids.real(op["source"]), ids.real(op["target"])
                if src == dst:
                    raise LLMOutputError("an edge needs two different nodes")
                decisions.append(EdgeDecision(src=src, dst=dst, action="add", predicate=pred,
                                              confidence=confidence,
                                              reason=str(op.get("reason", ""))))
            else:
                if "edge_id" not in op:
                    raise LLMOutputError(f"{action} needs an edge_id")
                edge = by_edge[edge_ids.real(op["edge_id"])]
                decisions.append(EdgeDecision(
                    src=edge.src, dst=edge.dst,
                    action="strengthen" if action == "strengthen_edge" else "weaken",
                    predicate=edge.predicate, confidence=confidence,
                    reason=str(op.get("reason", "")),
                ))
        return cls, decisions


class RealmReconsolidator:
    """``realm.reconsolidate``: classify, decide, apply eq. 11–12, log every edit."""

    def __init__(self, name: str, config: ReconsolidateConfig, deps: Deps) -> None:
        assert deps.store is not None, "reconsolidators are built after the store"
        if config.decider == "llm" and getattr(deps.llm, "name", "none") == "none":
            raise ConfigError(f"{name} with decider = \"llm\" needs an LLM ([llm] type)")
        self.name, self.config, self.deps = name, config, deps
        self.store: Store = deps.store
        self.offline = OfflineReconsolidationDecider(config)
        self.llm_decider = LLMReconsolidationDecider(deps.llm) if config.decider == "llm" else None

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
        try:
            if self.llm_decider is not None:
                cls, decisions = self.llm_decider.decide(result, feedback, edges)
            else:
                cls, decisions = self.offline.decide(result, feedback, edges)
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
        self.apply(ns, decisions, rset, report)
        report.ms = (time.perf_counter() - t0) * 1000
        return report

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
                "by": self.name, "decider": cfg.decider, "at": now.isoformat(),
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


def _cue(query: str, answer: str | None, limit: int = 300) -> str:
    """Why two nodes were linked: the question and the answer they supported."""
    text = f"recalled together for: {query.strip()}"
    if answer and answer.strip():
        text += f" (answer: {answer.strip()})"
    return text[:limit]


def _added_description(d: EdgeDecision) -> str:
    return f"recalled together: {d.reason}" if d.reason else "recalled together"


def make_reconsolidator(name: str) -> Any:
    """A factory ``(config, deps) -> RealmReconsolidator`` registered as ``name``."""

    def factory(config: ReconsolidateConfig, deps: Deps) -> RealmReconsolidator:
        return RealmReconsolidator(name, config, deps)

    return factory


__all__ = [
    "Classification", "EdgeDecision", "RealmReconsolidator", "ReconsolidateConfig", "replay",
    "undo", "update_weight",
]
