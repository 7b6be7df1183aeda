"""Offline node and edge decisions (Algorithm 1, steps 3–4) and the structural edges.

Node decision: merge near-duplicates of the same kind (entities by normalised
name and aliases first, then embedding similarity plus a shared name word;
facts by subject + attribute + value, then very high similarity about the same
subject), skip exact duplicates (the same text from the same turns, e.g. a
replayed import), otherwise add. When in doubt the rule is *add*: a wrong
merge loses information, a redundant node costs little.

Edge decision: ``correlates`` between similar event/fact nodes of different
sessions that also share subject words, above a similarity threshold and
under a degree cap; then the relations the text states between the node and
its neighbours (`labile_realm.construct.relations`: ``supersedes`` of plans,
``instantiates``, ``implies``, ``contradicts``, ``analogous_to``).

Structural edges (written in both the offline and the LLM mode, because they
are bookkeeping rather than judgement): the session episode ``comprises`` each
event, consecutive events are linked by ``precedes``, an entity
``contextualizes`` the events and facts that mention it, the turn's event
``verifies`` the facts drawn from it, and a newer fact about the same subject
and single-valued attribute ``supersedes`` the older one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from labile.plugin import Deps, Node
from labile.text.tokenize import content_words
from labile_realm.construct.facts import single_valued
from labile_realm.construct.neighbourhood import Candidate
from labile_realm.construct.ops import EdgeAction, EdgeOp, NodeDecision, NodeOp
from labile_realm.construct.relations import (
    analogies,
    fact_relations,
    plan_supersessions,
    shared_topic,
)
from labile_realm.construct.units import ConversationState, Unit
from labile_realm.schema import (
    COMPRISES,
    CONTEXTUALIZES,
    CORRELATES,
    ENTITY,
    EVENT,
    FACT,
    PRECEDES,
    SUPERSEDES,
    VERIFIES,
)
from labile_text.entities import normalize_name

__all__ = [
    "EdgeAction", "EdgeOp", "NodeDecision", "NodeOp", "OfflineDecisionConfig",
    "OfflineWriteDecider", "build_offline_decider", "structural_edges", "supersession_slot",
]

if TYPE_CHECKING:
    from labile_realm.decisions import EdgeLookup

@attrs.frozen(kw_only=True)
class OfflineDecisionConfig:
    """Thresholds of the offline decisions.

    Attributes:
        entity_merge_similarity: Cosine above which two entities sharing a name
            word are the same entity.
        fact_merge_similarity: Cosine above which two facts about the same
            subject are the same fact.
        correlate_similarity: Cosine above which two event/fact nodes of
            different sessions get a ``correlates`` edge.
        correlate_shared_terms: Content stems (small talk and time words left
            out) the two nodes' own words must share for ``correlates``.
        max_correlates: Degree cap of ``correlates`` per node.
        related_similarity: Cosine above which a neighbour is passed on as related.
        relations: Write the relations the text states between a node and its
            neighbours (``supersedes`` of plans, ``instantiates``, ``implies``,
            ``contradicts``, ``analogous_to``; `labile_realm.construct.relations`).
    """

    entity_merge_similarity: float = 0.9
    fact_merge_similarity: float = 0.95
    correlate_similarity: float = 0.6
    correlate_shared_terms: int = 2
    max_correlates: int = 4
    related_similarity: float = 0.45
    relations: bool = True


#: Attributes whose value is only the relation named ("my family", "my dog"): two
#: statements with the same such value are usually different facts.
_RELATION_ATTRIBUTES = frozenset({"family", "partner", "pet", "status"})


def _norm_text(text: str) -> str:
    return " ".join(text.casefold().split())


def _name_words(name: str) -> set[str]:
    return set(content_words(name))


class OfflineNodeDecider:
    """Rule-based add / modify / skip (see the module docstring)."""

    def __init__(self, config: OfflineDecisionConfig | None = None) -> None:
        self.config = config or OfflineDecisionConfig()

    def decide(  # noqa: PLR0911
        self, unit: Unit, candidates: Sequence[Candidate], state: ConversationState
    ) -> NodeDecision:
        """Decide what to do with ``unit`` given its neighbourhood.

        Args:
            unit: The candidate unit.
            candidates: Its neighbourhood (similar ∪ recent).
            state: The namespace's conversation state (entity index, fact slots).

        Returns:
            The decision; ``add`` whenever no merge rule is sure.
        """
        cfg = self.config
        related = tuple(
            c.node.id for c in candidates
            if c.similarity >= cfg.related_similarity or c.source != "similarity"
        )
        same_kind = [c for c in candidates if c.node.kind == unit.kind]
        for c in same_kind:
            if _norm_text(c.node.content) == _norm_text(unit.content) and set(unit.sources) <= set(
                c.node.sources
            ):
                return NodeDecision(op="skip", target=c.node.id, related=related,
                                    reason="identical content from the same turns")
        if unit.kind == ENTITY:
            names = [unit.name, *unit.attrs.get("aliases", ())]
            for name in names:
                target = state.entity_index.get(normalize_name(name))
                if target is not None:
                    known = next((c.node for c in candidates if c.node.id == target), None)
                    if known is not None and set(unit.sources) <= set(known.sources):
                        return NodeDecision(op="skip", target=target, related=related,
                                            reason="entity already recorded for these turns")
                    return NodeDecision(op="modify", target=target, related=related,
                                        reason="same normalised name or alias")
            nickname = _speaker_nickname(unit, state)
            if nickname is not None:
                return NodeDecision(op="modify", target=nickname, related=related,
                                    reason="short form of a speaker's name")
            words = _name_words(unit.name)
            for c in same_kind:
                if c.similarity >= cfg.entity_merge_similarity and words & _name_words(
                    str(c.node.attrs.get("name", c.node.content))
                ):
                    return NodeDecision(op="modify", target=c.node.id, related=related,
                                        reason="similar entity sharing a name word")
            return NodeDecision(op="add", related=related, reason="new entity")
        if unit.kind == FACT:
            subject = unit.attrs.get("subject")
            attribute = unit.attrs.get("attribute")
            value = _norm_text(str(unit.attrs.get("value", "")))
            for c in same_kind:
                a = c.node.attrs
                if a.get("subject") != subject:
                    continue
                if (a.get("attribute") == attribute and attribute not in _RELATION_ATTRIBUTES
                        and _norm_text(str(a.get("value", ""))) == value):
                    return NodeDecision(op="modify", target=c.node.id, related=related,
                                        reason="same subject, attribute and value")
                if c.similarity >= cfg.fact_merge_similarity:
                    return NodeDecision(op="modify", target=c.node.id, related=related,
                                        reason="near-identical fact about the same subject")
            return NodeDecision(op="add", related=related, reason="new fact")
        return NodeDecision(op="add", related=related, reason=f"new {unit.kind}")


def _speaker_nickname(unit: Unit, state: ConversationState) -> str | None:
    """A one-word person mention that starts a speaker's first name ("Mel" for Melanie)."""
    if unit.attrs.get("category") != "person":
        return None
    key = normalize_name(unit.name)
    if len(key) < 3 or " " in key:
        return None
    matches = [
        norm for norm in state.speakers
        if norm != key and norm.split(" ")[0].startswith(key)
    ]
    if len(matches) != 1:
        return None
    return state.entity_index.get(matches[0])


class OfflineEdgeDecider:
    """``correlates`` edges to similar nodes of other sessions, degree-capped."""

    def __init__(self, config: OfflineDecisionConfig | None = None) -> None:
        self.config = config or OfflineDecisionConfig()

    def decide(
        self,
        node: Node,
        candidates: Sequence[Candidate],
        degree: dict[str, int],
    ) -> list[EdgeOp]:
        """Edges from ``node`` to its neighbours.

        Args:
            node: The node just added or merged into.
            candidates: Its neighbourhood.
            degree: Current ``correlates`` degree per node id (updated in place).

        Returns:
            The ``add`` operations.
        """
        cfg = self.config
        if node.kind not in (EVENT, FACT) or node.attrs.get("clause_of"):
            return []
        session = node.attrs.get("session")
        ops: list[EdgeOp] = []
        for c in candidates:
            other = c.node
            if other.id == node.id or other.kind not in (EVENT, FACT):
                continue
            if other.attrs.get("clause_of"):
                continue  # a clause is reached through its turn's event
            if c.similarity < cfg.correlate_similarity or other.attrs.get("session") == session:
                continue
            topic = shared_topic(node, other)
            if len(topic) < cfg.correlate_shared_terms:
                continue  # similar in tone only (two warm replies), not in subject
            if degree.get(node.id, 0) >= cfg.max_correlates:
                break
            if degree.get(other.id, 0) >= cfg.max_correlates:
                continue
            degree[node.id] = degree.get(node.id, 0) + 1
            degree[other.id] = degree.get(other.id, 0) + 1
            ops.append(EdgeOp(
                action="add", src=node.id, dst=other.id, predicate=CORRELATES,
                description=f"both about {', '.join(sorted(topic)[:4])}: "
                            f"{_label(node)} / {_label(other)}",
                weight=round(min(1.0, max(0.0, c.similarity)), 4),
            ))
        return ops


class OfflineWriteDecider:
    """``realm.write_decider.offline``: the rule-based node and edge decisions.

    Entity nodes get structural edges only; every neighbour of a node is
    considered for its ``correlates`` edges.

    Args:
        config: The decision thresholds.
    """

    links_entities = False
    #: The host adds the turn before a new event to its neighbours (the
    #: ``analogous_to`` rule reads the turn a reply answers).
    reads_previous_turn = True

    def __init__(self, config: OfflineDecisionConfig | None = None) -> None:
        self.nodes = OfflineNodeDecider(config)
        self.edges = OfflineEdgeDecider(config)
        self.relations = (config or OfflineDecisionConfig()).relations

    def decide_node(
        self, unit: Unit, candidates: Sequence[Candidate], state: ConversationState
    ) -> NodeDecision:
        """Add, modify or skip ``unit`` (see `OfflineNodeDecider`)."""
        return self.nodes.decide(unit, candidates, state)

    def neighbours_to_link(
        self, decision: NodeDecision, candidates: Sequence[Candidate], node: Node
    ) -> list[Candidate]:
        """Every candidate: the edge rules choose among them."""
        del decision, node
        return list(candidates)

    def decide_edges(
        self, node: Node, candidates: Sequence[Candidate], edges: EdgeLookup
    ) -> list[EdgeOp]:
        """``correlates`` edges within the degree cap (see `OfflineEdgeDecider`), and the
        relations the text states (`labile_realm.construct.relations`)."""
        degree = edges.degrees([node.id, *(c.node.id for c in candidates)])
        ops = self.edges.decide(node, candidates, degree)
        if self.relations and not node.attrs.get("clause_of"):
            ops += plan_supersessions(node, candidates)
            ops += fact_relations(node, candidates)
            ops += analogies(node, candidates)
        return ops


@attrs.frozen(kw_only=True)
class OfflineDeciderConfig:
    """Options of ``realm.write_decider.offline``.

    Attributes:
        thresholds: Its similarity bars and caps (`OfflineDecisionConfig`).
    """

    thresholds: OfflineDecisionConfig = attrs.field(factory=OfflineDecisionConfig)


def build_offline_decider(config: OfflineDeciderConfig, deps: Deps) -> OfflineWriteDecider:
    """Factory of ``realm.write_decider.offline``."""
    del deps
    return OfflineWriteDecider(config.thresholds)


def _label(node: Node) -> str:
    name = str(node.attrs.get("name") or node.attrs.get("statement") or node.content)
    return " ".join(name.split()[:12])


def structural_edges(
    node: Node,
    *,
    episode_id: str | None,
    previous_event: Node | None,
    event_node: Node | None,
    entity_nodes: Sequence[Node],
    superseded: Node | None,
) -> list[EdgeOp]:
    """The bookkeeping edges of one written unit (see the module docstring).

    Args:
        node: The node the unit became (added or merged into).
        episode_id: The session episode of the unit's turn.
        previous_event: The previous event of the same session (for ``precedes``).
        event_node: The event of the same turn (for facts: ``verifies``).
        entity_nodes: Entities mentioned in the turn (``contextualizes``).
        superseded: An older fact this one replaces.

    Returns:
        The ``add`` operations.
    """
    ops: list[EdgeOp] = []
    label = _label(node)
    if node.kind == EVENT:
        if episode_id is not None:
            ops.append(EdgeOp(action="add", src=episode_id, dst=node.id, predicate=COMPRISES,
                              description=f"the session includes: {label}", weight=1.0))
        if previous_event is not None and previous_event.id != node.id:
            ops.append(EdgeOp(
                action="add", src=previous_event.id, dst=node.id, predicate=PRECEDES,
                description=f"{_who(previous_event)}: {_label(previous_event)}, then "
                            f"{_who(node)}: {label}",
                weight=0.8,
            ))
    if node.kind in (EVENT, FACT):
        for ent in entity_nodes:
            ops.append(EdgeOp(
                action="add", src=ent.id, dst=node.id, predicate=CONTEXTUALIZES,
                description=_mention(ent, node, label), weight=0.6,
            ))
    if node.kind == FACT and event_node is not None:
        ops.append(EdgeOp(
            action="add", src=event_node.id, dst=node.id, predicate=VERIFIES,
            description=f"what {_who(event_node)} said supports: {label}", weight=0.9,
        ))
    if node.kind == FACT and superseded is not None and superseded.id != node.id:
        ops.append(EdgeOp(
            action="add", src=node.id, dst=superseded.id, predicate=SUPERSEDES,
            description=f"newer: {label}; older: {_label(superseded)}", weight=0.9,
        ))
    return ops


def _mention(entity: Node, node: Node, label: str) -> str:
    """How an entity stands to a turn: who speaks, where it happens, or what it is about."""
    name = entity.attrs.get("name", entity.content)
    category = entity.attrs.get("category")
    if name == node.attrs.get("speaker") or name == node.attrs.get("subject"):
        return f"{name} says: {label}"
    if category == "person":
        return f"{name} takes part in or is talked about in: {label}"
    if category == "place":
        return f"place {name} is where this happens or is mentioned: {label}"
    return f"{name} ({category or 'thing'}) is what this is about: {label}"


def supersession_slot(unit: Unit) -> tuple[str, str] | None:
    """The (subject, attribute) slot a fact fills when its attribute is single-valued."""
    if unit.kind != FACT:
        return None
    subject, attribute = unit.attrs.get("subject"), unit.attrs.get("attribute")
    if not subject or not attribute or not single_valued(str(attribute)):
        return None
    return str(subject), str(attribute)


def _who(node: Node) -> str:
    return str(node.attrs.get("speaker") or node.attrs.get("subject") or "someone")
