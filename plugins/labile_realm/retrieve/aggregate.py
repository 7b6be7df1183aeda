"""Filter ``realm.aggregate``: evidence aggregation (eq. 9) and the activated subgraph.

Every hit gets ``Score(v) = α·s_acc(v) + (1 − α)·sim(v, q)`` with α = 0.8,
where s_acc is the access score of an expanded node (eq. 8) and, for a seed,
its seed score; sim is the cosine of the node and query embeddings. The
top-K (K = 10, or the query's k if larger) form the evidence; the subgraph
they induce (every edge between two of them) is the activated subgraph G_q,
stored in ``state["realm.activated"]`` for reconsolidation.

Two ranking rules keep the evidence list useful to a reader who expands
nodes into their source turns (the benchmarks' turn-level recall): kinds outside ``evidence_kinds``
(by default entities and episodes, whose sources span many turns) are ranked
after the evidence kinds; and a hit whose sources are all already covered by
better hits is moved behind the hits that add new sources
(``demote_covered``). Neither rule drops a hit.

``latest_first`` orders by validity (`labile_realm.retrieve.validity`): for
a question about now ("now", "currently", "still", or no time cue at all) the
node that replaced a hit comes just above it, fetched when it was not found;
for a question about then ("used to", "before", "in 2022") the replaced node
comes just above what replaced it. Replacements after the question's
``as_of`` are not applied. Before that, a question that says "now" ("used
to") leans towards the latest (earliest) of the best hits (``recency_weight``);
when it asks for a kind of value ("Where does she live now?"), towards the
latest of the hits about that kind (``lean_on_topic``). A question in the
present tense without a cue ("Where does she live?") only has the hits about
the kind it asks for among the first few (``present_head``) ordered latest
first: nothing enters or leaves the head of the list. Only turns that state
something lean (`labile_realm.retrieve.validity.states_something`: not a turn
that only asks, not the agent's own turns, not a search or an intention; for a
question about now, not a turn that tells how things used to be: ``tells_now``).
A replacement is lifted only for a question about its own kind of value, and the
agent's own turns rank below the people's unless the question speaks to the agent
(``agent_penalty``).
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

import attrs
import numpy as np
from attrs.validators import ge, gt, in_, le

from labile.plugin import Deps, Hit, Query, Store, Subgraph, bounded, cosine
from labile_realm.retrieve.plan import STATE_ACTIVATED, STATE_READING
from labile_realm.retrieve.question import QuestionReading, read_question
from labile_realm.retrieve.score import aggregate_score
from labile_realm.retrieve.topic import question_topics, statement_topics
from labile_realm.retrieve.validity import (
    demote_questions,
    order_by_validity,
    read_tense,
    recency_prior,
    states_something,
    tells_now,
)
from labile_realm.schema import is_agent, kind_name


@attrs.frozen(kw_only=True)
class AggregateConfig:
    """Options of ``realm.aggregate``.

    Attributes:
        alpha: α of eq. 9.
        top_k: K, the size of the evidence set (the query's k if larger).
        evidence_kinds: Kinds ranked first (short or full names).
        demote_covered: Move hits that add no new source behind those that do.
        latest_first: Order by validity: for a question about now, what
            replaced a hit comes just above it; about then, what was replaced
            comes just above what replaced it.
        recency_weight: With ``latest_first``, how far a question about now
            (then) leans towards the latest (earliest) of the best hits
            (`labile_realm.retrieve.validity.recency_prior`); 0 turns it off.
        present_recency_weight: The same lean for a question in the present
            tense that does not say "now" ("Where does she live?") and asks for
            a kind of value (`labile_realm.retrieve.topic`), applied only to the
            hits about that kind among the ``present_head`` best evidence hits:
            it orders the head of the list, never brings a hit into it (such a
            question is usually about what holds, but as often about what never
            changed). 0 turns it off.
        present_head: How many of the best evidence hits that lean may reorder.
            Measured on the change benchmark (head 5): current-value Hit@1
            58.5 → 62.2, stale-first 17.1 → 11.0, unchanged facts R@1 38.5 →
            30.8 (R@5 the same); LoCoMo dev R@5 70.0 → 70.1, R@1 43.8 → 42.6.
            Head 10 gave 63.4 / 9.8 but LoCoMo R@5 69.7; a lean over the best 30
            hits of every present question (the first design, weight 0.3)
            gained 3.6 Hit@1 and cost 2.4 points of LoCoMo R@5.
        lean_on_topic: For a question about now that asks for a kind of value
            (a home, a job, a diet, pets …: `labile_realm.retrieve.topic`), the
            lean applies only to the hits that talk about that kind: the latest
            turn about work, not the latest turn ("What does she do these days?"
            is not answered by "I cook every night now"). Measured: current-value
            Hit@1 on the change benchmark 54.9 → 58.5, LoCoMo dev R@5 unchanged
            (70.0; 12 of 1,033 lists changed).
        recency_pool: How many of the best evidence hits that lean applies to.
        recency_band: The lean shrinks linearly with a hit's distance below the
            best score, to nothing at ``band`` below it.
        fetch_present: A question in the present tense without a cue of time
            ("Where does she live?") is treated like one that says "now": what
            replaced a hit is fetched when the search did not find it. Off by
            default: on LoCoMo dev it cost 0.2 points of R@5 and on the change
            benchmark it gained nothing at Hit@1.
        question_penalty: With ``latest_first``, how much a turn that only asks
            ("Are you still running?") loses for a question about a value
            (`labile_realm.retrieve.validity.demote_questions`); 0 turns it off.
        agent_penalty: How much a turn of the agent itself (speaker ``assistant``,
            ``ai``, ``bot`` …: `labile_realm.schema.is_agent`) loses against the
            people's own turns, unless the question speaks to the agent ("What did
            you suggest?"). The agent's advice and drafts ("Working back from March
            3, you'd want a code freeze …") share the words of a question about the
            user's life but are not what happened. Measured on the change benchmark:
            past-value R@5 78.2 → 82.1, unchanged facts R@1 37.2 → 38.5, the rest
            the same; LoCoMo has no agent turns. 0 turns it off.
        session_penalty: Diversity over sessions: walking the evidence list
            best first, a hit loses this much for each better hit already
            taken from its session (greedy, so a demoted hit can still win
            later). Evidence for a question spread over a conversation sits in
            different sessions, and a session's best turn usually brings its
            neighbours along; 0 turns it off.
        diversity_for: Which questions the diversity step serves: ``"many"``
            those that ask for several things (`QuestionReading.asks_many`:
            "What books has she read?"), whose evidence is spread over the
            conversation; ``"all"`` every question (measured: it costs the
            questions answered by one turn more than it gains).
        diversity_pool: How many of the best evidence hits the diversity step
            re-orders (the rest keep their order behind them).
    """

    alpha: float = attrs.field(default=0.8, validator=[ge(0.0), le(1.0)])
    top_k: int = attrs.field(default=10, validator=bounded(1, 100_000))
    evidence_kinds: tuple[str, ...] = ("event", "fact")
    demote_covered: bool = True
    latest_first: bool = True
    recency_weight: float = attrs.field(default=1.0, validator=[ge(0.0), le(1.0)])
    present_recency_weight: float = attrs.field(default=1.0, validator=[ge(0.0), le(1.0)])
    recency_pool: int = attrs.field(default=30, validator=bounded(1, 10_000))
    recency_band: float = attrs.field(default=1.0, validator=gt(0.0))
    fetch_present: bool = False
    question_penalty: float = attrs.field(default=0.3, validator=[ge(0.0), le(1.0)])
    agent_penalty: float = attrs.field(default=0.3, validator=[ge(0.0), le(1.0)])
    session_penalty: float = attrs.field(default=0.0, validator=[ge(0.0), le(1.0)])
    diversity_for: Literal["many", "all"] = attrs.field(default="many",
                                                        validator=in_(("many", "all")))
    diversity_pool: int = attrs.field(default=30, validator=bounded(1, 100_000))
    lean_on_topic: bool = True
    present_head: int = attrs.field(default=5, validator=bounded(1, 1000))

    def __attrs_post_init__(self) -> None:
        bad = [t for t in self.evidence_kinds if kind_name(t) is None]
        if bad:
            raise ValueError(f"unknown evidence kind(s) {bad!r}")


class Aggregate:
    """The ``realm.aggregate`` filter (see the module docstring)."""

    def __init__(self, config: AggregateConfig, deps: Deps) -> None:
        self.config = config
        self.store: Store = deps.store
        self.kinds = frozenset(str(kind_name(k)) for k in config.evidence_kinds)

    def filter(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        """Re-score with eq. 9, rank, keep the top-K, record G_q."""
        q = np.asarray(query.vector, dtype=np.float32) if query.vector is not None else None
        scored: list[Hit] = []
        for h in hits:
            s_acc = h.scores.get("access", h.scores.get("seed", h.score)) \
                if h.via.stage == "expand" else h.scores.get("seed", h.score)
            sim = cosine(q, h.node.embedding)
            score = aggregate_score(s_acc, sim, self.config.alpha)
            scored.append(attrs.evolve(h, score=score,
                                       scores={**h.scores, "similarity": sim, "aggregate": score}))
        demote_agents = self.config.agent_penalty > 0 \
            and not _SPEAKS_TO_AGENT.search(query.text)
        if self.config.latest_first:
            tense = read_tense(query.text)
            wanted = question_topics(query.text)
            pool = [h for h in scored if h.node.kind in self.kinds]
            if tense == "present":
                _order_present(pool, wanted, self.config.present_recency_weight,
                               self.config.present_head, self.config.recency_band)
            else:
                leaning = [h for h in pool
                           if (tells_now(h) if tense == "now" else states_something(h))]
                if tense == "now" and self.config.lean_on_topic:
                    leaning = _on_topic(leaning, wanted)
                recency_prior(leaning, tense, self.config.recency_weight,
                              self.config.recency_pool, self.config.recency_band)
            demote_questions(scored, tense, self.config.question_penalty)
            # after the lean (which reads the best score), before the validity order
            # (which lifts a replacement just above what it replaced)
            if demote_agents:
                demote_agent(scored, self.config.agent_penalty)
            order_by_validity(self.store, query.namespace, scored, tense, query.as_of,
                              fetch_present=self.config.fetch_present,
                              kinds=wanted)
        elif demote_agents:
            demote_agent(scored, self.config.agent_penalty)
        scored.sort(key=lambda h: (-h.score, h.node.id))
        evidence = [h for h in scored if h.node.kind in self.kinds]
        context = [h for h in scored if h.node.kind not in self.kinds]
        if self.config.session_penalty > 0 and (
                self.config.diversity_for == "all" or _reading(query, state).asks_many):
            evidence = _diversify(evidence, self.config.session_penalty,
                                  self.config.diversity_pool)
        if self.config.demote_covered:
            evidence = _demote_covered(evidence)
        scored = evidence + context
        k = max(self.config.top_k, query.k)
        top = _rank_scores(scored[:k])
        ids = [h.node.id for h in top]
        id_set = set(ids)
        edges = tuple(
            e for e in self.store.edges_of(query.namespace, ids, direction="out")
            if e.dst in id_set
        )
        state[STATE_ACTIVATED] = Subgraph(node_ids=tuple(ids), edges=edges)
        return top


#: A question to the agent about its own words: "What did you suggest?", "your advice".
_SPEAKS_TO_AGENT: Final = re.compile(r"\b(?:you|your|yours)\b", re.IGNORECASE)


def demote_agent(hits: list[Hit], penalty: float) -> None:
    """Lower, in place, the agent's own turns by ``penalty`` (recorded as
    ``scores["agent"]``)."""
    for h in hits:
        if is_agent(h.node.attrs.get("speaker")):
            h.score -= penalty
            h.scores["agent"] = -penalty


def _on_topic(hits: list[Hit], wanted: frozenset[str]) -> list[Hit]:
    """The ``hits`` that talk about the kinds of value ``wanted`` (the question's,
    `labile_realm.retrieve.topic.question_topics`); all of them when it names no kind, or
    none talks about them."""
    if not wanted:
        return hits
    on_topic = [h for h in hits if statement_topics(h.node.content or "") & wanted]
    return on_topic or hits


def _order_present(hits: list[Hit], wanted: frozenset[str], weight: float, k: int,
                   band: float) -> None:
    """Lean the hits about the kinds of value ``wanted`` (the question's), among the
    ``k`` best of ``hits``, towards the latest (in place).

    Only hits already among the ``k`` best gain, so which hits are returned does
    not change, only their order; a question that names no kind changes nothing.
    """
    if not wanted or weight <= 0:
        return
    best = sorted(hits, key=lambda h: (-h.score, h.node.id))[:k]
    about = [h for h in best
             if tells_now(h) and statement_topics(h.node.content or "") & wanted]
    recency_prior(about, "now", weight, len(about), band)


def _reading(query: Query, state: dict[str, Any]) -> QuestionReading:
    cached = state.get(STATE_READING)
    if isinstance(cached, QuestionReading) and cached.text == query.text:
        return cached
    return read_question(query.text)


def _rank_scores(hits: list[Hit]) -> list[Hit]:
    """The hits with scores that follow their order: each is capped at the one above it.

    The ordering rules (evidence kinds first, diversity, covered hits last) can
    place a hit above a better-scoring one; a reader of the list (``labile
    search``) should see scores that fall with the rank. The eq. 9 score stays
    in ``scores["aggregate"]``.
    """
    out: list[Hit] = []
    ceiling = float("inf")
    for h in hits:
        ceiling = min(ceiling, h.score)
        out.append(h if h.score <= ceiling else attrs.evolve(h, score=ceiling))
    return out


def _session_of(hit: Hit) -> str | None:
    session = hit.node.attrs.get("session")
    return str(session) if session is not None else None


def _diversify(hits: list[Hit], penalty: float, pool: int) -> list[Hit]:
    """Greedy re-order of the first ``pool`` hits: each pick maximises its score minus
    ``penalty`` × the hits already picked from its session (hits without a session
    are never penalised). Scores are left as they are; only the order changes."""
    head, tail = hits[:pool], hits[pool:]
    taken: dict[str, int] = {}
    out: list[Hit] = []
    while head:
        best = max(range(len(head)), key=lambda i: (
            head[i].score - penalty * taken.get(_session_of(head[i]) or "", 0)
            if _session_of(head[i]) is not None else head[i].score, -i))
        hit = head.pop(best)
        session = _session_of(hit)
        if session is not None:
            taken[session] = taken.get(session, 0) + 1
        out.append(hit)
    return out + tail


def _demote_covered(hits: list[Hit]) -> list[Hit]:
    covered: set[str] = set()
    fresh: list[Hit] = []
    stale: list[Hit] = []
    for h in hits:
        sources = set(h.node.sources)
        if sources and sources <= covered:
            stale.append(h)
        else:
            fresh.append(h)
            covered |= sources
    return fresh + stale


def build(config: AggregateConfig, deps: Deps) -> Aggregate:
    """Factory of ``realm.aggregate``."""
    return Aggregate(config, deps)
