"""Two tests on one name or word: is it an acronym, and does it address someone?

Both the keyphrase extractor and REALM's offline unit extraction must not
take the person a turn speaks *to* ("Hey Mel!", "Thanks, Mel.") for a topic
or an entity the turn is *about*; the entity spotter and the keyphrase
extractor keep acronyms ("RPG", "NYC") upper-case and treat them as names.
The rules are lexical: capitalisation, punctuation and a few cue words.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final, Literal

from labile.text.tokenize import wordset

__all__ = ["ADDRESS_CUES", "ends_clause", "is_acronym", "is_vocative"]

#: Words after which a name is an address, not a topic ("Wow Maria, ...").
ADDRESS_CUES: Final = wordset(
    "hey hi hello thanks thank you bye congrats congratulations dear yo wow oh yeah yes "
    "sorry cool nice great awesome haha lol aw aww omg whoa woah"
)
# A word with inner apostrophes or hyphens ("don't", "Jean-Luc").
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
_OPENING_PUNCTUATION: Final = ",.!?;:"


def is_acronym(token: str, *, plural: bool = False) -> bool:
    """All capitals, two letters or more ("RPG", "U.S."); with ``plural`` also "RPGs".

    Non-letters are ignored, so "R2D2" counts by its letters "RDD".
    """
    letters = [c for c in (token.removesuffix("s") if plural else token) if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def ends_clause(text: str, end: int) -> bool:
    """Whether nothing but punctuation (or the end of the text) follows ``text[:end]``.

    A name addresses someone only where the clause ends with it: "Mel!",
    "Thanks, Mel." — in "Mel went home" it is the subject.
    """
    after = text[end:].lstrip()
    return not after or not after[0].isalnum()


def is_vocative(
    text: str,
    start: int,
    end: int,
    *,
    cues: Collection[str] = ADDRESS_CUES,
    cue_match: Literal["word", "suffix"] = "word",
) -> bool:
    """Whether the name ``text[start:end]`` addresses someone rather than mentions them.

    It does when it ends its clause (`ends_clause`) and is opened by the
    start of the text, by punctuation (``, . ! ? ; :``), or by a cue.

    Args:
        text: The whole turn.
        start: Where the name starts.
        end: Where it ends.
        cues: Lower-case words that open an address ("hey", "thanks" …).
        cue_match: ``"word"``: the last word before the name is a cue;
            ``"suffix"``: the text before the name ends with a cue, even
            inside a word, and a cue may be several words ("thank you").
            REALM's offline extractor has always matched this way; the two
            agree when the text right before the name is a whole cue.
    """
    if not ends_clause(text, end):
        return False
    before = text[:start].rstrip()
    if not before or before[-1] in _OPENING_PUNCTUATION:
        return True
    if cue_match == "suffix":
        return before.casefold().endswith(tuple(cues))
    last = _WORD.findall(before[-20:])
    return bool(last) and last[-1].casefold() in cues
