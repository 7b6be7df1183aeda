"""Now or then: ordering hits by validity (the ``valid_to`` / ``superseded_by`` contract).

A question about the present ("Where does she live now?", and a question
with no time cue at all, which almost always wants what holds now) is
answered by the current value; one about the past ("Where did she use to
live?", "What did he drink before?") by the value that was replaced.
`order_by_validity` edits the scores of a ranked list in place so that:

* ``now``: every hit that was superseded (as of the question's time) has
  the node that replaced it (followed to the end of the chain: the value
  current then) just above it; a replacing node not yet among the hits is
  fetched and added there, so a stale statement never outranks what replaced
  it and the history stays right below;
* ``present`` (no cue of time): the same, but only among the nodes the
  search found (nothing is fetched: the question may well be about something
  that never changed; ``fetch_present`` fetches as for ``now``);
* ``then`` and ``dated`` (a past time named: "in 2022"): every current hit
  that replaced older ones has them just above it (fetched when missing), so
  the old value comes first and the new one right after;
* ``planned`` (the date of a plan as it stands: "When is she running
  Chicago?", "When will he leave?"): as ``now`` — a plan moved to a new date
  has the new one just above it — but without the lean towards the latest
  statement, because a later mention of a plan need not be about its date;
* ``any`` (a question about a time or a date, "When did she move?", or
  about an event, "What did she buy?"): nothing changes.

Only nodes learned by the question's time take part (`labile.plugin.Node.learned_at`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Final, Literal

from labile.plugin import Hit, Node, Reach, Store
from labile_realm.retrieve.topic import statement_topics
from labile_realm.schema import SUPERSEDES, is_agent

__all__ = ["Tense", "demote_questions", "order_by_validity", "read_tense",
           "recency_prior", "states_something", "tells_now", "without_tense_cues"]

#: ``now``: the question says it wants the present ("now", "still", "these days");
#: ``present``: it asks in the present tense without saying so; ``then``: the past
#: ("used to", "before"); ``dated``: a past time it names ("in 2022", "last year");
#: ``planned``: a plan as it stands ("When is she flying to Japan?", "What is she doing
#: in September?");
#: ``any``: a time, a change or a past event.
Tense = Literal["now", "planned", "present", "then", "dated", "any"]

_NOW: Final = re.compile(
    r"\b(?:now|current|currently|still|nowadays|these\s+days|latest|anymore|any\s+more|"
    r"at\s+the\s+moment|presently|at\s+present|today)\b",
    re.IGNORECASE,
)
_THEN: Final = re.compile(
    r"\b(?:used\s+to|use\s+to\s+\w+(?=\s*(?:\?|$))|before(?=\s*(?:[?.!]|$|that\b|then\b))|"
    r"previously|formerly|originally|"
    r"at\s+first|in\s+the\s+past|"
    r"back\s+(?:when|in|then)|earlier|former|initially|prior|(?:was|were)\s+\w+ing|"
    r"at\s+the\s+time)\b",
    re.IGNORECASE,
)
#: A past time named ("in 2022", "last year", "in March"): the planner's time range
#: finds its statements, so no lean towards the earliest, only the replaced value first.
_DATED: Final = re.compile(
    r"\b(?:in\s+(?:(?:early|late|mid)\s+)?(?:19|20)\d\d|last\s+(?:year|month|spring|summer|"
    r"fall|autumn|winter)|in\s+(?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december)|ago)\b",
    re.IGNORECASE,
)
#: The words of a present cue that say *when* a value holds, not *what* it is about:
#: left out of the text a question is matched with ("Is she still at the bank?"
#: matches "the bank", not every turn that says "still").
_NOW_WORDS: Final = re.compile(
    r"\b(?:right\s+now|just\s+now|now|currently|still|nowadays|these\s+days|anymore|"
    r"any\s+more|at\s+the\s+moment|presently|at\s+present|any\s+longer)\b",
    re.IGNORECASE,
)
_WHEN: Final = re.compile(
    # "How long is her commute?" asks for a measure that holds now, not a span of time
    r"\b(?:when|how\s+long(?!\s+(?:is|are|does|do)\b)|what\s+(?:year|month|day|date|time)|"
    r"which\s+(?:year|month|day|date)|since|until|change[sd]?|switch(?:ed)?|move[sd]?\s+(?:from|to))\b",
    re.IGNORECASE,
)
#: "When is she running Chicago?", "When will he leave?": the date a plan holds now,
#: which a later message may have moved ("we're pushing it to April").
_WHEN_PLANNED: Final = re.compile(r"\bwhen\s+(?:is|are|will|does|do)\b", re.IGNORECASE)
#: Cues that a question about a named time looks back: "ago", "last year", or a past
#: verb right after the question word ("What happened in 2022?", "Who visited in May?").
_AGO: Final = re.compile(r"\b(?:ago|last\s+(?:year|month|spring|summer|fall|autumn|winter))\b|"
                         r"^\s*(?:what|who|where|which|how)\s+(?:\w+\s+)?\w+ed\b",
                         re.IGNORECASE)
#: A question in the past simple ("What did she buy?") asks about an event, not a value.
_PAST_EVENT: Final = re.compile(r"\b(?:did|was|were|had)\b", re.IGNORECASE)
_LIFT: Final = 1e-6
#: A statement of an intention or a search, not of what holds: "I'm looking for a flat",
#: "leaning toward Lawrenceville", "thinking about applying".
_TENTATIVE: Final = re.compile(
    r"\b(?:looking (?:for|at|into)|thinking (?:about|of)|leaning (?:toward|towards)|"
    r"considering|hoping to|planning (?:to|on))\b",
    re.IGNORECASE,
)
#: How things were ("I used to do two miles", "back when I lived in Leeds"): the value
#: such a turn tells is the old one. Narrower than construction's reading of the past
#: (`labile_realm.construct.change`), which also leaves out "we moved back from the
#: in-laws'" as a value of the in-laws' home: that turn still tells where one lives now.
_FORMERLY: Final = re.compile(r"\b(?:used\s+to|back\s+when)\b", re.IGNORECASE)
#: Longest chain of replacements followed (a guard against a cycle in a broken store).
_MAX_CHAIN: Final = 16


def read_tense(question: str) -> Tense:
    """Whether ``question`` asks about now, about then, or about a time / a change (any).

    "When is / are / will / does …" asks for the date of a plan as it stands now
    (``planned``). Otherwise a question about a date, a duration or a change
    ("when", "how long", "since", "changed") asks about both values (``any``);
    otherwise a present cue ("now", "currently", "still", "these days", "any
    more") asks about ``now``; a past one ("used to", "did she use to live?",
    "previously", a closing "before") about ``then``; a time named ("in
    March", "last year") is ``dated`` in a question that looks back (a past
    verb, "ago", "last …") and ``planned`` otherwise ("What is she doing in
    September?"); a question in the past simple ("What did she buy?") asks
    about an event (``any``); one with none of these about what holds
    (``present``).
    "before" followed by an event or a date ("before meeting Maria", "the week
    before August 3") locates a time rather than asking for an old value.
    """
    if _WHEN_PLANNED.search(question):
        return "planned"
    if _WHEN.search(question):
        return "any"
    if _NOW.search(question):
        return "now"
    if _THEN.search(question):
        return "then"
    if _DATED.search(question):
        # "What did she do in May?" looks back; "What is she doing in September?" asks
        # for a plan, which a later message may have changed ("I'll do the tour instead").
        return "dated" if _PAST_EVENT.search(question) or _AGO.search(question) else "planned"
    if _PAST_EVENT.search(question):
        return "any"
    return "present"


def without_tense_cues(question: str) -> str:
    """``question`` without the words that ask for the present ("now", "still",
    "these days", "at the moment"); the question itself when nothing is left.

    Those words select *which* value is wanted (`read_tense` reads them), so
    matching them against stored turns only finds turns that happen to say
    "still" or "now" about something else.
    """
    stripped = " ".join(_NOW_WORDS.sub(" ", question).split())
    stripped = re.sub(r"\s+([?.!,])", r"\1", stripped)
    stripped = re.sub(r"[,;]+([?.!])", r"\1", stripped)  # "run, right now?" -> "run?"
    return stripped if re.search(r"\w", stripped) else question


def _known(node: Node, as_of: datetime) -> bool:
    return node.learned_at <= as_of


def _fetch(store: Store, namespace: str, ids: Sequence[str], as_of: datetime) -> list[Node]:
    return [n for n in store.get_nodes(namespace, list(ids)) if _known(n, as_of)]


def _current_ends(store: Store, namespace: str, node: Node, as_of: datetime,
                  cache: dict[str, Node]) -> list[Node]:
    """The nodes that replaced ``node``, followed until one is current as of ``as_of``."""
    frontier, seen = [node], {node.id}
    ends: list[Node] = []
    for _ in range(_MAX_CHAIN):
        ids = [i for n in frontier for i in n.superseded_by if i not in seen]
        if not ids:
            break
        missing = [i for i in ids if i not in cache]
        for n in _fetch(store, namespace, missing, as_of):
            cache[n.id] = n
        frontier = []
        for i in ids:
            seen.add(i)
            nxt = cache.get(i)
            if nxt is None:
                continue
            (ends if nxt.is_current(as_of) else frontier).append(nxt)
        if not frontier:
            break
    return ends


def _about(node: Node, kinds: frozenset[str]) -> bool:
    """Whether ``node`` can be about one of ``kinds``: any node when ``kinds`` is
    empty or it talks about no known kind."""
    if not kinds:
        return True
    talks = statement_topics(node.content or "")
    return not talks or bool(talks & kinds)


def _lift(hits: list[Hit], by_id: dict[str, Hit], node: Node, above: Hit, atom: str) -> None:
    """Put ``node`` just above ``above`` (adding it as a hit when missing)."""
    hit = by_id.get(node.id)
    if hit is None:
        hit = Hit(node=node, score=above.score + _LIFT,
                  via=Reach(atom=atom, stage="filter", path=(above.node.id, node.id)),
                  scores={"validity": 1.0})
        hits.append(hit)
        by_id[node.id] = hit
    elif hit.score <= above.score:
        hit.score = above.score + _LIFT
        hit.scores["validity"] = 1.0


def recency_prior(hits: Sequence[Hit], tense: Tense, weight: float, pool: int,
                  band: float = 1.0) -> None:
    """Lean the ``pool`` best hits towards the latest (``now``, ``present``) or the
    earliest (``then``) statements, in place.

    Each hit gains up to ``weight`` by where its time
    (`labile.plugin.Node.learned_at`) falls between the pool's first and last,
    scaled by how close its score is to the best (linearly, nothing at
    ``band`` or more below it): a late but off-topic turn gains little. Most changes
    are told in passing ("greetings from the new place"), so no rule reads
    them; among statements about the same thing, though, the latest is the
    best guess at what holds now, and the earliest at what held before.
    ``any`` and a pool spanning no time change nothing.
    """
    if tense in ("any", "dated", "planned") or weight <= 0 or not hits:
        return
    top = sorted(hits, key=lambda h: (-h.score, h.node.id))[:pool]
    times = [h.node.learned_at.timestamp() for h in top]
    lo, hi = min(times), max(times)
    s_hi = top[0].score
    if hi <= lo:
        return
    for h, t in zip(top, times, strict=True):
        share = (t - lo) / (hi - lo)
        relevance = max(0.0, 1.0 - (s_hi - h.score) / band)
        lean = weight * relevance * (1.0 - share if tense == "then" else share)
        h.score += lean
        h.scores["recency"] = lean


def states_something(hit: Hit) -> bool:
    """Whether ``hit`` can tell what holds: a turn of a person that does not only ask
    and does not tell a search or an intention (`_TENTATIVE`).

    The lean towards the latest statement (`recency_prior`) is about what people
    said of their lives. A turn that only asks ("and work?", "how's the new
    job?") states nothing; the agent's own turns (`labile_realm.schema.is_agent`:
    advice, a plan it drafted, the user's words said back) are not evidence of what
    holds; nor is an intention or a search ("I'm looking for a flat", "leaning
    toward Lawrenceville"): the value comes later, if at all. All of them stay in
    the list, without the lean. Measured on the change benchmark (`realm`):
    current-value Hit@1 62.2 → 64.6 for the first two, 72.0 → 74.4 for the third;
    LoCoMo dev R@5 70.1 → 70.2.
    """
    node = hit.node
    return node.attrs.get("act") != "question" and not is_agent(node.attrs.get("speaker")) \
        and not _TENTATIVE.search(node.content or "")


def tells_now(hit: Hit) -> bool:
    """Whether ``hit`` can tell what holds *now*: it states something
    (`states_something`) and does not tell how things used to be ("Ten minutes! I used
    to do two miles"), which is evidence for a question about then, not now.
    Measured on the change benchmark (`realm`): current-value Hit@1 79.3 → 80.5.
    """
    return states_something(hit) and not _FORMERLY.search(hit.node.content or "")


def demote_questions(hits: Sequence[Hit], tense: Tense, penalty: float) -> None:
    """Lower, in place, the hits that only ask (``attrs["act"] == "question"``) by
    ``penalty``, for a question about a value (any tense but ``any``).

    "Are you still doing the 3 coffees?" shares every word with "How many
    coffees does she drink now?" and states nothing: the value is in the
    answer. A question about a time or an event (``any``) is left alone.
    """
    if tense == "any" or penalty <= 0:
        return
    for h in hits:
        if h.node.attrs.get("act") == "question":
            h.score -= penalty
            h.scores["asks"] = -penalty


def order_by_validity(store: Store, namespace: str, hits: list[Hit], tense: Tense,
                      as_of: datetime, *, atom: str = "realm.aggregate",
                      fetch_present: bool = False,
                      kinds: frozenset[str] = frozenset()) -> None:
    """Order ``hits`` for a question about ``tense`` (module docstring), in place.

    ``kinds``: the kinds of value the question asks for
    (`labile_realm.retrieve.topic.question_topics`). A turn can tell two things
    ("I'm a pharmacist … and I've been doing keto"); a replacement that talks only
    about other kinds ("I'm done with keto") replaced the one it talks about, so
    for a question about work it is not lifted above the turn.

    Scores are edited and hits may be appended; the caller sorts afterwards.
    Hits are visited best first, so a lift never undoes a better hit's lift.
    """
    if tense == "any" or not hits:
        return
    by_id = {h.node.id: h for h in hits}
    ranked = sorted(hits, key=lambda h: (-h.score, h.node.id))
    cache: dict[str, Node] = {}
    if tense in ("now", "planned", "present"):
        for h in ranked:
            if h.node.is_current(as_of):
                continue
            for end in _current_ends(store, namespace, h.node, as_of, cache):
                if not _about(end, kinds):
                    continue
                # without a cue of the present, only what the search found is reordered
                if tense != "present" or fetch_present or end.id in by_id:
                    _lift(hits, by_id, end, h, atom)
        return
    current = [h for h in ranked if h.node.is_current(as_of)]
    edges = store.edges_of(namespace, [h.node.id for h in current], direction="out",
                           predicates=[SUPERSEDES])
    older: dict[str, list[str]] = {}
    for e in edges:
        if not e.attrs.get("retired"):
            older.setdefault(e.src, []).append(e.dst)
    wanted = [i for ids in older.values() for i in ids if i not in by_id]
    for n in _fetch(store, namespace, wanted, as_of):
        cache[n.id] = n
    for h in current:
        if not _about(h.node, kinds):
            continue
        for old_id in older.get(h.node.id, ()):
            old = by_id[old_id].node if old_id in by_id else cache.get(old_id)
            if old is not None and not old.is_current(as_of):
                _lift(hits, by_id, old, h, atom)
