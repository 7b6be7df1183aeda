"""Discourse relations a speaker states explicitly: cause and effect inside one turn.

People mark why things happen with a small set of words: *because*, *so*,
*that's why*, *it made me …*, *X helped me …*, *thanks to …*. This module
finds those markers in the sentences of one turn and returns the two sides
as text, with the kind of link the marker states:

* ``triggers``: the cause led to an action (``… so I started running``,
  ``it inspired me to paint``, ``I painted it because it was calming``);
* ``results_in``: the cause produced a state or a realisation
  (``it made me feel accepted``, ``it showed me how far I've come``);
* ``enables``: the cause made the effect possible
  (``art has allowed me to explore …``, ``their support helped me grow``);
* ``constrains``: the cause limits what the speaker can do
  (``I can't run because of my knee``, ``I got hurt and had to take a break``).

Precision comes first: a relation is only returned when both sides carry
content (two content words at least, neither a question nor small talk),
and an anaphoric cause (*it*, *that*) is resolved only to the sentence just
before it in the same turn. The rules are general English patterns; they know
nothing about particular conversations.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal

import attrs

from labile.text.tokenize import content_words
from labile_text.entities import is_filler

Relation = Literal["triggers", "results_in", "enables", "constrains"]

_ADVERBS = r"(?:(?:has|have|had|'s|really|just|totally|definitely|also|even|sure|truly|" \
    r"honestly|always|kinda|so|actually)\s+)*"
_AGENT_VERBS = (
    r"made me|makes me|inspired me|inspires me|motivated me|motivates me|helped me|helps me|"
    r"encouraged me|pushed me|reminded me|reminds me|showed me|shows me|taught me|teaches me|"
    r"allowed me|allows me|let me|lets me|gave me|gives me|got me|gets me|led me|drove me|"
    r"enabled me|enables me"
)
#: ``It / That / This … made me …`` opening a sentence: the cause is the sentence before.
_ANAPHORIC: Final = re.compile(
    rf"^(?:and\s+|but\s+|plus\s+|so\s+)?(?:it|that|this|all of (?:that|this)|"
    rf"(?:that|this|the) experience)\s+{_ADVERBS}({_AGENT_VERBS})\b(.*)$",
    re.IGNORECASE,
)
#: ``X - it made me …`` / ``X, and it made me …`` inside one sentence.
_INLINE_ANAPHORIC: Final = re.compile(
    rf"^(.{{12,}}?)(?:\s*[-–—,;:]\s*|\s+and\s+)(?:and\s+)?(?:it|that|this)\s+{_ADVERBS}"
    rf"({_AGENT_VERBS})\b(.*)$",
    re.IGNORECASE,
)
#: ``<noun phrase> made me …``: an explicit cause as the sentence's subject.
_AGENT: Final = re.compile(
    rf"^(?!(?:I|you|we|he|she|they|it|that|this|there|what|which|who)\b)"
    rf"((?:[\w'’-]+\s+){{0,7}}?[\w'’-]+)\s+{_ADVERBS}({_AGENT_VERBS})\b(.*)$",
    re.IGNORECASE,
)
#: ``X, so I …`` / ``X so I …``: the effect follows.
_SO: Final = re.compile(
    r"^(.{12,}?)(?:,\s*|\s+-\s+|\s+)(?:and\s+)?so\s+(I|we)\b(.*)$", re.IGNORECASE
)
#: ``So I …`` / ``That's why I …`` opening a sentence: the cause is the sentence before.
_SO_OPENING: Final = re.compile(
    r"^(?:so|that'?s why|that is why|this is why|because of (?:that|this)|"
    r"as a result|which is why)\s*,?\s+(I|we)\b(.*)$",
    re.IGNORECASE,
)
#: ``X because Y`` / ``X thanks to Y`` / ``X because of Y``: the cause follows.
_BECAUSE: Final = re.compile(
    r"^(.{8,}?)\s*,?\s+(because(?: of)?|'cause|cause|thanks to)\s+(.{6,})$", re.IGNORECASE
)

_STATE_WORDS: Final = frozenset((
    "feel", "feels", "felt", "feeling", "be", "am", "is", "was", "realize", "realise",
    "realized", "realised", "appreciate", "reflect", "think", "thought", "proud", "happy",
    "so", "want", "wanna", "determined", "more", "even", "love", "understand", "see",
    "remember", "hopeful", "hope", "grateful", "thankful", "excited", "calm", "sad",
    "like", "believe", "know", "wonder", "smile", "cry", "laugh",
))
_BE: Final = frozenset(("is", "was", "'s", "has", "feels", "felt", "seems", "became"))
_ENABLING: Final = re.compile(
    r"^(?:helped|helps|allowed|allows|let|lets|enabled|enables)\s+me\b|"
    r"^(?:gave|gives)\s+me\s+(?:the\s+)?(?:chance|courage|strength|opportunity|confidence|"
    r"space|freedom|tools?)\b",
    re.IGNORECASE,
)
_STATE_VERBS: Final = re.compile(
    r"^(?:reminded|reminds|showed|shows|taught|teaches)\s+me\b", re.IGNORECASE
)
_LIMITS: Final = re.compile(
    r"\b(?:can['’]?t|cannot|couldn['’]?t|unable to|not able to|wasn['’]?t able to|"
    r"had to (?:stop|quit|cancel|skip|give up|take a break|postpone|miss|leave|rest|"
    r"stay)|have to (?:stop|quit|cancel|skip|give up|take a break|postpone|miss|rest|stay))\b",
    re.IGNORECASE,
)
_LIMIT_AND: Final = re.compile(
    r"^(.{8,}?)\s*,?\s+and\s+((?:I |we )?had to (?:stop|quit|cancel|skip|give up|take a break|"
    r"postpone|miss|leave|rest|stay)\b.*)$",
    re.IGNORECASE,
)
_LEADING: Final = re.compile(r"^(?:and|but|plus|also|then|so|well|oh|yeah|yes)\s*,?\s+",
                             re.IGNORECASE)


@attrs.frozen
class CausalLink:
    """One cause–effect pair stated in a turn.

    Attributes:
        cause: The cause as written (a clause, a noun phrase or a sentence).
        effect: The effect as written, marker included (``made me feel …``).
        relation: ``triggers``, ``results_in``, ``enables`` or ``constrains``.
        marker: The words that state the link (``because``, ``made me`` …).
    """

    cause: str
    effect: str
    relation: Relation
    marker: str


def _clean(text: str) -> str:
    text = " ".join(text.split()).strip(" ,;:-–—\"'")
    while True:
        stripped = _LEADING.sub("", text)
        if stripped == text:
            return text
        text = stripped


def _substantive(text: str) -> bool:
    return (
        len(content_words(text)) >= 2
        and not text.rstrip().endswith("?")
        and not is_filler(text)
    )


def _agent_relation(verb: str, rest: str) -> Relation:
    """The relation an ``X <verb> me <rest>`` sentence states."""
    phrase = f"{verb} {rest}".strip()
    if _LIMITS.search(rest):
        return "constrains"
    if _ENABLING.search(phrase):
        return "enables"
    if _STATE_VERBS.search(phrase):
        return "results_in"
    return _effect_relation(rest)


def _effect_relation(effect: str) -> Relation:
    """``results_in`` for a state or realisation, ``constrains`` for a limit, else ``triggers``."""
    if _LIMITS.search(effect):
        return "constrains"
    words = [w.casefold().strip(".,!") for w in effect.split()]
    words = [w for w in words if w not in {"i", "we", "to", "really", "just", "me", "'m", "am"}]
    if len(words) > 1 and words[0] in {"it", "that", "this"} and words[1] in _BE:
        return "results_in"  # "it was extra special": a state
    if not words or words[0] in _STATE_WORDS or (words[0].endswith("ed") and len(words) == 1):
        return "results_in"
    return "triggers"


def _link(cause: str, effect: str, relation: Relation, marker: str) -> CausalLink | None:
    cause, effect = _clean(cause), _clean(effect)
    if not (_substantive(cause) and _substantive(effect)):
        return None
    return CausalLink(cause=cause, effect=effect, relation=relation, marker=marker.casefold())


def causal_links(sentences: Sequence[str]) -> list[CausalLink]:
    """The cause–effect pairs the sentences of one turn state explicitly.

    Contract: every returned link has a cause and an effect with at least two
    content words each, neither a question nor small talk; an anaphoric cause
    (``It made me …``, ``So I …``) is the previous sentence of the same turn,
    never a sentence of another turn; at most one link per sentence (the
    first pattern that matches, most explicit first).

    Args:
        sentences: The turn's sentences, in order.

    Returns:
        The links, in sentence order.
    """
    out: list[CausalLink] = []
    previous: str | None = None
    for raw in sentences:
        sentence = " ".join(raw.split())
        link = _sentence_link(sentence, previous)
        if link is not None:
            out.append(link)
        if _substantive(sentence):
            previous = sentence
        elif not is_filler(sentence):
            previous = None
    return out


def _refers_back(sentence: str) -> bool:
    """Whether ``sentence`` already says what an earlier "it"/"that" did to the speaker."""
    return bool(_ANAPHORIC.match(_LEADING.sub("", sentence))
                or _INLINE_ANAPHORIC.match(sentence.rstrip(".!… ")))


def _sentence_link(sentence: str, previous: str | None) -> CausalLink | None:  # noqa: PLR0911
    text = sentence.rstrip(".!… ")
    if not text or sentence.rstrip().endswith("?"):
        return None
    m = _INLINE_ANAPHORIC.match(text)
    if m is not None:
        return _link(m.group(1), f"{m.group(2)} {m.group(3)}",
                     _agent_relation(m.group(2), m.group(3)), m.group(2))
    m = _ANAPHORIC.match(_LEADING.sub("", text))
    if m is not None:
        if previous is None or _refers_back(previous):
            # "It taught me X. It showed me Y.": both point at something said
            # before; the previous sentence is a sibling effect, not the cause.
            return None
        return _link(previous, f"{m.group(1)} {m.group(2)}",
                     _agent_relation(m.group(1), m.group(2)), m.group(1))
    m = _SO_OPENING.match(_LEADING.sub("", text) if not text.lower().startswith("so") else text)
    if m is not None:
        if previous is None:
            return None
        effect = f"{m.group(1)} {m.group(2)}"
        return _link(previous, effect, _effect_relation(m.group(2)), text.split()[0])
    m = _LIMIT_AND.match(text)
    if m is not None:
        return _link(m.group(1), m.group(2), "constrains", "and had to")
    m = _BECAUSE.match(text)
    if m is not None:
        effect, marker, cause = m.group(1), m.group(2), m.group(3)
        relation: Relation = "enables" if marker.lower() == "thanks to" else \
            _effect_relation(effect)
        return _link(cause, effect, relation, marker)
    m = _SO.match(text)
    if m is not None:
        return _link(m.group(1), f"{m.group(2)} {m.group(3)}", _effect_relation(m.group(3)),
                     "so")
    m = _AGENT.match(_LEADING.sub("", text))
    if m is not None:
        return _link(m.group(1), f"{m.group(2)} {m.group(3)}",
                     _agent_relation(m.group(2), m.group(3)), m.group(2))
    return None
