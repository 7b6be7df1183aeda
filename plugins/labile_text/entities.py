"""Heuristic named-entity spotting, name normalisation and filler detection.

These are the offline stand-ins for what an LLM would do when it decides which
entities a turn mentions (REALM entity nodes) and whether a turn carries any
information at all (both bundles skip pure small talk). The rules rely only on
capitalisation, a few cue words and general-English word lists, never on
knowledge of particular conversations.
"""

from __future__ import annotations

import re

import attrs

from labile.text.tokenize import STOPWORDS, is_stopword
from labile_text.dates import MONTH_NUMBERS, WEEKDAY_NUMBERS
from labile_text.entity_types import type_by_context
from labile_text.entity_vocab import (
    COMMON,
    FILLER_VOCAB,
    GREETING_BEFORE_NAME,
    HOLIDAYS,
    HONORIFICS,
    NATIONALITIES,
    ORG_CUES,
    ORG_HEADS,
    PERSON_BEFORE_PREP,
    PLACE_CUES,
    PLACE_HEADS,
    PLACE_PREPS,
)
from labile_text.names import ends_clause, is_acronym
from labile_text.sentences import split_sentences

__all__ = [
    "CATEGORIES", "GUESS_CUES", "Entity", "is_filler", "name_keys", "named_entities",
    "normalize_name",
]


CATEGORIES: frozenset[str] = frozenset(
    {"person", "animal", "place", "organization", "title", "other"}
)
#: `Entity.cue` values that only guess the category (a bare capitalised name, a preposition).
GUESS_CUES: frozenset[str] = frozenset({"", "form"})


def _check_category(_inst: object, _attr: object, value: str) -> None:
    if value not in CATEGORIES:
        raise ValueError(f"unknown entity category {value!r}")


@attrs.frozen
class Entity:
    """One entity mention.

    Attributes:
        name: The surface form, verbatim from the text (possessive "'s" excluded).
        category: One of "person", "animal", "place", "organization", "title"
            (a quoted work) and "other" (any other thing).
        span: ``(start, end)`` such that ``text[start:end] == name``.
        cue: What typed it: "name-word" (the name's own words: "Dr.", "Health"),
            a context cue of `labile_text.entity_types.type_by_context`
            ("animal-noun", "work-relation" …), "form" (a preposition before
            it, its capitals or digits), or "" when "person" is only the
            default guess for a capitalised name — the one a later cue may
            overrule.
    """

    name: str
    category: str = attrs.field(validator=_check_category)
    span: tuple[int, int]
    cue: str = ""


# A word with optional internal apostrophes, hyphens, periods or ampersands
# ("Charlotte's", "Jean-Luc", "U.S", "AT&T").
_WORD = re.compile(r"[^\W_]+(?:['’.\-&][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_QUOTED = re.compile(r"\"([^\"\n]{1,120})\"|“([^”\n]{1,120})”")

_MONTHS = frozenset(MONTH_NUMBERS)
_DAYS = frozenset(WEEKDAY_NUMBERS) | {"weekend"}
# Laughter and drawn-out interjections: "Hahaha", "Awww", "Hmmm", "Lool".
_INTERJECTION = re.compile(
    r"h?(?:ha|he|hi){2,}h?|lo+l|a+w+|o+h+|h+m+|u+m+|u+g+h+|y+a+y+|w+o+w+|o+m+g+"
)
_INITIALS = re.compile(r"(?:[A-Z]\.)*[A-Z]|[A-Z][a-z]*")
_NAME_PREFIX = re.compile(r"(?:Mc|Mac|Le|La|De|Di|Da|Du|Van|Von|O)[A-Z][a-z]")
_CONNECTORS = frozenset({"of", "the", "de", "del", "da", "di", "du", "van", "von", "for", "&"})



def _lower(token: str) -> str:
    return token.replace("'", "").replace("’", "").casefold()


def _is_capitalised(token: str) -> bool:
    return token[:1].isupper()


def _is_common(token: str) -> bool:
    """Stopwords, chat interjections, month/day names and the pronoun "I"."""
    low = _lower(_POSSESSIVE.sub("", token))
    return (
        is_stopword(token)
        or low in COMMON
        or low in _MONTHS
        or low in _DAYS
        or low.removesuffix("s") in _DAYS  # "Saturdays"
        or low == "i"
        or _INTERJECTION.fullmatch(low) is not None
    )


@attrs.define(slots=True)
class _Tok:
    """A word token: its text, position, and the characters since the previous token."""

    text: str
    start: int
    end: int
    gap: str  # text between the previous token (or the sentence start) and this one
    initial: bool  # first word of its sentence or of a quotation: capitalised by grammar


def _tokens(text: str) -> list[list[_Tok]]:
    """Tokenise ``text`` sentence by sentence."""
    sentences: list[list[_Tok]] = []
    for s, e in split_sentences(text):
        toks: list[_Tok] = []
        for m in _WORD.finditer(text, s, e):
            gap = text[toks[-1].end if toks else s : m.start()]
            initial = not toks or bool(re.search(r"[\"“:]\s*$", gap))
            toks.append(_Tok(m.group(0), m.start(), m.end(), gap, initial))
        if toks:
            sentences.append(toks)
    return sentences


def _titles(text: str) -> list[Entity]:
    """Quoted, title-cased phrases: "Charlotte's Web", “Becoming Nicole”."""
    found: list[Entity] = []
    for m in _QUOTED.finditer(text):
        group = 1 if m.group(1) is not None else 2
        inner = m.group(group)
        stripped = inner.strip().rstrip(",.!?;:")
        if not stripped:
            continue
        start = m.start(group) + inner.index(stripped)
        toks = _WORD.findall(stripped)
        if not toks or len(toks) > 8 or not _is_capitalised(toks[0]):
            continue
        if _lower(toks[0]) == "i" and len(toks) > 1:
            continue  # a quoted sentence ("I love it"), not a title
        if all(is_stopword(t) for t in toks):
            continue  # a quoted function word ("That") is not a title
        content = [t for t in toks[1:] if _lower(t) not in STOPWORDS]
        if sum(_is_capitalised(t) for t in content) * 2 < len(content):
            continue  # most content words lower-case: a quoted phrase, not a title
        found.append(Entity(stripped, "title", (start, start + len(stripped)), "quoted"))
    return found


def _joinable(left: _Tok, right: _Tok) -> bool:
    """Words of one name are separated by one space (or ". " after an initial)."""
    return re.fullmatch(r"\.?\s", right.gap) is not None and right.start > left.end


def _separator_after(sentence: list[_Tok], i: int) -> str:
    """The punctuation before token ``i``; "." when the sentence ends there."""
    return sentence[i].gap.strip() if i < len(sentence) else "."


def _name_groups(sentence: list[_Tok], caps_mid: set[str]) -> list[list[_Tok]]:
    """Group consecutive capitalised tokens of one sentence into name candidates."""
    groups: list[list[_Tok]] = []
    i, n = 0, len(sentence)
    while i < n:
        tok = sentence[i]
        i += 1
        honorific = (
            _lower(tok.text) in HONORIFICS
            and i < n
            and _is_capitalised(sentence[i].text)
            and _joinable(tok, sentence[i])
        )
        # A capitalised article/preposition mid-sentence opens a name when a
        # capitalised non-common word follows ("love The Beatles", "Under Armour").
        opener = (
            not tok.initial
            and _is_capitalised(tok.text)
            and tok.text.casefold() in STOPWORDS
            and tok.text != "I"
            and i < n
            and _is_capitalised(sentence[i].text)
            and not _is_common(sentence[i].text)
            and sentence[i].gap == " "
        )
        if not (honorific or opener) and (not _is_capitalised(tok.text) or _is_common(tok.text)):
            continue
        group = [tok]
        # Extend over capitalised words, allowing lower-case connectors inside
        # ("University of Michigan"); stop after a possessive ("Mel's").
        while i < n and not _POSSESSIVE.search(group[-1].text):
            cur = sentence[i]
            if not _joinable(group[-1], cur):
                break
            if (
                _is_capitalised(cur.text)
                and (not _is_common(cur.text) or _lower(cur.text) == "the")
            ) or (cur.text.casefold() in _CONNECTORS and _connects(sentence, i)):
                group.append(cur)
                i += 1
            else:
                break
        while group and group[-1].text.casefold() in _CONNECTORS:
            group.pop()
        after = _separator_after(sentence, i)
        if (
            len(group) == 2
            and group[0].initial
            and _POSSESSIVE.sub("", group[0].text) not in caps_mid
            and after[:1] in {",", "!", "?", "."}
        ):
            # "Woah Joanna!", "Go Jon!", "Remember Jon, ...": an opening word plus
            # the name of the person addressed.
            group = group[1:]
        if group and _keep_group(group, caps_mid):
            groups.append(group)
    return groups


def _connects(sentence: list[_Tok], i: int) -> bool:
    """A run of at most two connectors ("of", "of the") leading to a capitalised word."""
    j = i
    while j < len(sentence) and j - i < 2 and sentence[j].text.casefold() in _CONNECTORS:
        j += 1
        if j < len(sentence) and sentence[j].gap != " ":
            return False
    if j >= len(sentence):
        return False
    return _is_capitalised(sentence[j].text) and not _is_common(sentence[j].text)


def _keep_group(group: list[_Tok], caps_mid: set[str]) -> bool:
    """Reject sentence-initial single words unless they look like names."""
    first = group[0]
    if not first.initial or len(group) > 1:
        return True
    word = _POSSESSIVE.sub("", first.text)
    # Anything else at a sentence start ("Painting looks great", "Life's tough",
    # "Remember, ...") is too ambiguous without a lexicon; a real name will
    # usually recur mid-sentence in the same text.
    return is_acronym(word, plural=True) or word in caps_mid


def _name_category(group: list[_Tok]) -> str | None:
    """The category the words of the name itself give: "Dr. Lee", "Acme Health", "Lake Tahoe"."""
    lows = [_lower(_POSSESSIVE.sub("", t.text)) for t in group]
    if lows[0] in HONORIFICS:
        return "person"
    if any(low in ORG_CUES for low in lows[1:]) or (len(lows) > 1 and lows[0] in ORG_HEADS):
        return "organization"
    if any(low in HOLIDAYS for low in lows) or (len(lows) == 1 and lows[0] in NATIONALITIES):
        return "other"
    if any(low in PLACE_CUES for low in lows[1:]) or (len(lows) > 1 and lows[0] in PLACE_HEADS):
        return "place"
    return None


def _typed(
    text: str, group: list[_Tok], before: list[_Tok], nxt: _Tok | None, span: tuple[int, int]
) -> tuple[str, str]:
    """Category and cue of a name group (see `named_entities` for the order of the rules)."""
    context = type_by_context(text, *span)
    if context is not None and context[0] == "animal":
        return context
    named = _name_category(group)
    if named is not None:
        return named, "name-word"
    if context is not None:
        return context
    category = _categorise(group, before, nxt)
    return category, "" if category == "person" else "form"


def _categorise(group: list[_Tok], before: list[_Tok], nxt: _Tok | None) -> str:
    """Category of a name group from its form and the word before it.

    ``before`` are the sentence's tokens preceding the group, ``nxt`` the one after it.
    """
    # Look through articles for the preposition: "to the U.S." -> "to"; it must
    # be separated from the name by whitespace only.
    k = len(before)
    while k > 0 and before[k - 1].text.casefold() in {"the", "a", "an"}:
        k -= 1
    adjacent = all(t.gap.isspace() for t in [*before[k:], group[0]])
    prev = before[k - 1] if k > 0 and adjacent else None
    prev2 = before[k - 2] if k > 1 else None
    possessive = _POSSESSIVE.search(group[-1].text) is not None
    # "to a LGBTQ support group": after an article, a name followed by a plain
    # lower-case word modifies that noun, and the noun is the place.
    modifier = (
        k < len(before)
        and nxt is not None
        and nxt.gap == " "
        and not _is_capitalised(nxt.text)
        and not _is_common(nxt.text)
    )
    if prev is not None and not possessive and not modifier:
        p = prev.text.casefold()
        person_prep = (
            p in {"to", "from", "at"}
            and prev2 is not None
            and _lower(prev2.text) in PERSON_BEFORE_PREP
        )
        if p in PLACE_PREPS and not person_prep:
            return "place"
    if (
        len(group) == 1
        and re.search(r"[a-z][A-Z]", group[0].text)
        and not _NAME_PREFIX.match(group[0].text)
    ):
        return "organization"  # CamelCase brands: "YouTube", "TikTok" (not "McGee")
    # Initials inside a longer name ("J.K. Rowling") are not acronyms.
    initials = len(group) > 1 and all(_INITIALS.fullmatch(t.text) for t in group[:-1])
    if not initials and any(
        is_acronym(t.text, plural=True) or any(c.isdigit() for c in t.text) for t in group
    ):
        return "other"
    if _lower(group[0].text) == "the" or len(group) > 3:
        return "other"
    return "person"


def named_entities(text: str) -> list[Entity]:
    """Find entity mentions in ``text`` with capitalisation and cue-word heuristics.

    Contract:
        * quoted title-cased phrases are "title" entities (span inside the quotes);
        * runs of capitalised words (with inner "of"/"the"/"de" connectors, and
          honorifics such as "Dr.") are candidates; the pronoun "I",
          interjections, stopwords, month and day names are never entities; a
          sentence-initial single word is kept only if it is an acronym, also
          appears capitalised mid-sentence in the same text, or is a
          possessive followed by a content word ("Mel's dog");
        * category, first rule that applies: an animal cue around the name
          ("my dog X", "X barked", `labile_text.entity_types`) -> "animal";
          an honorific -> "person"; organisation cue words in the name
          (University, Club, Inc, Health, Labs, ...) -> "organization"; place
          cue words (Lake, Street, ...) -> "place"; a work relation before it
          ("works at X") -> "organization", a home or travel verb ("lives in
          X") -> "place", an article or purchase ("a X", "bought X") ->
          "other"; a preceding "in/to/from/at/near/visited" -> "place" (but
          "talked to X" -> person); single CamelCase words ("YouTube") ->
          "organization"; acronyms, holidays, numbers, "The ..." or more than
          three words -> "other"; remaining names -> "person" (a guess,
          ``cue == ""``); a mention that is only a guess takes the type of a
          mention of the same name with evidence in the same text;
        * mentions are returned in text order, one per occurrence; a trailing
          possessive "'s" is excluded from ``name`` and ``span``, so
          ``text[span[0]:span[1]] == name`` always holds.

    Args:
        text: Arbitrary text.

    Returns:
        The entity mentions.
    """
    titles = _titles(text)
    sentences = _tokens(text)
    caps_mid = {
        _POSSESSIVE.sub("", t.text)
        for sentence in sentences
        for t in sentence
        if not t.initial and _is_capitalised(t.text)
    }
    found: list[Entity] = list(titles)
    for sentence in sentences:
        for group in _name_groups(sentence, caps_mid):
            start, end = group[0].start, group[-1].end
            possessive = _POSSESSIVE.search(group[-1].text)
            if possessive is not None:
                end -= len(possessive.group(0))
            if any(s < end and start < e for s, e in (t.span for t in titles)):
                continue
            idx = sentence.index(group[-1]) + 1
            nxt = sentence[idx] if idx < len(sentence) else None
            category, cue = _typed(
                text, group, sentence[: sentence.index(group[0])], nxt, (start, end)
            )
            found.append(Entity(text[start:end], category, (start, end), cue))
    found.sort(key=lambda ent: ent.span)
    return _share_evidence(found)


def _share_evidence(found: list[Entity]) -> list[Entity]:
    """Type every mention of a name as its first mention with evidence in the same text.

    "Yesterday Mochi knocked my mug over, Mochi is a cat": the second mention
    says what both are.
    """
    evidence: dict[str, Entity] = {}
    for ent in found:
        if ent.cue not in GUESS_CUES and ent.category != "title":
            evidence.setdefault(normalize_name(ent.name), ent)
    if not evidence:
        return found
    out: list[Entity] = []
    for ent in found:
        best = evidence.get(normalize_name(ent.name)) if ent.cue in GUESS_CUES else None
        out.append(attrs.evolve(ent, category=best.category, cue=best.cue) if best else ent)
    return out


_ARTICLE = re.compile(r"^(?:(?:the|a|an)\s+)+")


def normalize_name(name: str) -> str:
    """Normalise an entity name for alias matching.

    Casefolds, drops a trailing possessive ("'s" or a bare "'"), deletes
    apostrophes and periods ("U.S." -> "us"), turns other punctuation into
    spaces, collapses whitespace and strips a leading article: "The Beatles'"
    and "beatles" both give "beatles".

    Args:
        name: A surface form.

    Returns:
        The normalised key (possibly empty).
    """
    s = name.casefold().strip()
    s = re.sub(r"['’]s?\s*$", "", s)
    s = re.sub(r"['’.]", "", s)
    s = re.sub(r"[\W_]+", " ", s).strip()
    return _ARTICLE.sub("", s)


#: Titles that name a role, not a family: "Dr. Lee" and "Lee" are one person, while
#: "Mr. Lee" and "Mrs. Lee" are not, so only these are dropped for the short form.
_ROLE_TITLES = frozenset({"dr", "doctor", "prof", "professor", "coach", "captain", "aunt",
                          "uncle", "nurse", "officer"})


def name_keys(name: str) -> tuple[str, ...]:
    """The keys under which a name is the same referent: its normal form, then short forms.

    "Dr. Lee" gives ``("dr lee", "lee")``; "Biscuit's" gives ``("biscuit",)``.
    A role title ("Dr.", "Prof.", "Coach") is dropped for the short form; a
    family title ("Mr.", "Mrs.") is not, since it tells two people apart.

    Args:
        name: A surface form.

    Returns:
        One or two keys, the full one first (none for an empty name).
    """
    key = normalize_name(name)
    if not key:
        return ()
    first, _, rest = key.partition(" ")
    if first in _ROLE_TITLES and rest:
        return (key, rest)
    return (key,)


def is_filler(text: str) -> bool:
    """Tell whether a turn is pure small talk with nothing worth remembering.

    True for greetings, thanks, farewells, acknowledgements, interjections,
    stock compliments and emoji/punctuation-only or empty text ("Hey Mel!",
    "Thanks so much!", "Wow, that's great!", "See you later!"), including such
    phrases addressed to someone by name. False as soon as the text has a digit
    or any other content word ("Thanks! I went to Paris yesterday.").

    Args:
        text: One turn or sentence.

    Returns:
        Whether the text is content-free.
    """
    if any(ch.isdigit() for ch in text):
        return False
    for sentence in _tokens(text):
        for idx, tok in enumerate(sentence):
            low = _lower(tok.text)
            if (
                is_stopword(tok.text)
                or low in FILLER_VOCAB
                or len(low) <= 1
                or _INTERJECTION.fullmatch(low) is not None
            ):
                continue
            if _is_capitalised(tok.text) and _addresses_someone(text, sentence, idx):
                continue
            return False
    return True


def _addresses_someone(text: str, sentence: list[_Tok], idx: int) -> bool:
    """A capitalised token addressing someone: "Hey Mel!", "Thanks, Mel!", "Mel, hi".

    `labile_text.names.is_vocative` judges a name's span against the text
    before it; small talk is judged token by token within a sentence, so the
    opening rules here read the tokens instead: the sentence's first word, a
    comma anywhere before the token, a greeting just before it, or the
    previous word of the same name ("Hey Mary Ann!").
    """
    # The name may continue with more capitalised words ("Hey Mary Ann!").
    last = idx
    while (
        last + 1 < len(sentence)
        and _is_capitalised(sentence[last + 1].text)
        and sentence[last + 1].gap == " "
    ):
        last += 1
    if not ends_clause(text, sentence[last].end):
        return False  # the name is followed by more words: it is the subject/object
    if idx == 0:
        return True
    tok, prev = sentence[idx], sentence[idx - 1]
    return (
        "," in tok.gap
        or _lower(prev.text) in GREETING_BEFORE_NAME
        or (_is_capitalised(prev.text) and tok.gap == " " and not _is_common(prev.text))
    )
