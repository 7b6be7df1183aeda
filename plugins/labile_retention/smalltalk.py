"""Small talk: a turn that carries no fact worth keeping.

A turn is small talk when, once the words of greeting, thanks, assent and
filler are set aside, nothing is left that could be a fact: no content word
beyond `MAX_CONTENT_WORDS`, no number, no name written with a capital inside the
sentence, and it is short. The judgement is lexical and general English (the
phatic vocabulary below), not fitted to any log; ``docs/retention.md`` gives
how often it fires on LoCoMo dev and on the benchmark of change, and how
often on a turn that answers a question.
"""

from __future__ import annotations

import re
from typing import Final

from labile.text.tokenize import content_words, words, wordset

#: Words of greeting, thanks, farewell, assent, praise and filler: what a
#: phatic turn is made of. Stopwords are already ignored by `content_words`.
PHATIC: Final = wordset("""
    hi hello hey hiya howdy yo greetings morning evening afternoon night goodnight
    thanks thank thx ty cheers appreciate appreciated welcome pleasure
    bye goodbye cya later soon care talk chat catch see speak
    ok okay k kk yes yeah yep yup sure right alright absolutely definitely totally
    exactly indeed true agreed course certainly cool nice great awesome amazing
    wonderful fantastic lovely glad happy good fine well super sweet perfect
    lol haha hahaha hehe omg wow oh ah aw aww hmm um uh huh ooh yay
    sounds sound like love enjoy hope wish luck fun day week weekend
    wait going doing hear heard know see sorry np problem worries thing things
    really much lot pretty kind sort get got feel feeling way guess think
""")

#: At most this many non-phatic content words may remain.
MAX_CONTENT_WORDS: Final = 0
#: Longer turns are never small talk, whatever their words.
MAX_WORDS: Final = 14

_DIGIT = re.compile(r"\d")
#: A capitalised word that does not open a sentence: a name, most likely.
_INNER_NAME = re.compile(r"(?<![.!?]\s)(?<!^)(?<![.!?])\b[A-Z][a-z]+")


def is_small_talk(text: str) -> bool:
    """Whether ``text`` is small talk (see the module docstring); empty text is."""
    if len(words(text)) > MAX_WORDS or _DIGIT.search(text):
        return False
    if any(_is_name(m.group(0)) for m in _INNER_NAME.finditer(text.strip())):
        return False
    rest = [w for w in content_words(text) if w not in PHATIC]
    return len(rest) <= MAX_CONTENT_WORDS


def _is_name(word: str) -> bool:
    # "I" and phatic words written with a capital ("Thanks", "Hey") are not names.
    return word.casefold() not in PHATIC and word != "I"
