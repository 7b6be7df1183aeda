"""Word tokens, an English stop list and the Porter2 (Snowball English) stemmer.

Everything lexical in labile (keyword indexes, BM25, overlap signals used by the
offline decision rules) goes through :func:`terms`, so two pieces of text that
mean the same words produce the same terms regardless of case, apostrophes or
inflection.

The stemmer is the current Snowball English algorithm (Snowball 3.x: the
extended list of R1 prefixes such as ``univers``/``organ``, the ``-ogist``
rule and the ``-ying``/``-eed`` special cases), as generated from the Snowball
sources into pure Python by the ``snowballstemmer`` package: the reference
implementation, with no compiled code.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import snowballstemmer

__all__ = ["STOPWORDS", "content_words", "is_stopword", "stem", "terms", "words", "wordset"]


def wordset(text: str) -> frozenset[str]:
    """A frozenset from a whitespace-separated word list (keeps long word lists readable)."""
    return frozenset(text.split())


# An apostrophe (straight or curly) between two word characters is part of a
# contraction or possessive; it is deleted so "don't" and "dont" are one token.
_INNER_APOSTROPHE = re.compile(r"(?<=[^\W_])['’‘`](?=[^\W_])")
# Letters and digits of any script; underscores and punctuation separate tokens.
_TOKEN = re.compile(r"[^\W_]+")
# The same tokens before apostrophe removal, so contractions can be recognised.
_RAW_TOKEN = re.compile(r"[^\W_]+(?:['’‘`][^\W_]+)*")
_APOSTROPHES = re.compile(r"['’‘`]")
_CONTRACTION_TAILS = frozenset({"ll", "d", "ve", "re", "m", "s", "t"})

# NLTK's English stop list (itself close to Lucene's and the Snowball list),
# plus a few function words it lacks (modals, "us", some prepositions), plus the
# apostrophe-less spellings our tokenizer produces for contractions ("I'm" ->
# "im"). Spellings that collide with ordinary words ("ill", "well", "shed",
# "wed", "hell", "id") are left out; :func:`is_stopword` catches those
# contractions while the apostrophe is still visible.
STOPWORDS: frozenset[str] = wordset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he
    him his himself she her hers herself it its itself they them their theirs
    themselves what which who whom this that these those am is are was were be
    been being have has had having do does did doing a an the and but if or
    because as until while of at by for with about against between into through
    during before after above below to from up down in out on off over under
    again further then once here there when where why how all any both each few
    more most other some such no nor not only own same so than too very s t can
    will just don should now d ll m o re ve y ain aren couldn didn doesn hadn
    hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
    im ive youre youve youll youd hes shes its itll weve were theyre theyve
    theyll theyd thats whats whos wheres hows theres heres lets dont doesnt didnt
    cant couldnt wont wouldnt shouldnt isnt arent wasnt werent hasnt havent
    hadnt mustnt neednt us could would might must shall cannot without within upon
    onto among since toward towards
    """
)


def words(text: str) -> list[str]:
    """Split text into casefolded word tokens.

    Tokens are maximal runs of letters/digits (any script). Apostrophes inside
    a word are removed ("don't" -> "dont", "Caroline's" -> "carolines"); every
    other non-alphanumeric character separates tokens, so "3.5" gives ["3", "5"].

    Args:
        text: Arbitrary text.

    Returns:
        The tokens in order of appearance; empty for text without letters or digits.
    """
    return _TOKEN.findall(_INNER_APOSTROPHE.sub("", text).casefold())


def is_stopword(token: str) -> bool:
    """Tell whether one raw token is a stopword or a contraction of one.

    Args:
        token: A single word as written, apostrophes included ("The", "I'll").

    Returns:
        True for stopwords in any case ("The", "dont") and for a stopword
        followed by a contraction suffix ("I'll", "we'd", "she's"); False for
        other words, including possessives of nouns ("Mel's").
    """
    low = token.casefold()
    parts = _APOSTROPHES.split(low)
    if "".join(parts) in STOPWORDS:
        return True
    return len(parts) == 2 and parts[1] in _CONTRACTION_TAILS and parts[0] in STOPWORDS


def content_words(text: str) -> list[str]:
    """Return :func:`words` minus stopwords and single-character tokens.

    Contractions of stopwords are dropped too ("I'll" is not the word "ill",
    "we'd" is not "wed"); the result is always a sub-sequence of ``words(text)``.

    Args:
        text: Arbitrary text.

    Returns:
        The remaining tokens in order (duplicates kept).
    """
    out: list[str] = []
    for raw in _RAW_TOKEN.findall(text):
        for w in words(raw):
            if len(w) > 1 and not is_stopword(raw):
                out.append(w)
    return out


def terms(text: str) -> list[str]:
    """Return the stemmed content words of ``text`` (the unit of lexical matching).

    Args:
        text: Arbitrary text.

    Returns:
        ``[stem(w) for w in content_words(text)]``.
    """
    return [stem(w) for w in content_words(text)]


# One stemmer per thread: a Snowball stemmer object keeps its working state
# between calls, and searches run in worker threads (`labile.AsyncMemory`).
_STEMMERS = threading.local()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Stem one lowercase English word with the Porter2 (Snowball English) algorithm.

    Args:
        word: A single lowercase token (as produced by :func:`words`).

    Returns:
        The stem, e.g. "running" -> "run", "generously" -> "generous",
        "ponies" -> "poni". Words shorter than three characters are returned as is.
    """
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    result: str = stemmer.stemWord(word)
    return result
