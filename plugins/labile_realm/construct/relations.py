"""Offline relations between a new node and the nodes around it (beyond ``correlates``).

Each rule reads the text of two nodes that the neighbourhood search already
put side by side (similar or recent), and writes an edge only when the text
states the relation, because a wrong logical or causal edge misleads
retrieval more than a missing one:

* ``supersedes`` — a later turn reports as done what the same speaker
  announced as a plan in an earlier session ("I'm going to sign up for a
  pottery class" … "I finally took the pottery class"): the report replaces
  the plan as what is true now;
* ``instantiates`` — a stable preference or habit (a fact: "Ann loves
  hiking") and a turn of the same person telling a concrete, dated case of it
  ("I went hiking last weekend");
* ``implies`` — of two facts about the same subject and kind of attribute,
  the more specific one implies the more general ("loves painting landscapes"
  → "loves painting");
* ``contradicts`` — the same subject both likes and dislikes the same thing;
* ``summarizes`` — a session's episode, whose description keeps the most
  informative sentence of the session's three weightiest turns, to those turns;
* ``analogous_to`` — a speaker answers the other's story with a parallel one
  of their own ("just like you", "me too", "that reminds me of when I …").

Weights are the rule's confidence; descriptions say what the edge means,
because expansion scores an edge by how well its description matches the
question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from labile.plugin import Node
from labile.text.tokenize import content_words, stem
from labile_realm.construct.neighbourhood import Candidate
from labile_realm.construct.ops import EdgeOp
from labile_realm.schema import (
    ANALOGOUS_TO,
    CONTRADICTS,
    EVENT,
    FACT,
    IMPLIES,
    INSTANTIATES,
    SUMMARIZES,
    SUPERSEDES,
)
from labile_text.keywords import informativeness
from labile_text.sentences import split_sentences

_PLAN: Final = re.compile(
    r"\b(?:I|we)(?:['’]m| am| are|['’]re) (?:going to|gonna|planning (?:to|on)|about to)\s+"
    r"((?:\S+\s+){0,6}\S+)",
    re.IGNORECASE,
)
_DONE: Final = re.compile(
    r"\b(?:finally|(?:last|this past) (?:week|weekend|month|year|night|friday|saturday|sunday|"
    r"monday|tuesday|wednesday|thursday)|yesterday|the other day|(?:a few|two|three) "
    r"(?:days|weeks) ago|I (?:just )?(?:went|did|took|made|got|had|tried|started|joined|"
    r"signed up|attended|finished|visited|bought|adopted))\b",
    re.IGNORECASE,
)
#: A parallel drawn explicitly. Plain agreement ("same here", "me too") is left
#: out: it shares a feeling about one thing rather than likening two.
_ANALOGY: Final = re.compile(
    r"\b(?:just like (?:you|yours)|same thing happened to me|I (?:also|too) (?:had|did|went)|"
    r"that reminds me of (?:when|my)|"
    r"similar (?:thing|experience) (?:happened )?(?:to me|with me))\b",
    re.IGNORECASE,
)
_CAPTION: Final = re.compile(r"\[photo:[^\]]*\]")
_GENERAL_ATTRIBUTES: Final = frozenset({"likes", "habit", "activity"})
#: Attributes a dated turn can be a case of: an ongoing activity ("has been
#: looking into …") is itself already an episode, so it is left out.
_INSTANCE_ATTRIBUTES: Final = frozenset({"likes", "habit"})
_WEAK_STEMS: Final = frozenset(stem(w) for w in (
    "time", "thing", "things", "really", "lot", "way", "good", "great", "fun", "love", "like",
    "day", "week", "people", "stuff", "much", "always", "every", "new", "one", "kid", "kids",
    "family", "feel", "make", "made", "get", "got", "go", "went", "want", "know",
    "awesome", "amazing", "wow", "glad", "thanks", "thank", "pic", "photo", "picture", "cool",
    "sound", "sounds", "nice", "happy", "excited", "super", "totally", "definitely", "hey",
    "today", "tonight", "tomorrow", "month", "year", "weekend", "summer", "soon", "last",
    "next", "ago", "lately", "recently", "finally", "yesterday", "awesome", "inspiring",
    "support", "best", "special", "agree", "experience", "moment", "moments", "life", "help",
    "together", "journey", "share", "hear", "chat", "keep", "care", "proud", "mean", "feel",
    "felt", "enjoy", "beautiful", "gorgeous", "wish", "hope", "heart", "world", "talk", "tell",
    "thought", "think", "see", "look", "looks", "lucky", "important", "wonderful", "friend",
    "friends", "part", "big", "little", "true", "real", "place", "show", "check", "wait",
    "kind", "word", "words",
))
#: Turns shorter than this (content stems) are small talk to ``correlates``.
_MIN_TOPIC_STEMS: Final = 4


def _stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)} - _WEAK_STEMS


def _edge(src: str, dst: str, predicate: str, weight: float, description: str) -> EdgeOp:
    return EdgeOp(action="add", src=src, dst=dst, predicate=predicate, description=description,
                  weight=weight)


def split_text(text: str) -> list[str]:
    """The sentences of ``text``."""
    return [text[a:b] for a, b in split_sentences(text)]


def shared_topic(a: Node, b: Node) -> set[str]:
    """The content stems two nodes' own words share.

    Small talk, time words and the names of the people who speak or are
    addressed are left out (every turn names them); a node with fewer than
    four such stems shares nothing.
    """
    names = {stem(w) for n in (a, b) for key in ("speaker", "listener", "subject")
             for w in content_words(str(n.attrs.get(key) or ""))}
    names |= {stem(w) for n in (a, b) for p in n.attrs.get("participants") or ()
              for w in content_words(str(p))}
    sa, sb = _stems(_CAPTION.sub("", a.content or "")) - names, \
        _stems(_CAPTION.sub("", b.content or "")) - names
    if len(sa) < _MIN_TOPIC_STEMS or len(sb) < _MIN_TOPIC_STEMS:
        return set()
    # "Mel" for Melanie: a short form of a name is a name too.
    return {s for s in sa & sb if not any(n.startswith(s) for n in names if len(s) >= 3)}


def _said_at(node: Node) -> datetime | None:
    raw = node.attrs.get("said_at") or node.attrs.get("stated_at")
    return datetime.fromisoformat(str(raw)) if raw else None


def _turn_event(node: Node) -> bool:
    return node.kind == EVENT and not node.attrs.get("clause_of")


def _label(node: Node, words: int = 14) -> str:
    text = str(node.attrs.get("statement") or node.content or node.description)
    return " ".join(text.split()[:words])


def plan_supersessions(node: Node, candidates: Sequence[Candidate]) -> list[EdgeOp]:
    """``supersedes`` from a turn reporting a done thing to the same speaker's earlier plan.

    Contract: both are turn events of the same speaker in different sessions,
    the older states a plan (first person + going to / planning / will …),
    the newer reports a past occurrence, and the newer shares at least two
    content stems with the planned phrase. At most one edge per node (the
    most similar plan).
    """
    if not _turn_event(node) or node.attrs.get("act") == "question":
        return []
    reports = [s for s in split_text(node.content or "") if _DONE.search(s)]
    if not reports:
        return []
    now, speaker = _said_at(node), node.attrs.get("speaker")
    done = _stems(" ".join(reports))
    best: tuple[float, Node] | None = None
    for c in candidates:
        old = c.node
        if not _turn_event(old) or old.attrs.get("speaker") != speaker or not speaker:
            continue
        if old.attrs.get("session") == node.attrs.get("session"):
            continue
        then = _said_at(old)
        if now is None or then is None or then >= now:
            continue
        m = _PLAN.search(old.content or "")
        if m is None:
            continue
        planned = _stems(m.group(1))
        if not any(len(s) >= 5 for s in planned & done):
            continue  # the report must name what was planned (a specific word)
        if best is None or c.similarity > best[0]:
            best = (c.similarity, old)
    if best is None:
        return []
    old = best[1]
    return [_edge(
        node.id, old.id, SUPERSEDES, 0.6,
        f"{speaker}'s plan, later reported as done: {_label(old)} → {_label(node)}",
    )]


def fact_relations(node: Node, candidates: Sequence[Candidate]) -> list[EdgeOp]:
    """``instantiates`` / ``implies`` / ``contradicts`` between ``node`` and its neighbours.

    Contract: only facts and turn events of the same person take part; every
    edge names the fact it starts from (see the module docstring for each
    rule). A node gets at most one edge per rule and neighbour.
    """
    ops: list[EdgeOp] = []
    for c in candidates:
        other = c.node
        if other.id == node.id or set(other.sources) == set(node.sources):
            continue
        if node.kind == FACT and other.kind == FACT:
            ops += _fact_pair(node, other)
        elif node.kind == FACT and _turn_event(other):
            ops += _instance(node, other)
        elif _turn_event(node) and other.kind == FACT:
            ops += _instance(other, node)
    return ops


def _value_stems(fact: Node) -> set[str]:
    return _stems(str(fact.attrs.get("value", "")))


def _fact_pair(a: Node, b: Node) -> list[EdgeOp]:
    if a.attrs.get("subject") != b.attrs.get("subject") or not a.attrs.get("subject"):
        return []
    attr_a, attr_b = str(a.attrs.get("attribute", "")), str(b.attrs.get("attribute", ""))
    va, vb = _value_stems(a), _value_stems(b)
    if not va or not vb:
        return []
    subject = a.attrs["subject"]
    if {attr_a, attr_b} == {"likes", "dislikes"} and va == vb:
        return [_edge(
            a.id, b.id, CONTRADICTS, 0.7,
            f"{subject} both likes and dislikes this: {_label(a)} / {_label(b)}",
        )]
    if attr_a != attr_b or attr_a not in _GENERAL_ATTRIBUTES:
        return []
    if vb < va:
        src, dst = a, b
    elif va < vb:
        src, dst = b, a
    else:
        return []
    return [_edge(
        src.id, dst.id, IMPLIES, 0.65,
        f"the specific implies the general about {subject}: "
        f"{_label(src)} ⇒ {_label(dst)}",
    )]


def _instance(fact: Node, event: Node) -> list[EdgeOp]:
    subject = fact.attrs.get("subject")
    if str(fact.attrs.get("attribute", "")) not in _INSTANCE_ATTRIBUTES:
        return []
    if not subject or event.attrs.get("speaker") != subject or event.attrs.get("act") == "question":
        return []
    value = _value_stems(fact)
    if not value or len(value) > 3:
        return []
    content = event.content or ""
    if not (value <= _stems(content) and _DONE.search(content)):
        return []
    return [_edge(
        fact.id, event.id, INSTANTIATES, 0.6,
        f"a concrete case of {subject}'s {fact.attrs.get('attribute')}: "
        f"{_label(fact)} — {_label(event)}",
    )]


def analogies(node: Node, candidates: Sequence[Candidate]) -> list[EdgeOp]:
    """``analogous_to`` between a turn that answers with a parallel story and the turn it answers.

    Contract: ``node`` is a turn event whose text says "just like you", "me
    too", "that reminds me of when I …" and the like; the other end is the
    candidate flagged as the turn just before (``previous_turn``), when
    another speaker said it.
    """
    if not _turn_event(node) or not _ANALOGY.search(node.content or ""):
        return []
    speaker = node.attrs.get("speaker")
    previous = next((c.node for c in candidates if c.previous_turn), None)
    if previous is None or not _turn_event(previous) or previous.attrs.get("speaker") == speaker:
        return []
    return [_edge(
        node.id, previous.id, ANALOGOUS_TO, 0.5,
        f"parallel experiences of {speaker} and {previous.attrs.get('speaker')}: "
        f"{_label(node)} / {_label(previous)}",
    )]


#: One highlight of a session: the turn's event, its speaker, and its most informative sentence.
Highlight = tuple[Node, str, str]


def session_highlights(events: Sequence[Node], k: int = 3, max_words: int = 25) -> list[Highlight]:
    """The ``k`` turns of a session that say the most, each by its most informative sentence.

    Contract: only turn events that are not pure questions are candidates;
    the result keeps conversation order; each sentence is verbatim from the
    turn (cut at ``max_words`` words); turns with no informative sentence are
    never picked.
    """
    scored: list[tuple[float, str, Node]] = []
    for ev in events:
        if not _turn_event(ev) or ev.attrs.get("act") == "question":
            continue
        said = _CAPTION.sub("", ev.content or "")
        sentences = [s for s in split_text(said) if not s.rstrip().endswith("?")]
        if not sentences:
            continue
        best = max(sentences, key=informativeness)
        score = informativeness(best)
        if score > 0:
            scored.append((score, best, ev))
    top = sorted(scored, key=lambda t: -t[0])[:k]
    top.sort(key=lambda t: str(t[2].attrs.get("said_at", "")))
    return [(ev, str(ev.attrs.get("speaker") or ""), _words(best, max_words))
            for _, best, ev in top]


def highlight_text(highlights: Sequence[Highlight]) -> str:
    """The highlights as the tail of an episode description (empty when there are none)."""
    if not highlights:
        return ""
    # A turn without a speaker is a note: "a note: …", never "someone said: …".
    return "; highlights: " + " ".join(f"{who} said: {text}" if who else f"a note: {text}"
                                       for _, who, text in highlights)


def _words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit]) + ("…" if len(words) > limit else "")


def summary_links(episode: Node, highlights: Sequence[Highlight]) -> list[EdgeOp]:
    """``summarizes`` from a session's episode to the turns its description condenses.

    Contract: one edge per highlight (see `session_highlights`), described by
    the sentence the episode keeps from that turn.
    """
    return [_edge(
        episode.id, ev.id, SUMMARIZES, 0.6,
        f"{episode.attrs.get('name', 'the session')} in brief — {who or 'a note'}: {text}",
    ) for ev, who, text in highlights]
