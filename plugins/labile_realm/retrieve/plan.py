"""Retrieval plans: seed plans (Q, K, T, τ) and per-node expansion actions.

The offline planner derives everything from the question itself
(`labile_realm.retrieve.question` reads it): keywords from its names and
keyphrases, node types from its wording, a time range from the time
expressions it contains (resolved against the moment it is asked), the people
it names as anchors of the seeds, one plan per part of a question with several
parts, and per node an expansion action whose layer filter and mode follow the
question's cues (a cause cue: causal and logical layers, path search from
events; a time cue: the causal layer, where temporal order lives; otherwise
every edge with a beam). The LLM planner
(`labile_realm.retrieve.plan_llm`) asks a model for the same structures; when
its answer is invalid the offline plan is used instead and the failure is
counted in the search state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

import attrs

from labile.plugin import Deps, Hit, Query
from labile.text.tokenize import content_words
from labile_realm.retrieve.question import QuestionReading, read_question
from labile_realm.retrieve.validity import without_tense_cues
from labile_realm.schema import (
    ENTITY,
    EPISODE,
    EVENT,
    FACT,
    PREDICATE_BY_SHORT,
    PREDICATES_BY_LAYER,
)
from labile_text.entities import named_entities
from labile_text.keywords import keyphrases
from labile_text.timeparse import resolve_time_expressions

SeedMode = Literal["query_match", "keywords_match", "hybrid_match"]
ExpandMode = Literal["subgraph_beam", "path_search"]
Direction = Literal["forward", "backward", "both"]

#: Keys under which the atoms of one search share their work in ``state``.
STATE_PLANS = "realm.plans"
STATE_FAILURES = "realm.llm_failures"
STATE_SEED_SCORES = "realm.seed_scores"
STATE_ACTIVATED = "realm.activated"
STATE_EXPANSION = "realm.expansion"
STATE_READING = "realm.question"

_QUESTION_WORDS = frozenset((
    "what", "when", "where", "who", "whom", "whose", "which", "why", "how", "did", "does", "do",
    "is", "are", "was", "were", "has", "have", "had", "can", "could", "would", "should", "will",
))


@attrs.frozen(kw_only=True)
class SeedPlan:
    """One seed plan p = (Q, K, T, τ) plus the matching mode it asks for.

    Attributes:
        mode: The matching mode the planner chose (used by seeders configured
            with ``mode = "plan"``).
        query: Q, the text embedded for ``query_match``/``hybrid_match``.
        keywords: K, the terms of ``keywords_match``/``hybrid_match``.
        node_types: T, the node kinds to seed from (``None``: all).
        time_range: τ, enforced in hybrid mode (nodes without a time pass).
        anchors: Names of people the question is about; seeders may favour
            nodes spoken by or about them (entity-anchored seeding).
    """

    mode: SeedMode = "hybrid_match"
    query: str
    keywords: tuple[str, ...] = ()
    node_types: frozenset[str] | None = None
    time_range: tuple[datetime, datetime] | None = None
    anchors: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class LayerFilter:
    """One ``layer_predicate_include`` item: a layer, optionally one predicate, a direction."""

    layer: str
    predicate: str | None = None
    direction: Direction = "both"

    def allows(self, predicate: str, forward: bool) -> bool:
        """Whether an edge with ``predicate`` followed forward (or backward) passes."""
        if predicate not in PREDICATES_BY_LAYER.get(self.layer, ()):
            return False
        if self.predicate and predicate != self.predicate:
            return False
        return self.direction == "both" or (self.direction == "forward") == forward


def parse_include(items: Sequence[str]) -> tuple[LayerFilter, ...]:
    """Parse ``"layer[/predicate[/direction]]"`` strings into `LayerFilter` items.

    Raises:
        ValueError: an unknown layer, a predicate outside its layer, or a bad direction.
    """
    out = []
    for item in items:
        parts = [p.strip() for p in item.split("/")]
        layer = parts[0]
        predicate = parts[1] if len(parts) > 1 and parts[1] else None
        direction = parts[2] if len(parts) > 2 and parts[2] else "both"
        if layer not in PREDICATES_BY_LAYER:
            raise ValueError(f"unknown layer {layer!r} in {item!r}")
        if predicate is not None:
            full = PREDICATE_BY_SHORT.get(predicate, predicate)
            if full not in PREDICATES_BY_LAYER[layer]:
                raise ValueError(f"predicate {predicate!r} is not in layer {layer!r}")
            predicate = full
        if direction not in ("forward", "backward", "both"):
            raise ValueError(f"direction must be forward, backward or both, got {direction!r}")
        out.append(LayerFilter(layer=layer, predicate=predicate, direction=direction))  # type: ignore[arg-type]
    return tuple(out)


@attrs.frozen(kw_only=True)
class TemporalDecay:
    """A time window with tolerance: ``[start - delta, end + delta]`` costs nothing.

    Attributes:
        start: Window start.
        end: Window end.
        delta: Tolerance on both sides.
        mode: ``hard`` drops nodes outside; ``soft`` penalises them by distance.
        missing_time_mode: ``keep`` nodes without a time (fixed penalty) or ``drop`` them.
    """

    start: datetime
    end: datetime
    delta: timedelta = timedelta(days=7)
    mode: Literal["hard", "soft"] = "soft"
    missing_time_mode: Literal["keep", "drop"] = "keep"


@attrs.frozen(kw_only=True)
class ExpansionAction:
    """The expansion action a_v = (mode, predicate filter, decay, inhibit) for one node.

    Attributes:
        mode: ``subgraph_beam`` or ``path_search``.
        include: Layer/predicate/direction filters; empty means every edge.
        score_threshold: Candidates scoring below are dropped.
        subgraph_max_nodes: Beam budget of new nodes per seed.
        path_max_depth: Longest path, in edges.
        path_top_k: Active paths kept per hop.
        temporal_decay: Optional time window.
        conflict_inhibit: Never follow ``contradicts`` edges.
        reasoning: What the expansion looks for (embedded to score edge descriptions).
    """

    mode: ExpandMode = "subgraph_beam"
    include: tuple[LayerFilter, ...] = ()
    score_threshold: float = 0.2
    subgraph_max_nodes: int = 6
    path_max_depth: int = 3
    path_top_k: int = 3
    temporal_decay: TemporalDecay | None = None
    conflict_inhibit: bool = True
    reasoning: str = ""


def question_keywords(text: str, limit: int = 12) -> tuple[str, ...]:
    """Keywords of a question: its names, keyphrases and remaining content words.

    Question words and auxiliaries are left out; the result keeps the
    question's own spelling and order of importance (names first).
    """
    out: list[str] = []
    seen: set[str] = set()

    def push(term: str) -> None:
        key = term.casefold()
        if key and key not in seen and key not in _QUESTION_WORDS:
            seen.add(key)
            out.append(term)

    for ent in named_entities(text):
        push(ent.name)
    text = _FRAME.sub(" ", text)
    for phrase in keyphrases(text, k=6):
        push(phrase)
    for word in content_words(text):
        push(word)
    return tuple(out[:limit])


#: The frame of a question rather than its subject: "what kind of music" asks about
#: music, "these days" / "at the moment" about the present. As keywords they match any
#: turn that says "kind of" or "days" (BM25 weighs such rarer words highly).
_FRAME = re.compile(
    r"\b(?:(?:kinds?|sorts?|types?)\s+of|these\s+days|at\s+the\s+moment|right\s+now|"
    r"any\s*more|nowadays|currently|at\s+present)\b",
    re.IGNORECASE)


#: Wording that asks about something stable (a preference, identity, possession,
#: relationship, job, home): those questions are answered by facts as well as events.
_STABLE_CUES = re.compile(
    r"\b(?:like|likes|love|loves|enjoy|enjoys|prefer|prefers|favou?rite|hobby|hobbies|"
    r"interest|interests|into|passion|passionate|job|work|works|career|profession|live|lives|"
    r"from|own|owns|have|has|pet|pets|dog|cat|married|single|partner|wife|husband|kids|"
    r"children|identity|personality|kind of person|values|believe|beliefs)\b"
)


def question_node_types(text: str) -> frozenset[str]:
    """The node kinds a question is most likely answered by.

    Events always; facts when it asks about something stable (preferences,
    identity, possessions, relationships, work, home); entities when it asks
    *who* or for a name; episodes when it asks about a whole conversation or a
    period ("during the session", "overall"). Measured on LoCoMo: seeding
    facts for every question let short, generic statements about a person
    crowd out the turns that answer it.
    """
    low = text.casefold()
    kinds = {EVENT}
    if _STABLE_CUES.search(low):
        kinds.add(FACT)
    if re.search(r"\bwho\b|\bwhose\b|\bwhich person\b|\bwhat is (?:the )?name\b", low):
        kinds.add(ENTITY)
    if re.search(r"\b(?:session|conversation|overall|in general|summar)", low):
        kinds.add(EPISODE)
    return frozenset(kinds)


#: A time that closes a span rather than naming one ("as of May", "by 2023", "until June").
_UP_TO = re.compile(r"\b(?:as\s+of|by|until|till|up\s+to|up\s+until)\s+(?:the\s+)?$",
                    re.IGNORECASE)
#: How far back a span closed by `_UP_TO` reaches: further than any memory goes.
_OPEN_PAST = timedelta(days=365 * 100)
_PAST_QUESTION = re.compile(
    r"\b(?:did|was|were|had|went|used\s+to|ago|last|previous(?:ly)?|before)\b", re.IGNORECASE
)
_FUTURE_QUESTION = re.compile(
    r"\b(?:will|going\s+to|plan(?:s|ning)?|next|upcoming|soon)\b|'ll\b", re.IGNORECASE
)


def question_time_range(
    text: str, as_of: datetime, padding: timedelta = timedelta(0)
) -> tuple[datetime, datetime] | None:
    """The union of the time expressions in a question, widened by ``padding``.

    Relative phrases ("last week") are resolved against ``as_of``, the moment
    the question is asked. A bare month, day or weekday follows the question's
    tense: "What did she do in June?" means the last June, "What will she do
    in June?" the next one, and a question without a clear tense ("What is
    Maya doing in September?") keeps both readings. A time that closes a span
    ("as of December", "by June", "until 2023") opens the range to the past:
    what held then is everything said up to it.
    """
    if _PAST_QUESTION.search(text):
        mentions = resolve_time_expressions(text, as_of, tense="past")
    elif _FUTURE_QUESTION.search(text):
        mentions = resolve_time_expressions(text, as_of, tense="future")
    else:
        mentions = resolve_time_expressions(text, as_of, tense="past")
        mentions += resolve_time_expressions(text, as_of, tense="future")
    if not mentions:
        return None
    start = min(m.start for m in mentions) - padding
    end = max(m.end for m in mentions) + padding
    if any(_UP_TO.search(text, 0, m.span[0]) for m in mentions):
        # "How many pets does he have as of May?": everything up to May counts
        start = min(start, as_of - _OPEN_PAST)
    return start, end


@attrs.frozen(kw_only=True)
class OfflinePlannerConfig:
    """Options of the offline planner.

    Attributes:
        time_padding_days: Widen a question's time range by this many days on
            each side (talk about an event often comes days after it).
        max_keywords: Keywords per plan.
        split_parts: One extra plan per part of a question with several parts
            (up to the seeder's ``max_seed_plans``, the whole question first).
        anchor_people: Name the question's people as the plans' anchors.
        layer_filters: Restrict expansion to the layers the question's cues ask
            for (`QuestionReading.layers`); off: every edge.
        choose_mode: Per node: the beam from entities and episodes (hubs),
            path search from other nodes when the question asks for a causal
            chain, else the atom's own mode; off: always the atom's mode.
    """

    time_padding_days: float = 0.0
    max_keywords: int = 12
    split_parts: bool = True
    anchor_people: bool = True
    layer_filters: bool = True
    choose_mode: bool = True


class OfflinePlanner:
    """Seed plans and expansion actions from the question alone (no LLM).

    As ``realm.seed_planner.offline`` it writes the seed plans of a search.
    """

    def __init__(self, config: OfflinePlannerConfig | None = None) -> None:
        self.config = config or OfflinePlannerConfig()

    def reading(self, query: Query, state: dict[str, Any] | None = None) -> QuestionReading:
        """The question's reading, made once per search and kept in ``state``."""
        if state is not None:
            cached = state.get(STATE_READING)
            if isinstance(cached, QuestionReading) and cached.text == query.text:
                return cached
        reading = read_question(query.text)
        if state is not None:
            state[STATE_READING] = reading
        return reading

    def seed_plans(
        self, query: Query, max_plans: int, state: dict[str, Any] | None = None
    ) -> list[SeedPlan]:
        """The whole question's plan, then one plan per part (up to ``max_plans``).

        Every plan carries the question's time range and anchors; a part that
        lost the question's names ("what did she buy there?") gets them back
        in its keywords and embedded text.
        """
        cfg = self.config
        reading = self.reading(query, state)
        pad = timedelta(days=cfg.time_padding_days)
        time_range = question_time_range(query.text, query.as_of, pad)
        anchors = reading.people if cfg.anchor_people else ()
        # the words that ask for the present select a value, they do not describe it
        texts = [without_tense_cues(query.text)]
        if cfg.split_parts and len(reading.parts) > 1:
            texts += [without_tense_cues(p) for p in reading.parts if p != query.text]
        plans = []
        for text in texts[:max(1, max_plans)]:
            missing = [n for n in reading.names if n not in text]
            keywords = question_keywords(text, cfg.max_keywords)
            if missing:
                keywords = tuple(dict.fromkeys((*missing, *keywords)))[: cfg.max_keywords]
                text = f"{' '.join(missing)}: {text}"
            plans.append(SeedPlan(
                mode="hybrid_match", query=text, keywords=keywords,
                node_types=question_node_types(text), time_range=time_range, anchors=anchors,
            ))
        return plans

    def expansion_action(
        self, query: Query, node_id: str, plan: SeedPlan, defaults: ExpansionAction,
        kind: str | None = None, state: dict[str, Any] | None = None,
    ) -> ExpansionAction:
        """The default action, shaped by the question (see `OfflinePlannerConfig`).

        The plan's time range becomes a soft decay; a cause or time cue
        restricts the layers followed (unless the defaults already name
        filters); hubs (entities, episodes) expand by beam, and other nodes by
        path search under a cause cue.
        """
        del node_id
        cfg = self.config
        reading = self.reading(query, state)
        decay = defaults.temporal_decay
        if decay is None and plan.time_range is not None:
            decay = TemporalDecay(start=plan.time_range[0], end=plan.time_range[1])
        include = defaults.include
        if cfg.layer_filters and not include:
            include = tuple(LayerFilter(layer=layer) for layer in reading.layers)
        mode = defaults.mode
        if cfg.choose_mode:
            if kind in (ENTITY, EPISODE):
                # hubs: their neighbours are alternatives, not steps of a chain
                mode = "subgraph_beam"
            elif reading.follows_chains:
                mode = "path_search"
        return attrs.evolve(
            defaults, temporal_decay=decay, include=include, mode=mode,
            reasoning=defaults.reasoning or query.text,
        )


class OfflineExpansionPolicy:
    """``realm.expansion_policy.offline``: per frontier node, the default action
    shaped by the question (`OfflinePlanner.expansion_action`: time decay, layer
    filter, beam or path search by the node's kind)."""

    def __init__(self, config: OfflinePlannerConfig | None = None) -> None:
        self.planner = OfflinePlanner(config)

    def actions(
        self, query: Query, frontier: Sequence[str], reached: Mapping[str, Hit],
        plan: SeedPlan, defaults: ExpansionAction, state: dict[str, Any],
    ) -> dict[str, ExpansionAction]:
        """One action per frontier node (see `OfflinePlanner.expansion_action`)."""
        out = {}
        for i in frontier:
            hit = reached.get(i)
            kind = hit.node.kind if hit is not None else None
            out[i] = self.planner.expansion_action(query, i, plan, defaults, kind, state)
        return out


@attrs.frozen(kw_only=True)
class PlannerConfig:
    """Options of ``realm.seed_planner.offline``, ``realm.expansion_policy.offline``
    and ``realm.seed_planner.llm`` (whose fallback is the offline planner).

    Attributes:
        planning: How the question is read (`OfflinePlannerConfig`).
    """

    planning: OfflinePlannerConfig = attrs.field(factory=OfflinePlannerConfig)


def build_offline_seed_planner(config: PlannerConfig, deps: Deps) -> OfflinePlanner:
    """Factory of ``realm.seed_planner.offline``."""
    del deps
    return OfflinePlanner(config.planning)


def build_offline_policy(config: PlannerConfig, deps: Deps) -> OfflineExpansionPolicy:
    """Factory of ``realm.expansion_policy.offline``."""
    del deps
    return OfflineExpansionPolicy(config.planning)


def plans_of(state: dict[str, Any]) -> list[SeedPlan]:
    """The seed plans of the current search (empty before seeding)."""
    plans = state.get(STATE_PLANS)
    return list(plans) if plans else []


def count_failure(state: dict[str, Any], operation: str) -> None:
    """Count one rejected LLM output of ``operation`` in the search state."""
    failures = state.setdefault(STATE_FAILURES, {})
    failures[operation] = failures.get(operation, 0) + 1
