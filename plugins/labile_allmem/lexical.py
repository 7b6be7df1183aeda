"""Lexical signals used by the offline decisions and by plan validation.

Everything goes through `labile.text.tokenize.terms` (stemmed content words),
so two texts that use the same words in different inflections compare equal.
The cue lists are general English (negation, change-of-state phrases), never
tuned to a particular conversation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from labile.text.tokenize import terms, words
from labile_text.sentences import split_sentences

__all__ = [
    "change_cues",
    "jaccard",
    "negated",
    "numbers",
    "support_ratio",
    "term_set",
    "wordset",
]

def wordset(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` as a set (for word lists)."""
    return frozenset(text.split())


# Phrases that say a state changed: "now", "no longer", "switched to" …
_CHANGE_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("no longer", r"\bno\s+longer\b"),
        ("anymore", r"\bany\s*more\b"),
        ("switched", r"\bswitch(?:ed|ing)?\s+(?:to|from|over)\b"),
        ("changed", r"\bchang(?:ed|ing)\s+(?:to|my|our|jobs?|careers?)\b"),
        ("instead", r"\binstead\b"),
        ("now", r"\bnow\b"),
        ("these days", r"\bthese\s+days\b"),
        ("stopped", r"\b(?:stopped|quit|gave\s+up)\b"),
        ("moved", r"\bmoved\s+(?:to|into|out)\b"),
        ("not any", r"\bnot\s+\w+\s+any\s*more\b"),
    )
)
# Words that negate a clause.
_NEGATIONS: Final = frozenset(
    {"not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "cannot", "without"}
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_NUMBER_WORDS: Final = wordset(
    "zero one two three four five six seven eight nine ten eleven twelve twenty thirty forty "
    "fifty hundred thousand first second third"
)


def term_set(*texts: str) -> frozenset[str]:
    """The set of stemmed content words of ``texts`` together."""
    out: set[str] = set()
    for text in texts:
        out.update(terms(text))
    return frozenset(out)


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard overlap of two term collections (1.0 when both are empty)."""
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def numbers(text: str) -> frozenset[str]:
    """Numerals in ``text``: digit runs (``3``, ``2.5``) and number words (``three``)."""
    found = {m.group(0).replace(",", ".") for m in _NUMBER.finditer(text)}
    found.update(w for w in words(text) if w in _NUMBER_WORDS)
    return frozenset(found)


def negated(text: str) -> bool:
    """Whether ``text`` contains a negation ("not", "never", "don't" …)."""
    return any(t in _NEGATIONS or t in _NEGATED_CONTRACTIONS for t in words(text))


_NEGATED_CONTRACTIONS: Final = wordset(
    "dont doesnt didnt cant couldnt wont wouldnt shouldnt isnt arent wasnt werent hasnt "
    "havent hadnt aint mustnt neednt"
)


# Cues that a preceding negator cancels: "won't quit", "didn't switch to".
_NEGATABLE: Final = wordset("switched changed instead now stopped moved")
_NEGATORS: Final = wordset(
    "not never no dont doesnt didnt wont wouldnt cant couldnt shouldnt isnt arent wasnt werent"
)


def change_cues(text: str) -> list[str]:
    """Names of the change-of-state cues stated in ``text`` (empty if none).

    Cues inside questions ("Are you still there now?") do not count, nor do
    affirmative cues negated by one of the three words before them ("I won't
    quit", "I didn't switch to …").
    """
    found: list[str] = []
    for start, end in split_sentences(text):
        sentence = text[start:end]
        if sentence.rstrip().endswith("?"):
            continue
        for name, pattern in _CHANGE_PATTERNS:
            if name in found:
                continue
            for m in pattern.finditer(sentence):
                before = words(sentence[: m.start()])[-3:]
                if name in _NEGATABLE and any(w in _NEGATORS for w in before):
                    continue
                found.append(name)
                break
    return found


def support_ratio(claim: str, evidence: Iterable[str]) -> float:
    """Share of the claim's content terms that occur in the evidence texts.

    A claim without content terms is fully supported (1.0); the caller decides
    whether an empty claim is acceptable.
    """
    claim_terms = term_set(claim)
    if not claim_terms:
        return 1.0
    pool = term_set(*evidence)
    return len(claim_terms & pool) / len(claim_terms)
