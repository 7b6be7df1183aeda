"""Word tokens, an English stop list and the Porter2 (Snowball English) stemmer.

Everything lexical in labile (keyword indexes, BM25, overlap signals used by the
offline decision rules) goes through :func:`terms`, so two pieces of text that
mean the same words produce the same terms regardless of case, apostrophes or
inflection.

The stemmer follows the current Snowball English algorithm (Snowball 3.x:
the extended list of R1 prefixes such as ``univers``/``organ``, the ``-ogist``
rule and the ``-ying``/``-eed`` special cases folded into step 1b). It is a
from-scratch pure-Python implementation so the package needs no compiled
dependency.
"""

from __future__ import annotations

import re
from functools import lru_cache

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


# --------------------------------------------------------------------------- #
# Porter2 / Snowball English                                                   #
# --------------------------------------------------------------------------- #

_VOWELS = frozenset("aeiouy")
# Letters that may not close a "short syllable" ('Y' is a consonantal y).
_NOT_SHORT_END = frozenset("aeiouywxY")
_VALID_LI = frozenset("cdeghkmnrt")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")

# Whole-word exceptions checked before anything else (value None = unchanged).
_EXCEPTION1: dict[str, str | None] = {
    "skis": "ski",
    "skies": "sky",
    "idly": "idl",
    "gently": "gentl",
    "ugly": "ugli",
    "early": "earli",
    "only": "onli",
    "singly": "singl",
    "sky": None,
    "news": None,
    "howe": None,
    "atlas": None,
    "cosmos": None,
    "bias": None,
    "andes": None,
}
# Prefixes whose end is taken as the start of R1 (they would otherwise stem badly:
# "generous"/"general" or "university"/"universal" must stay apart).
_R1_PREFIXES = ("univers", "commun", "arsen", "emerg", "gener", "inter", "later", "organ", "past")
# Stems that keep "-eed"/"-ing" intact ("succeed", "evening", "herring", ...).
_EED_KEEP = frozenset({"succ", "proc", "exc"})
_ING_KEEP = frozenset({"even", "cann", "inn", "earr", "herr", "out"})

# Suffix tables for steps 2-4, longest first so the first hit is the longest match.
_STEP2: tuple[tuple[str, str], ...] = (
    ("ization", "ize"),
    ("ational", "ate"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("iveness", "ive"),
    ("tional", "tion"),
    ("biliti", "ble"),
    ("lessli", "less"),
    ("entli", "ent"),
    ("ation", "ate"),
    ("alism", "al"),
    ("aliti", "al"),
    ("ousli", "ous"),
    ("iviti", "ive"),
    ("fulli", "ful"),
    ("ogist", "og"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("abli", "able"),
    ("izer", "ize"),
    ("ator", "ate"),
    ("alli", "al"),
    ("bli", "ble"),
    ("ogi", "og"),  # only after "l"
    ("li", ""),  # only after a valid li-ending
)
_STEP3: tuple[tuple[str, str], ...] = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("alize", "al"),
    ("icate", "ic"),
    ("iciti", "ic"),
    ("ative", ""),  # only in R2
    ("ical", "ic"),
    ("ness", ""),
    ("ful", ""),
)
_STEP4: tuple[str, ...] = (
    "ement",
    "ance",
    "ence",
    "able",
    "ible",
    "ment",
    "ant",
    "ent",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
    "ion",  # only after "s" or "t"
    "al",
    "er",
    "ic",
)


def _is_vowel(ch: str) -> bool:
    return ch in _VOWELS


def _regions(word: str) -> tuple[int, int]:
    """Return (p1, p2): the starts of R1 and R2 (len(word) when a region is empty)."""
    n = len(word)

    def after_vc(start: int) -> int:
        # Position just after the first non-vowel that follows a vowel.
        i = start
        while i < n and not _is_vowel(word[i]):
            i += 1
        while i < n and _is_vowel(word[i]):
            i += 1
        return i + 1 if i < n else n

    p1 = next((len(p) for p in _R1_PREFIXES if word.startswith(p)), -1)
    if p1 < 0:
        p1 = after_vc(0)
    p2 = after_vc(p1) if p1 < n else n
    return p1, p2


def _ends_short_syllable(word: str) -> bool:
    """Snowball's ``shortv`` tested at the end of ``word``."""
    n = len(word)
    if (
        n >= 3
        and word[-1] not in _NOT_SHORT_END
        and _is_vowel(word[-2])
        and not _is_vowel(word[-3])
    ):
        return True
    if n == 2 and not _is_vowel(word[1]) and _is_vowel(word[0]):
        return True
    return word.endswith("past")


def _step1a(w: str) -> str:
    for suffix in ("'s'", "'s", "'"):
        if w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith(("ied", "ies")):
        # "cries" -> "cri" but "ties" -> "tie": keep the e after a one-letter stem.
        return w[:-2] if len(w) > 4 else w[:-1]
    if w.endswith(("us", "ss")):
        return w
    # A final s goes only if a vowel occurs before the letter preceding it
    # ("gaps" -> "gap", but "gas" and "this" stay).
    if w.endswith("s") and any(_is_vowel(c) for c in w[:-2]):
        return w[:-1]
    return w


def _step1b(w: str, p1: int) -> str:
    for suffix in ("eedly", "ingly", "edly", "eed", "ing", "ed"):
        if w.endswith(suffix):
            break
    else:
        return w
    stem_part = w[: -len(suffix)]
    if suffix in ("eed", "eedly"):
        if len(stem_part) >= p1 and stem_part not in _EED_KEEP:
            return stem_part + "ee"
        return w
    if suffix == "ing":
        # "dying" -> "die", "lying" -> "lie"; "evening", "herring" stay.
        if len(stem_part) == 2 and stem_part[1] == "y" and not _is_vowel(stem_part[0]):
            return stem_part[0] + "ie"
        if stem_part in _ING_KEEP:
            return w
    if not any(_is_vowel(c) for c in stem_part):
        return w
    w = stem_part
    if w.endswith(("at", "bl", "iz")):
        return w + "e"
    if w.endswith(_DOUBLES):
        # "add", "egg", "off" are whole words, not doubled stems.
        if len(w) == 3 and w[0] in "aeo":
            return w
        return w[:-1]
    if len(w) == p1 and _ends_short_syllable(w):
        return w + "e"
    return w


def _step1c(w: str) -> str:
    if len(w) > 2 and w[-1] in "yY" and not _is_vowel(w[-2]):
        return w[:-1] + "i"
    return w


def _step2(w: str, p1: int) -> str:
    for suffix, repl in _STEP2:
        if w.endswith(suffix):
            start = len(w) - len(suffix)
            if start < p1:
                return w
            if suffix == "ogi":
                return w[:start] + repl if w[start - 1] == "l" else w
            if suffix == "li":
                return w[:start] if w[start - 1] in _VALID_LI else w
            return w[:start] + repl
    return w


def _step3(w: str, p1: int, p2: int) -> str:
    for suffix, repl in _STEP3:
        if w.endswith(suffix):
            start = len(w) - len(suffix)
            if start < p1 or (suffix == "ative" and start < p2):
                return w
            return w[:start] + repl
    return w


def _step4(w: str, p2: int) -> str:
    for suffix in _STEP4:
        if w.endswith(suffix):
            start = len(w) - len(suffix)
            if start < p2:
                return w
            if suffix == "ion" and (start == 0 or w[start - 1] not in "st"):
                return w
            return w[:start]
    return w


def _step5(w: str, p1: int, p2: int) -> str:
    start = len(w) - 1
    if w.endswith("e"):
        if start >= p2 or (start >= p1 and not _ends_short_syllable(w[:start])):
            return w[:start]
    elif w.endswith("l") and start >= p2 and w[start - 1] == "l":
        return w[:start]
    return w


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Stem one lowercase English word with the Porter2 (Snowball English) algorithm.

    Args:
        word: A single lowercase token (as produced by :func:`words`).

    Returns:
        The stem, e.g. "running" -> "run", "generously" -> "generous",
        "ponies" -> "poni". Words shorter than three characters are returned as is.
    """
    if word in _EXCEPTION1:
        return _EXCEPTION1[word] or word
    if len(word) < 3:
        return word
    w = word[1:] if word.startswith("'") else word
    # Mark consonantal y (word-initial or after a vowel) as 'Y' so it is not a vowel.
    chars = list(w)
    for i, ch in enumerate(chars):
        if ch == "y" and (i == 0 or chars[i - 1] in _VOWELS):
            chars[i] = "Y"
    w = "".join(chars)
    p1, p2 = _regions(w)
    w = _step1a(w)
    w = _step1b(w, p1)
    w = _step1c(w)
    w = _step2(w, p1)
    w = _step3(w, p1, p2)
    w = _step4(w, p2)
    w = _step5(w, p1, p2)
    return w.replace("Y", "y")
