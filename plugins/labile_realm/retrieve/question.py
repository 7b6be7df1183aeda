"""Offline question analysis: what a question says about how to search for its answer.

`read_question` turns the wording of a question into a `QuestionReading`:

* **time**: a time word ("when", "how long", "before", "last year", a month…)
  asks for the temporal order of events, so expansion prefers the layer that
  holds ``precedes`` and the time range (resolved by the planner) applies;
* **cause**: "why", "because", "reason", "lead to", "so that"… ask for the
  causal layer (and the logical one, where ``implies`` / ``verifies`` live);
  chains of causes are followed with ``path_search`` rather than a beam;
* **current state**: "now", "currently", "still"… ask for what holds now
  (`labile_realm.retrieve.validity.read_tense`, which aggregation reads to
  order hits by validity);
* **people**: the persons the question names anchor the seeds (their turns,
  their entity nodes);
* **many**: a question that asks for several things ("What books has she
  read?", "Where has he camped?", "How many times…?") is answered by turns
  spread over the conversation, so aggregation spreads its top hits over
  sessions;
* **parts**: a question with several parts ("When did X go to Paris and what
  did she buy there?", "What do A and B both like?") becomes one sub-question
  per part, each a seed plan of its own, so one part's strong matches do not
  crowd out the other's.

Everything here reads the question text only: no store, no answers.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from labile_realm.retrieve.validity import read_tense
from labile_realm.schema import PREDICATES_BY_LAYER
from labile_text.entities import named_entities

__all__ = ["QuestionReading", "asks_for_many", "question_parts", "read_question"]

_TIME_CUES: Final = re.compile(
    r"\b(?:when|how\s+long|how\s+often|what\s+(?:year|month|day|date|time)|which\s+"
    r"(?:year|month|day|date)|before|after|since|until|during|first|last|recently|ago|"
    r"yesterday|today|tomorrow|week|weekend|month|year|january|february|march|april|may|"
    r"june|july|august|september|october|november|december|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|summer|winter|spring|autumn|fall)\b",
    re.IGNORECASE,
)
_CAUSE_CUES: Final = re.compile(
    r"\b(?:why|because|reason|reasons|cause|caused|causes|lead\s+to|led\s+to|leads\s+to|"
    r"result(?:ed)?\s+in|so\s+that|motivat\w*|inspir\w*|made\s+\w+\s+(?:decide|want|feel)|"
    r"what\s+made|how\s+come|due\s+to|prompted)\b",
    re.IGNORECASE,
)
#: A clause after "and" / "but" that starts with one of these is a second question.
_PART_START: Final = re.compile(
    r"\s*(?:,\s*)?\b(?:and|but)\s+(?=(?:what|when|where|who|whom|whose|which|why|how|did|does|"
    r"do|is|are|was|were|has|have|had|can|could|would|will)\b)",
    re.IGNORECASE,
)
#: Wording that makes a question about several named people a comparison of them.
_SHARED_CUES: Final = re.compile(
    r"\b(?:both|common|each|together|share|shared|similar|same|differ\w*|compare\w*)\b",
    re.IGNORECASE,
)

#: Words after what / which that end in -s without being a plural object.
_NOT_PLURAL: Final = frozenset((
    "does", "is", "was", "has", "this", "its", "his", "hers", "yours", "ours", "theirs",
    "us", "always", "sometimes", "perhaps", "news", "kinds", "types", "sorts", "plus",
))
#: Auxiliaries right after what / which: the question's object comes later, if at all.
_AUXILIARIES: Final = frozenset((
    "does", "do", "did", "is", "are", "was", "were", "has", "have", "had", "can", "could",
    "would", "will", "should", "might",
))
#: Wording that asks for a count or a collection, or for what someone has done so far
#: (the present perfect: "has she visited", "have they tried").
_MANY_CUES: Final = re.compile(
    r"\bhow\s+many\b|\bin\s+what\s+ways\b|\bwhat\s+are\b|"
    r"\b(?:has|have)\s+(?:\w+\s+){1,2}?(?:\w+ed|been|done|made|read|seen|taken|gone|had|"
    r"bought|won|given|taught|written|met)\b",
    re.IGNORECASE,
)

#: Layers preferred for questions with a time cue, a cause cue, and both.
TIME_LAYERS: Final = ("causal",)
CAUSE_LAYERS: Final = ("causal", "logical")


@attrs.frozen(kw_only=True)
class QuestionReading:
    """What the planner takes from a question.

    Attributes:
        text: The question.
        asks_time: It has a time cue.
        asks_cause: It has a cause cue.
        asks_current: It asks for the present state ("now", "currently",
            "still"…): of two statements where one supersedes the other, the
            later answers it.
        asks_many: It asks for several things, a count, or what someone has
            done so far: evidence spread over the conversation.
        people: Names of the persons it mentions, in order.
        names: Every name it mentions (persons, places, titles…), in order.
        parts: Sub-questions, one per part (just ``(text,)`` for a simple question).
    """

    text: str
    asks_time: bool = False
    asks_cause: bool = False
    asks_current: bool = False
    asks_many: bool = False
    people: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()

    @property
    def layers(self) -> tuple[str, ...]:
        """The layers expansion should follow, in the schema's names; empty: all.

        A cause cue asks for causal and logical edges; a time cue alone for the
        causal layer, where the temporal order (``precedes``) lives. Layers the
        schema does not know are never returned.
        """
        wanted: tuple[str, ...] = ()
        if self.asks_cause:
            wanted = CAUSE_LAYERS
        elif self.asks_time:
            wanted = TIME_LAYERS
        return tuple(layer for layer in wanted if layer in PREDICATES_BY_LAYER)

    @property
    def follows_chains(self) -> bool:
        """Whether evidence is a chain (a cause and its effects): path search, not a beam."""
        return self.asks_cause


def question_parts(text: str, people: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Split a question into its parts (never more than three).

    Parts are: sentences ending in ``?``; clauses joined by "and" / "but" when
    the second starts like a question ("…, and what did she buy?"); and, for a
    question that compares named people ("What do A and B both like?"), one
    copy per person with the other names removed. A simple question is its own
    single part. Pieces of fewer than three words are not parts.
    """
    pieces = [p.strip() for p in re.split(r"(?<=\?)\s+", text.strip()) if p.strip()]
    clauses: list[str] = []
    for piece in pieces:
        clauses.extend(c.strip(" ,") for c in _PART_START.split(piece) if c.strip(" ,"))
    clauses = [c for c in clauses if len(c.split()) >= 3]
    if len(clauses) <= 1 and len(people) >= 2 and _SHARED_CUES.search(text):
        clauses = [_without_names(text, [p for p in people if p != person])
                   for person in people]
    if len(clauses) <= 1:
        return (text,)
    return tuple(dict.fromkeys(clauses))[:3]


def asks_for_many(text: str) -> bool:
    """Whether a question asks for several things (see the module docstring)."""
    tokens = re.findall(r"[a-z']+", text.casefold())
    for i, tok in enumerate(tokens):
        if tok not in ("what", "which"):
            continue
        rest = tokens[i + 1:]
        if len(rest) >= 2 and rest[0] in ("kind", "kinds", "type", "types", "sort", "sorts") \
                and rest[1] == "of":
            rest = rest[2:]
        # the object is the next word or the one after (an adjective first: "what new books")
        for word in rest[:2]:
            if word in _AUXILIARIES:
                break
            if len(word) > 3 and word.endswith("s") and not word.endswith("ss") \
                    and word not in _NOT_PLURAL:
                return True
    return bool(_MANY_CUES.search(text))


def _without_names(text: str, names: list[str]) -> str:
    out = text
    for name in names:
        out = re.sub(rf"\s*(?:\band\s+)?\b{re.escape(name)}\b(?:\s+and\b)?", "", out)
    return re.sub(r"\s{2,}", " ", out).strip()


def read_question(text: str) -> QuestionReading:
    """Read a question's cues, named people and parts (see the module docstring)."""
    entities = named_entities(text)
    people = tuple(dict.fromkeys(e.name for e in entities if e.category == "person"))
    names = tuple(dict.fromkeys(e.name for e in entities))
    return QuestionReading(
        text=text,
        asks_time=bool(_TIME_CUES.search(text)),
        asks_cause=bool(_CAUSE_CUES.search(text)),
        asks_current=read_tense(text) == "now",
        asks_many=asks_for_many(text),
        people=people,
        names=names,
        parts=question_parts(text, people),
    )
