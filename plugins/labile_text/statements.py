"""What a sentence of conversation does: ask, socialise, or state something.

Memory consolidation needs to tell a sentence that *states* something about
someone's life ("Last Friday I took my kids to a pottery workshop.") from the
social glue around it ("Thanks, Caroline!", "You're so inspiring!", "Any fun
plans for the summer?"). Two sentences that both state something and are on
different topics are independent facts; a compliment next to a fact is not a
second fact.

Everything here is general English word lists and shallow syntax: no model,
nothing tuned to a particular conversation.

* `sentence_role` classifies one sentence as ``"question"``, ``"social"`` or
  ``"statement"``;
* `is_statement` is the shortcut for the last;
* `stance` tells whether a statement looks ahead (a plan, an intention) or
  reports what happened or holds (``"plan"`` / ``"report"``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final, Literal

from labile.text.tokenize import content_words, words
from labile_text.entities import is_filler, named_entities
from labile_text.names import is_vocative
from labile_text.timeparse import resolve_time_expressions

__all__ = [
    "SentenceRole",
    "Stance",
    "is_statement",
    "sentence_role",
    "speaks_of_self",
    "stance",
    "states_fact",
]

SentenceRole = Literal["question", "social", "statement"]
Stance = Literal["plan", "report", "habit", "none"]


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FIRST_PERSON: Final = _wordset(
    "i me my mine myself we us our ours ourselves im ive ill id were weve well wed"
)
_SECOND_PERSON: Final = _wordset("you your yours yourself youre youve youll youd ya yall")
# Words of appraisal and feeling: a sentence built from these around "you" is
# a compliment or sympathy, not a fact about anyone.
_APPRAISAL: Final = _wordset(
    """
    awesome amazing great good nice cool wonderful fantastic inspiring inspired proud happy
    glad sorry stoked thrilled excited lucky blessed kind sweet strong brave beautiful
    gorgeous stunning lovely impressive incredible special rewarding tough hard important
    meaningful powerful touching moving sounds sound looks look seems seem mean means
    appreciate appreciated thankful grateful thanks thank support supportive friendship
    friend words lot much really so such true totally definitely wish best luck hope
    love loved care caring keep going way strength courage passion journey makes make
    feel feels felt bet must congrats congratulations worth exactly agree super pretty
    hey hi hello long time chat chatted talk talked talking catch since missed miss yeah
    fun enjoy enjoyed blast vibes vibe cheers happened happening spoke things thing big
    tell something news going lately busy last lots
    """
)
# Openers of a sentence that is only reacting to the other speaker.
_REACTION_OPENERS: Final = re.compile(
    r"^\s*(?:hey|hi|hello|wow|whoa|aw+|oh|omg|yay|haha|lol|that'?s|that\s+is|what\s+a|how|sounds|"
    r"looks|glad|congrats|congratulations|thanks|thank\s+you|no\s+worries|i'?m\s+(?:so\s+)?"
    r"(?:happy|glad|proud|sorry)\s+(?:for|to\s+hear))\b",
    re.IGNORECASE,
)
_PLAN: Final = re.compile(
    r"\b(?:(?:am|are|is|i'?m|we'?re|'re|'m)\s+(?:going|planning|hoping|thinking\s+(?:of|about)|"
    r"about)\s+to\b|gonna|planning|plans?\s+to|hoping\s+to|thinking\s+(?:about|of)\s+\w+ing|"
    r"next\s+(?:week|month|year|weekend|summer|spring|fall|autumn|winter)|this\s+coming|"
    r"tomorrow|upcoming)\b",
    re.IGNORECASE,
)
_PAST_VERBS = (
    r"\w+ed|went|got|made|took|saw|met|had|did|found|began|held|ran|won|lost|bought|left|"
    r"gave|told|came|became|wrote|read|built|sold|spent|tried|started|finished|joined"
)
_HABIT: Final = re.compile(
    r"\b(?:usually|always|often|every|remains?|whenever)\b", re.IGNORECASE
)
_REPORT: Final = re.compile(
    r"\b(?:ago|yesterday|last\s+(?:week|month|year|night|weekend|\w+day|fri|sat|sun|mon|"
    r"tue|tues|wed|thu|thurs)|recently|already|finally)\b|"
    r"\b(?:i|we|he|she|they|my\s+\w+|our\s+\w+|\w+'s\s+\w+)\s+(?:\w+\s+)?(?:"
    + _PAST_VERBS + r")\b(?!\s+to\b)",
    re.IGNORECASE,
)


_CAPITALISED: Final = re.compile(r"(?<![.!?]\s)\b[A-Z][a-z]+\b")


def _plain_words(text: str) -> list[str]:
    return [w.replace("'", "").replace("’", "") for w in words(text)]


def sentence_role(sentence: str, *, min_content_words: int = 3) -> SentenceRole:
    """Classify one sentence.

    * ``"question"``: it ends with a question mark;
    * ``"social"``: small talk (`labile_text.entities.is_filler`), too few
      content words (fewer than ``min_content_words``), or a reaction to the
      listener: it speaks to "you" and not about the speaker ("You're so
      inspiring!"), or it opens like a reaction ("Wow, …", "That's …",
      "Thanks …", "I'm so happy for …") and every content word is appraisal;
    * ``"statement"``: anything else, i.e. it says something about the speaker,
      someone else or the world.

    Args:
        sentence: One sentence (see `labile_text.sentences.split_sentences`).
        min_content_words: Content words a statement needs.

    Returns:
        The role.
    """
    text = sentence.strip()
    if text.endswith("?"):
        return "question"
    if not text or is_filler(text):
        return "social"
    content = content_words(text)
    if len(content) < min_content_words:
        return "social"
    plain = set(_plain_words(text))
    names = {w.lower() for w in _CAPITALISED.findall(text[1:])}
    informative = [w for w in content if w not in _APPRAISAL and w not in names]
    if not informative:
        return "social"  # only appraisal, feelings and talk about talking
    # Speaking to the listener about the listener is a reaction unless it
    # carries several words of its own ("your painting of the lake at dawn").
    if plain & _SECOND_PERSON and not plain & _FIRST_PERSON and len(informative) < 4:
        return "social"
    if _REACTION_OPENERS.search(text) and len(informative) < 3:
        return "social"
    return "statement"


def is_statement(sentence: str, *, min_content_words: int = 3) -> bool:
    """Whether `sentence_role` calls the sentence a statement."""
    return sentence_role(sentence, min_content_words=min_content_words) == "statement"


def stance(sentence: str) -> Stance:
    """Whether a statement looks ahead or back.

    ``"plan"`` when it states an intention or a future event ("I'm going to a
    conference this month", "We're thinking about camping next month");
    ``"habit"`` when it states what usually holds ("I usually …", "We always
    …"); ``"report"`` when it reports something done ("I went …",
    "I started …", "… two days ago"); ``"none"`` for a question, small talk
    or a statement with none of these markers. A sentence
    with both markers is a plan when the plan marker comes first ("I'm going
    to start …"), else a report.

    Args:
        sentence: One sentence.

    Returns:
        The stance.
    """
    if sentence_role(sentence) != "statement":
        return "none"
    plan, report = _PLAN.search(sentence), _REPORT.search(sentence)
    if plan and (not report or plan.start() <= report.start()):
        return "plan"
    if _HABIT.search(sentence):
        return "habit"
    if report:
        return "report"
    return "none"


_ANCHOR_EPOCH: Final = datetime(2000, 1, 1, tzinfo=UTC)


def states_fact(sentence: str) -> bool:
    """Whether a sentence states a fact about someone's life or the world.

    A statement (`sentence_role`) that either has a stance (a plan or a
    report, `stance`) or is anchored in something concrete: a number, a time
    expression or a named entity other than the person addressed. Opinions
    and feelings without such an anchor ("Art is so freeing.") are not facts.

    Args:
        sentence: One sentence.

    Returns:
        Whether it states a fact.
    """
    if sentence_role(sentence) != "statement":
        return False
    if stance(sentence) != "none" or any(ch.isdigit() for ch in sentence):
        return True
    if resolve_time_expressions(sentence, _ANCHOR_EPOCH, tense="past"):  # any time phrase
        return True
    return any(not is_vocative(sentence, *e.span) for e in named_entities(sentence))


def speaks_of_self(sentence: str) -> bool:
    """Whether the sentence has a first-person word ("I", "my", "we", "our" …)."""
    return bool(set(_plain_words(sentence)) & _FIRST_PERSON)
