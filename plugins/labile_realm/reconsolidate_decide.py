"""Reconsolidation decisions: classify the recalled nodes, propose edge edits.

The ``realm.reconsolidation_decider`` kind (`labile_realm.decisions`) has two
bundled implementations:

* ``realm.reconsolidation_decider.offline`` (`OfflineReconsolidationDecider`):
  lexical support against the system's own answer;
* ``realm.reconsolidation_decider.llm`` (`LLMReconsolidationDecider`): the
  model audits the recalled subgraph.

Both return a `Classification` and `EdgeDecision` records; the operator
(`labile_realm.reconsolidate`) applies them with eq. 11–12. Feedback is the
system's own answer or the caller's signal, never gold labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import attrs
from attrs.validators import ge, le

from labile.plugin import (
    Deps,
    Edge,
    Feedback,
    LLMClient,
    LLMOutputError,
    NoConfig,
    RetrievalResult,
)
from labile.text.tokenize import terms
from labile_realm import prompts
from labile_realm.ids import IdMap
from labile_realm.schema import ENTITY, EPISODE, predicate_name
from labile_text.entities import named_entities

Action = Literal["add", "strengthen", "weaken"]


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
    """``realm.reconsolidation_decider.offline``: co-utilisation rules on lexical support (no LLM).

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

    def __init__(self, config: OfflineReconsolidationConfig) -> None:
        self.config = config

    def decide(  # noqa: C901
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
    """``realm.reconsolidation_decider.llm``: the LLM audits the recalled subgraph
    (topic, classification, edits).

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


def _cue(query: str, answer: str | None, limit: int = 300) -> str:
    """Why two nodes were linked: the question and the answer they supported."""
    text = f"recalled together for: {query.strip()}"
    if answer and answer.strip():
        text += f" (answer: {answer.strip()})"
    return text[:limit]


def _check_predicate(_inst: object, _attr: object, value: str) -> None:
    if predicate_name(value) is None:
        raise ValueError(f"unknown REALM predicate {value!r}")


@attrs.frozen(kw_only=True)
class OfflineReconsolidationConfig:
    """Options of ``realm.reconsolidation_decider.offline``.

    Attributes:
        support_overlap: Share of the feedback's terms a node must contain to
            count as supporting.
        weak_confidence: Confidence scale when there is no answer (the query
            and the top hits' agreement are only a weak signal).
        max_add: New edges per feedback, at most.
        add_needs_answer: Add edges only on a strong signal (an answer or cited
            nodes); the weak signal of a query alone only re-weights existing
            edges. Measured on LoCoMo, adding edges from the weak signal made
            later retrieval worse.
        add_predicate: Predicate of the edges it adds.
        key_rank: Supporting nodes within this rank are key evidence.
    """

    support_overlap: float = attrs.field(default=0.34, validator=[ge(0.0), le(1.0)])
    weak_confidence: float = attrs.field(default=0.5, validator=[ge(0.0), le(1.0)])
    max_add: int = attrs.field(default=4, validator=[ge(0), le(10_000)])
    add_needs_answer: bool = True
    add_predicate: str = attrs.field(default="correlates", validator=_check_predicate)
    key_rank: int = attrs.field(default=3, validator=[ge(1), le(10_000)])


def build_offline_decider(
    config: OfflineReconsolidationConfig, deps: Deps
) -> OfflineReconsolidationDecider:
    """Factory of ``realm.reconsolidation_decider.offline``."""
    del deps
    return OfflineReconsolidationDecider(config)


def build_llm_decider(config: NoConfig, deps: Deps) -> LLMReconsolidationDecider:
    """Factory of ``realm.reconsolidation_decider.llm``."""
    del config
    return LLMReconsolidationDecider(deps.llm)


__all__ = [
    "Action", "Classification", "EdgeDecision", "LLMReconsolidationDecider",
    "OfflineReconsolidationConfig", "OfflineReconsolidationDecider", "build_llm_decider",
    "build_offline_decider",
]
