"""Offline fact spotting: stable first-person statements rewritten in the third person.

A speaker who says "I love painting" or "my dog is called Max" states
something that stays true beyond the moment; such sentences become fact units
(the paper's §3.2.1) about the speaker. Each rule names an *attribute* so that a newer
fact about the same subject and attribute can supersede an older one ("I work
at X" then "I work at Y"). The rules are general English patterns; they know
nothing about particular conversations.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

#: Attributes that hold one value at a time: a newer value supersedes the old one.
SINGLE_VALUED: Final = frozenset({"work", "home", "favorite"})

_ADVERB = r"(?:\s+(?:really|also|just|still|totally|absolutely|truly|genuinely|kinda|so|now))?"
_NOT_OBJECT = r"(?!(?:it|that|this|those|these|you|him|her|them|the idea|how|what)\b)"


@attrs.frozen
class FactMatch:
    """One spotted fact.

    Attributes:
        attribute: What the fact is about (``likes``, ``work``, ``favorite:book`` …).
        value: The value phrase as written (for dedup and supersession).
        statement: The sentence rewritten about the speaker in the third person.
    """

    attribute: str
    value: str
    statement: str


_LIKE = r"(?:love|like|enjoy|adore|prefer)"
_HATE = r"(?:hate|dislike|can['’]?t stand)"
_INTO = r"(?:into|passionate about|keen on|a (?:big |huge )?fan of)"
_RELATIVES = (
    r"(?:son|daughter|kids|children|child|mom|mother|dad|father|sister|brother|parents|"
    r"grandma|grandmother|grandpa|grandfather|family|cousin|aunt|uncle)"
)
_PETS = r"(?:dog|cat|puppy|pup|kitten|pet|pets|dogs|cats|turtle|turtles|bird|horse)"
_RULES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (attr, re.compile(pattern, re.IGNORECASE))
    for attr, pattern in (
        ("favorite", r"\bmy (?:all[- ]time |absolute )?fav(?:ou?rite|e)\s+([\w\- ]{2,30}?)\s+"
                     r"(?:is|are|was|has to be|would be)\s+(.{2,})"),
        ("likes", rf"\bI{_ADVERB}\s+{_LIKE}{_ADVERB}\s+{_NOT_OBJECT}(.{{3,}})"),
        ("dislikes", rf"\bI{_ADVERB}\s+{_HATE}{_ADVERB}\s+{_NOT_OBJECT}(.{{3,}})"),
        ("likes", rf"\bI['’]?m (?:really |so |super )?{_INTO}\s+(.{{3,}})"),
        ("work", r"\bI (?:work|worked|am working|['’]m working)\s+(?:as|at|for|in)\s+(.{3,})"),
        ("home", r"\bI (?:live|lived|moved|grew up|am living|['’]m living)(?:\s+\w+)?"
                 r"\s+(?:in|to|near)\s+(.{3,})"),
        ("origin", r"\bI['’]?(?:m| am) (?:originally )?from\s+(.{3,})"),
        ("partner", r"\bmy (?:wife|husband|partner|boyfriend|girlfriend|fianc[ée]e?)\b(.*)"),
        ("family", rf"\bmy {_RELATIVES}\b(.*)"),
        ("pet", rf"\bmy {_PETS}\b(.*)"),
        ("has", r"\bI (?:have|own|adopted|bought|got)\s+"
                r"(?:a|an|two|three|four|some|my own|a new)\s+(.{3,})"),
        ("status", r"\bI['’]?(?:m| am) (?:single|married|divorced|engaged|pregnant|retired|"
                   r"a (?:single )?(?:mom|dad|parent))\b(.*)"),
        ("identity", r"\bI['’]?(?:m| am) (?:a|an)\s+(?!(?:bit|little|lot|few)\b)(.{3,})"),
        ("habit", r"\bI(?:\s+\w+ly)?\s+(?:always|usually|often|regularly|normally)\s+(.{3,})"),
        ("activity", r"\bI['’]?(?:ve| have) been\s+(\w+ing\b.{3,})"),
        ("goal", r"\b(?:my (?:goal|dream|plan) is to|I (?:want|hope|plan|aim) to become)"
                 r"\s+(.{3,})"),
    )
)

_FIRST_PERSON = re.compile(r"\b(?:I|[Mm]y|[Mm]e|[Mm]ine|[Mm]yself)\b|\bI['’]")
_VERB_AFTER_SUBJECT = re.compile(
    r"\{I\}((?:\s+(?:really|also|just|still|totally|absolutely|truly|always|usually|often|never|"
    r"regularly|normally|genuinely|finally|recently|even|actually))*)\s+([a-z]+)\b"
)
_NO_AGREE: Final = frozenset((
    "can", "could", "will", "would", "shall", "should", "may", "might", "must", "did", "was",
    "had", "is", "has", "does", "used", "got", "went", "made", "loved", "liked", "and", "or",
    "but", "so", "too", "also", "then", "not", "nor", "yet", "as", "if",
    # irregular past tenses: already agree with any subject
    "took", "saw", "ran", "came", "gave", "found", "felt", "left", "met", "said", "told",
    "thought", "bought", "brought", "kept", "knew", "heard", "wrote", "began", "became",
    "sang", "won", "lost", "spent", "taught", "fell", "drew", "grew", "threw", "rode", "swam",
))
# "{I}" marks a rewritten subject "I" (its verb must agree); "{S}" any other form.
_PRONOUNS: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"\bI['’]m\b|\bI am\b", "{S} is"),
        (r"\bI['’]ve\b", "{S} has"),
        (r"\bI['’]d\b", "{S} would"),
        (r"\bI['’]ll\b", "{S} will"),
        (r"\bI\b", "{I}"),
        (r"\b[Mm]yself\b", "{S}"),
        (r"\b[Mm]ine\b", "{S}'s"),
        (r"\b[Mm]y\b", "{S}'s"),
        (r"\b[Mm]e\b", "{S}"),
    )
)


def _third_person(verb: str) -> str:
    if verb in _NO_AGREE or verb.endswith("ed") or (verb.endswith("s") and verb != "miss"):
        return verb
    if verb == "have":
        return "has"
    if verb in {"do", "go"}:
        return verb + "es"
    if verb.endswith(("sh", "ch", "x", "z", "ss", "o")):
        return verb + "es"
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(sentence: str, speaker: str) -> str:
    """Rewrite a first-person sentence about ``speaker`` in the third person.

    ``"I love my dog"`` said by Ann gives ``"Ann loves Ann's dog"``. Only the
    first-person pronouns are changed (plus the agreement of the verb right
    after a rewritten "I"); everything else is kept as written.

    Args:
        sentence: One sentence.
        speaker: Who said it.

    Returns:
        The rewritten sentence.
    """
    out = sentence
    for pattern, repl in _PRONOUNS:
        out = pattern.sub(repl, out)

    def agree(m: re.Match[str]) -> str:
        adverbs, verb = m.group(1), m.group(2)
        return "{S}" + adverbs + " " + _third_person(verb)

    out = _VERB_AFTER_SUBJECT.sub(agree, out)
    return out.replace("{I}", speaker).replace("{S}", speaker)


def _clip(value: str) -> str:
    value = re.split(r"[.!?;,]|\s[-–—]\s|\b(?:but|because|since|so|and I|which)\b", value)[0]
    return " ".join(value.split()[:8]).strip(" '\"")


def spot_facts(sentence: str, speaker: str | None, *, limit: int = 1) -> list[FactMatch]:
    """Find stable first-person statements in one sentence.

    Contract: questions and sentences without a first-person pronoun give
    nothing; at most ``limit`` facts come back (rules are tried in a fixed
    order, most specific first); the statement is the whole sentence in the
    third person, so it keeps the evidence's own words.

    Args:
        sentence: One sentence of a turn.
        speaker: The speaker (required: a fact needs a subject).
        limit: Maximum number of facts.

    Returns:
        The facts found.
    """
    text = sentence.strip()
    if not speaker or not text or text.endswith("?") or not _FIRST_PERSON.search(text):
        return []
    found: list[FactMatch] = []
    for attr, pattern in _RULES:
        m = pattern.search(text)
        if m is None:
            continue
        value = _clip(m.group(m.lastindex or 1)) if m.lastindex else ""
        attribute = attr
        if attr == "favorite":
            attribute = f"favorite:{' '.join(m.group(1).lower().split())}"
            value = _clip(m.group(2))
        if attr in {"partner", "family", "pet", "status"}:
            value = _clip(m.group(0))
        if not value:
            continue
        found.append(FactMatch(attribute, value, third_person(text, speaker)))
        if len(found) >= limit:
            break
    return found


def single_valued(attribute: str) -> bool:
    """Whether a newer value of ``attribute`` replaces the older one."""
    return attribute.split(":", 1)[0] in SINGLE_VALUED
