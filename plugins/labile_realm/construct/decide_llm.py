"""LLM node operation and edge decisions (Algorithm 1, steps 3–4).

Candidates are numbered for the prompt; the reply is validated against the
schema and then against the prompt: every number must be one the prompt
showed, predicates must be REALM predicates, ``modify``/``delete`` must
refer to an edge that exists. Any violation raises `LLMOutputError` and the
whole reply is dropped (the extractor counts and logs it): a decision is
never half-applied. A ``modify`` or ``skip`` that names no target is taken
as ``add`` (counted ``node_decision_untargeted_added``): adding is what the
prompt asks for when unsure, and it loses nothing, where rejecting the reply
would lose the unit.

Only candidates at least `LLMDecisionConfig.min_similarity` similar to the
unit are shown. When none is, the model is not asked: with nothing close
enough to merge into or link to, "add" with no related node is the only
answer it could usefully give, and the call would cost a full prompt (on
LoCoMo with SmolLM2 the node and edge decisions were most of a turn's cost).
Such units are counted in ``counts["node_decision_unasked"]``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
from attrs.validators import ge, le, optional

from labile.plugin import Deps, LLMClient, LLMOutputError, Node
from labile_realm import prompts
from labile_realm.construct.decide_offline import EdgeOp, NodeDecision, OfflineDecisionConfig
from labile_realm.construct.neighbourhood import Candidate
from labile_realm.construct.units import ConversationState, Unit
from labile_realm.ids import IdMap
from labile_realm.schema import SHORT_BY_KIND, layer_of, predicate_name

if TYPE_CHECKING:
    from labile_realm.decisions import EdgeLookup


def unit_text(unit: Unit) -> str:
    """A unit as prompt text: kind, name, time and description."""
    kind = SHORT_BY_KIND.get(unit.kind, unit.kind)
    when = f", {unit.time_start.date().isoformat()}" if unit.time_start is not None else ""
    return f"{kind}{when}: {unit.name} — {unit.description}"


class LLMDecider:
    """``realm.write_decider.llm``: node and edge decisions by the LLM.

    Entity nodes get semantic edges too, and the edge decision considers only
    the neighbours the node decision named as related.

    Args:
        llm: The client.
        min_similarity: Candidates less similar than this are not shown; with
            none left the model is not asked (see the module doc).
    """

    links_entities = True

    def __init__(self, llm: LLMClient, *, min_similarity: float = 0.0) -> None:
        self.llm = llm
        self.min_similarity = min_similarity
        #: ``node_decision_unasked``: units added without a call (no candidate close enough);
        #: ``node_decision_untargeted_added``: a modify or skip with no target, added instead.
        self.counts: Counter[str] = Counter()

    def decide_node(
        self, unit: Unit, candidates: Sequence[Candidate], state: ConversationState
    ) -> NodeDecision:
        """Add, modify or skip ``unit`` (raises `LLMOutputError` on an invalid reply)."""
        del state
        if self.min_similarity > 0:  # 0: every unit is asked about, as the paper does
            candidates = [c for c in candidates if c.similarity >= self.min_similarity]
            if not candidates:
                self.counts["node_decision_unasked"] += 1
                return NodeDecision(op="add", target=None, related=(),
                                    reason="no candidate close enough to ask about")
        ids = IdMap(c.node.id for c in candidates)
        prompt = prompts.node_decision_prompt(
            unit_text(unit),
            [(ids.short(c.node.id), c.node, c.source, c.similarity) for c in candidates],
        )
        reply = self.llm.complete_json(prompt, prompts.node_schema(len(ids)),
                                       operation="realm.node_decision", system=prompts.SYSTEM)
        op = reply["operation"]
        target = None
        if op in ("modify", "skip") and reply.get("target") is None:
            # SmolLM2 answered "skip" with no target; rejecting lost the unit. Adding it
            # is the prompt's own rule when unsure, and destroys nothing.
            self.counts["node_decision_untargeted_added"] += 1
            op = "add"
        elif op in ("modify", "skip"):
            target = ids.real(reply["target"])
        related = tuple(dict.fromkeys(ids.real(i) for i in reply["related"]))
        keywords = reply.get("keywords")
        return NodeDecision(
            op=op, target=target, related=related,
            description=(reply.get("description") or None),
            keywords=tuple(str(k) for k in keywords) if keywords else None,
            reason=str(reply.get("reason", ""))[:200],
        )

    def neighbours_to_link(
        self, decision: NodeDecision, candidates: Sequence[Candidate], node: Node
    ) -> list[Candidate]:
        """The candidates the model named as related (never the node itself)."""
        related = set(decision.related)
        return [c for c in candidates if c.node.id in related and c.node.id != node.id]

    def decide_edges(
        self, node: Node, candidates: Sequence[Candidate], edges: EdgeLookup
    ) -> list[EdgeOp]:
        """Edge operations between ``node`` and ``candidates`` (raises on an invalid reply)."""
        if not candidates:
            return []
        existing = edges.existing(node.id, [c.node.id for c in candidates])
        cands = [c for c in candidates if c.node.id != node.id]
        if not cands:
            return []
        ids = IdMap(c.node.id for c in cands)
        shown = []
        for e in existing:
            other = e.dst if e.src == node.id else e.src
            if other in ids:
                direction = "from the target" if e.src == node.id else "to the target"
                shown.append((ids.short(other), e, direction))
        prompt = prompts.edge_decision_prompt(
            node, [(ids.short(c.node.id), c.node) for c in cands], shown
        )
        reply = self.llm.complete_json(prompt, prompts.edge_schema(len(ids), bool(shown)),
                                       operation="realm.edge_decision", system=prompts.SYSTEM)
        present = {(e.src, e.predicate, e.dst) for e in existing}
        ops: list[EdgeOp] = []
        for item in reply["edges"]:
            other = ids.real(item["candidate"])
            pred = reply_predicate(str(item["predicate"]))
            src, dst = (node.id, other) if item["direction"] == "from_target" else (other, node.id)
            action = item["operation"]
            if action in ("modify", "delete") and (src, pred, dst) not in present:
                raise LLMOutputError(f"{action} refers to an edge that does not exist")
            ops.append(EdgeOp(
                action=action, src=src, dst=dst, predicate=pred,
                description=str(item.get("description", "")), weight=float(item["weight"]),
            ))
        return ops


def reply_predicate(text: str) -> str:
    """The REALM predicate a reply names: ``causes``, ``realm.causes`` or ``causal/causes``.

    The prompt's predicate table writes ``layer/name``, and models copy that
    form (hosted models do whenever the schema does not enumerate the names);
    the layer must then be the predicate's own.

    Raises:
        LLMOutputError: no REALM predicate has that name, or the layer is not its layer.
    """
    layer, slash, name = text.strip().rpartition("/")
    pred = predicate_name(name if slash else text)
    if pred is None:
        raise LLMOutputError(f"unknown predicate {text!r}")
    if slash and layer.strip().lower() != layer_of(pred):
        raise LLMOutputError(f"predicate {name!r} is not in layer {layer!r}")
    return pred


@attrs.frozen(kw_only=True)
class LLMDecisionConfig:
    """Options of ``realm.write_decider.llm``.

    Attributes:
        min_similarity: Least cosine similarity of a candidate shown to the
            model; ``None`` takes ``thresholds.related_similarity``. 0 shows
            every candidate and asks about every unit, as the paper does.
        thresholds: Bars of the offline kind (`OfflineDecisionConfig`); only
            ``related_similarity``, the bar for "related", is read.
    """

    min_similarity: float | None = attrs.field(default=None, validator=optional([ge(0.0),
                                                                                le(1.0)]))
    thresholds: OfflineDecisionConfig = attrs.field(factory=OfflineDecisionConfig)


def build_llm_decider(config: LLMDecisionConfig, deps: Deps) -> LLMDecider:
    """Factory of ``realm.write_decider.llm``."""
    bar = config.min_similarity
    return LLMDecider(deps.llm, min_similarity=config.thresholds.related_similarity
                      if bar is None else bar)
