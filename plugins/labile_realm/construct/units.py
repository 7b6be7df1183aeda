"""Candidate memory units and the per-namespace conversation state.

A `Unit` is what an extractor proposes before the node decision: a typed,
described piece of one or more observations. `ConversationState` is what
Algorithm 1 conditions on besides the graph: the running summary (s_t), the
recent turns (c_t), the recently touched nodes (N_recent) and small indexes
that keep construction away from whole-namespace scans.
"""

from __future__ import annotations

from collections import Counter, deque
from datetime import datetime
from typing import Any

import attrs

from labile.plugin import Node, Observation
from labile_realm.construct.entity_keys import entity_type, typed_key
from labile_realm.construct.supersede import SlotIndex
from labile_text.entities import name_keys, normalize_name


@attrs.frozen
class UnitLink:
    """An edge a unit asks for to another unit of the same observation.

    The host writes it once both units are placed (added or merged), so an
    extractor can state relations it reads off one turn (a turn comprises its
    clauses; one clause triggers another) without knowing node ids.

    Attributes:
        predicate: The registered predicate (``realm.triggers`` …).
        target: The ``key`` of the other unit of the same observation.
        description: What the edge means, in words (expansion scores it).
        weight: Confidence in [0, 1].
    """

    predicate: str
    target: str
    description: str
    weight: float


@attrs.define(kw_only=True)
class Unit:
    """A candidate memory unit (one node to add, merge or skip).

    Attributes:
        kind: The registered node kind (``realm.event`` …).
        key: Identifies the unit within its namespace (its stable id is derived
            from it), e.g. ``"event|D1:3"``.
        name: A short name (entity name, event name, fact keyphrase).
        content: Raw evidence (verbatim text); becomes the node's immutable content.
        description: The regenerable description, with its context spelled out.
        keywords: Keyphrases and names.
        time_start: Start of the unit's time span, if any.
        time_end: Inclusive end of the span, if any.
        sources: Observation ids the unit comes from.
        attrs: Kind-specific fields (``aliases``, ``participants``, ``subject``…).
        links: Edges to other units of the same observation (`UnitLink`).
        searchable: Whether the node gets an embedding (and a neighbourhood). A
            unit that is only a part of its turn (a cause or effect clause) is
            not: it is reached through the turn's edges, never seeded alone.
    """

    kind: str
    key: str
    name: str
    content: str
    description: str
    keywords: tuple[str, ...] = ()
    time_start: datetime | None = None
    time_end: datetime | None = None
    sources: tuple[str, ...] = ()
    attrs: dict[str, Any] = attrs.field(factory=dict)
    links: tuple[UnitLink, ...] = ()
    searchable: bool = True

    @property
    def embed_text(self) -> str:
        """The text the unit (and its node) is embedded from: its description.

        Keywords are left to lexical search: measured on LoCoMo, appending them
        to the embedded text made the dense signal worse.
        """
        return self.description


@attrs.define(kw_only=True)
class Turn:
    """One recent observation, as the extractors see it."""

    id: str
    speaker: str | None
    text: str
    timestamp: datetime
    session: str | None
    questions: tuple[str, ...] = ()
    event_id: str | None = None


@attrs.define(kw_only=True)
class ConversationState:
    """What construction remembers about one namespace between observations.

    Attributes:
        summary: The running conversation summary (s_t), at most ~200 words.
        recent: The last observations (c_t), oldest first.
        touched: Ids of recently created or changed nodes (N_recent), oldest first.
        speakers: Speaker names seen so far (normalised name -> surface form).
        entity_index: Normalised entity name, alias or short form -> entity node id
            (`labile_realm.construct.identity`).
        entity_types: Entity node id -> its ``(category, cue)``.
        session_terms: Session key -> keyphrase counts (for the episode description).
        session_turns: Session key -> observation ids of the session's events.
        session_span: Session key -> (first, last) observation timestamp.
        fact_slots: (subject, attribute) -> id of the current fact node.
        value_slots: The statements still current in each one-at-a-time slot
            (`labile_realm.construct.supersede`).
        loaded: Whether the indexes were rebuilt from the store in this process.
    """

    summary: str = ""
    recent: deque[Turn] = attrs.field(factory=lambda: deque(maxlen=12))
    touched: deque[str] = attrs.field(factory=lambda: deque(maxlen=24))
    speakers: dict[str, str] = attrs.field(factory=dict)
    entity_index: dict[str, str] = attrs.field(factory=dict)
    entity_types: dict[str, tuple[str, str]] = attrs.field(factory=dict)
    session_terms: dict[str, Counter[str]] = attrs.field(factory=dict)
    session_turns: dict[str, list[str]] = attrs.field(factory=dict)
    session_span: dict[str, tuple[datetime, datetime]] = attrs.field(factory=dict)
    fact_slots: dict[tuple[str, str], str] = attrs.field(factory=dict)
    value_slots: SlotIndex = attrs.field(factory=SlotIndex)
    loaded: bool = False

    def touch(self, node_id: str) -> None:
        """Record ``node_id`` as the most recently touched node."""
        if node_id in self.touched:
            self.touched.remove(node_id)
        self.touched.append(node_id)

    def listener_for(self, speaker: str | None) -> str | None:
        """The most recent other speaker: who ``speaker`` is most likely talking to."""
        for turn in reversed(self.recent):
            if turn.speaker and turn.speaker != speaker:
                return turn.speaker
        others = [s for s in self.speakers.values() if s != speaker]
        return others[0] if len(others) == 1 else None

    def pending_question(self, speaker: str | None) -> tuple[Turn | None, tuple[str, ...]]:
        """The questions another speaker asked in the turns just before ``speaker`` replies.

        Only the other speaker's turns since ``speaker`` last spoke count: a
        question already answered is not context for the next reply.
        """
        for turn in reversed(self.recent):
            if turn.speaker == speaker:
                return None, ()
            if turn.questions:
                return turn, turn.questions
        return None, ()

    def index_entity(self, node: Node) -> None:
        """Index an entity node by its names, aliases, short forms and typed keys.

        The first node to claim a key keeps it, except that a node naming the
        holder in its ``same_as`` takes it over (a speaker who introduced
        themself by a name that already had a node).
        """
        category, cue = entity_type(node.attrs)
        self.entity_types[node.id] = (category, cue)
        absorbed = set(node.attrs.get("same_as", ()))
        names = [node.attrs.get("name", ""), *node.attrs.get("aliases", ())]
        for name in names:
            keys = name_keys(str(name))
            for key in (*keys, *(typed_key(k, category) for k in keys[:1] if category)):
                if self.entity_index.get(key) in absorbed:
                    self.entity_index[key] = node.id
                else:
                    self.entity_index.setdefault(key, node.id)

    def remember(self, obs: Observation, questions: tuple[str, ...], event_id: str | None) -> None:
        """Append ``obs`` to the recent context."""
        self.recent.append(
            Turn(id=obs.id, speaker=obs.speaker, text=obs.text, timestamp=obs.timestamp,
                 session=obs.session, questions=questions, event_id=event_id)
        )
        if obs.speaker:
            self.speakers.setdefault(normalize_name(obs.speaker), obs.speaker)
