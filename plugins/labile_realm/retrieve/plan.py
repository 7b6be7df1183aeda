"""Retrieval plans: seed plans (Q, K, T, τ) and per-node expansion actions.

The offline planner derives everything from the question itself: keywords
from its names and keyphrases, node types from its wording, a time range from
the time expressions it contains (resolved against the moment it is asked),
and it always expands with ``subgraph_beam``. The LLM planner
(`labile_realm.retrieve.plan_llm`) asks a model for the same structures; when
its answer is invalid the offline plan is used instead and the failure is
counted in the search state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import attrs

from labile.plugin import Deps, Hit, NoConfig, Query
from labile.text.tokenize import content_words
from labile_realm.schema import ENTITY, EPISODE, EVENT, FACT, PREDICATES_BY_LAYER
from labile_text.entities import named_entities
from labile_text.keywords import keyphrases
from labile_text.timeparse import resolve_time_expressions

if TYPE_CHECKING:
    from labile_realm.retrieve.expand import ExpandConfig
    from labile_realm.retrieve.seed import SeedConfig

SeedMode = Literal["query_match", "keywords_match", "hybrid_match"]
ExpandMode = Literal["subgraph_beam", "path_search"]
Direction = Literal["forward", "backward", "both"]

#: Keys under which the atoms of one search share their work in ``state``.
STATE_PLANS = "realm.plans"
STATE_FAILURES = "realm.llm_failures"
STATE_SEED_SCORES = "realm.seed_scores"
STATE_ACTIVATED = "realm.activated"
STATE_EXPANSION = "realm.expansion"

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
    """

    mode: SeedMode = "hybrid_match"
    query: str
    keywords: tuple[str, ...] = ()
    node_types: frozenset[str] | None = None
    time_range: tuple[datetime, datetime] | None = None


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
    for phrase in keyphrases(text, k=6):
        push(phrase)
    for word in content_words(text):
        push(word)
    return tuple(out[:limit])


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
    Maya doing in September?") keeps both readings.
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
    return start, end


@attrs.frozen(kw_only=True)
class OfflinePlannerConfig:
    """Options of the offline planner.

    Attributes:
        time_padding_days: Widen a question's time range by this many days on
            each side (talk about an event often comes days after it).
        max_keywords: Keywords per plan.
    """

    time_padding_days: float = 0.0
    max_keywords: int = 12


class OfflinePlanner:
    """Seed plans and expansion actions from the question alone (no LLM).

    As ``realm.seed_planner.offline`` it writes the seed plans of a search.
    """

    def __init__(self, config: OfflinePlannerConfig | None = None) -> None:
        self.config = config or OfflinePlannerConfig()

    def seed_plans(
        self, query: Query, max_plans: int, state: dict[str, Any] | None = None
    ) -> list[SeedPlan]:
        """One plan: the question, its keywords, node types and time range."""
        del max_plans, state  # the offline planner never needs more than one plan
        pad = timedelta(days=self.config.time_padding_days)
        return [SeedPlan(
            mode="hybrid_match",
            query=query.text,
            keywords=question_keywords(query.text, self.config.max_keywords),
            node_types=question_node_types(query.text),
            time_range=question_time_range(query.text, query.as_of, pad),
        )]

    def expansion_action(
        self, query: Query, node_id: str, plan: SeedPlan, defaults: ExpansionAction
    ) -> ExpansionAction:
        """The configured default action, with the plan's time range as a soft decay."""
        del node_id
        decay = defaults.temporal_decay
        if decay is None and plan.time_range is not None:
            decay = TemporalDecay(start=plan.time_range[0], end=plan.time_range[1])
        return attrs.evolve(
            defaults, temporal_decay=decay, reasoning=defaults.reasoning or query.text
        )


class OfflineExpansionPolicy:
    """``realm.expansion_policy.offline``: the configured default action for every node,
    with the plan's time range as a soft decay."""

    def __init__(self) -> None:
        self.planner = OfflinePlanner()

    def actions(
        self, query: Query, frontier: Sequence[str], reached: Mapping[str, Hit],
        plan: SeedPlan, defaults: ExpansionAction, state: dict[str, Any],
    ) -> dict[str, ExpansionAction]:
        """One action per frontier node (see `OfflinePlanner.expansion_action`)."""
        del reached, state
        return {i: self.planner.expansion_action(query, i, plan, defaults) for i in frontier}


def build_offline_seed_planner(
    config: NoConfig, deps: Deps, host: SeedConfig
) -> OfflinePlanner:
    """Factory of ``realm.seed_planner.offline`` (options from the host's ``planning``)."""
    del config, deps
    return OfflinePlanner(host.planning)


def build_offline_policy(
    config: NoConfig, deps: Deps, host: ExpandConfig
) -> OfflineExpansionPolicy:
    """Factory of ``realm.expansion_policy.offline``."""
    del config, deps, host
    return OfflineExpansionPolicy()


def plans_of(state: dict[str, Any]) -> list[SeedPlan]:
    """The seed plans of the current search (empty before seeding)."""
    plans = state.get(STATE_PLANS)
    return list(plans) if plans else []


def count_failure(state: dict[str, Any], operation: str) -> None:
    """Count one rejected LLM output of ``operation`` in the search state."""
    failures = state.setdefault(STATE_FAILURES, {})
    failures[operation] = failures.get(operation, 0) + 1
