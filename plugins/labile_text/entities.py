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

from labile.text.tokenize import STOPWORDS, is_stopword, wordset
from labile_text.dates import MONTH_NUMBERS, WEEKDAY_NUMBERS
from labile_text.names import ends_clause, is_acronym
from labile_text.sentences import split_sentences

__all__ = ["CATEGORIES", "Entity", "is_filler", "named_entities", "normalize_name"]


CATEGORIES: frozenset[str] = frozenset({"person", "place", "organization", "title", "other"})


def _check_category(_inst: object, _attr: object, value: str) -> None:
    if value not in CATEGORIES:
        raise ValueError(f"unknown entity category {value!r}")


@attrs.frozen
class Entity:
    """One entity mention.

    Attributes:
        name: The surface form, verbatim from the text (possessive "'s" excluded).
        category: One of "person", "place", "organization", "title", "other".
        span: ``(start, end)`` such that ``text[start:end] == name``.
    """

    name: str
    category: str = attrs.field(validator=_check_category)
    span: tuple[int, int]


# A word with optional internal apostrophes, hyphens, periods or ampersands
# ("Charlotte's", "Jean-Luc", "U.S", "AT&T").
_WORD = re.compile(r"[^\W_]+(?:['’.\-&][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_QUOTED = re.compile(r"\"([^\"\n]{1,120})\"|“([^”\n]{1,120})”")

_MONTHS = frozenset(MONTH_NUMBERS)
_DAYS = frozenset(WEEKDAY_NUMBERS) | {"weekend"}
# Nationality and language adjectives are capitalised but are not names of people.
_NATIONALITIES = wordset(
    """
    american english british spanish german french italian chinese japanese korean
    european african asian canadian mexican indian russian portuguese greek dutch swedish
    irish scottish australian latin arabic brazilian turkish polish thai vietnamese
    """
)
_HOLIDAYS = wordset(
    "christmas easter thanksgiving halloween hanukkah passover ramadan diwali xmas"
)
# Words often capitalised at the start of a chat sentence (or shouted) that are
# never names on their own: interjections, discourse markers, time adverbs,
# quantifiers, kinship terms and chat abbreviations.
_COMMON = wordset(
    """
    hey hi hello hiya howdy yo wow whoa oh ooh ah aw aww haha hahaha lol lmao omg yay
    yeah yep yup yes no nope ok okay alright sure thanks thank thx please sorry well hmm
    um uh ugh btw tbh idk imo fyi diy tv congrats congratulations cheers bye goodbye
    good great nice cool awesome amazing wonderful fantastic sounds glad love hope
    yesterday today tomorrow tonight now then later soon recently lately sometimes
    also anyway anyways besides plus still finally first second last next maybe
    perhaps honestly actually luckily unfortunately sadly hopefully definitely
    totally really just even though although however since after before once
    everyone everybody someone somebody anyone anybody nobody everything something
    anything nothing mom dad mum mommy daddy grandma grandpa granny sis bro sir madam
    dear guys man dude girl buddy pal folks wish keep take see let lets check look
    what whats where wheres who whos how hows why when which there theres here heres
    one two three four five six seven eight nine ten oops whoops gosh geez jeez damn
    dang wait huh yikes ouch phew meh welp mhm ha mine yours ours theirs every many
    """
)
# Laughter and drawn-out interjections: "Hahaha", "Awww", "Hmmm", "Lool".
_INTERJECTION = re.compile(
    r"h?(?:ha|he|hi){2,}h?|lo+l|a+w+|o+h+|h+m+|u+m+|u+g+h+|y+a+y+|w+o+w+|o+m+g+"
)
_INITIALS = re.compile(r"(?:[A-Z]\.)*[A-Z]|[A-Z][a-z]*")
_NAME_PREFIX = re.compile(r"(?:Mc|Mac|Le|La|De|Di|Da|Du|Van|Von|O)[A-Z][a-z]")
_CONNECTORS = frozenset({"of", "the", "de", "del", "da", "di", "du", "van", "von", "for", "&"})
_HONORIFICS = wordset(
    "mr mrs ms miss dr prof professor aunt uncle sir lady lord saint captain coach"
)
_ORG_CUES = wordset(
    """
    inc corp corporation co ltd llc university college school academy institute center
    centre group club church company foundation agency association society council
    committee department hospital clinic bank band team league union network studio
    studios press records labs magazine museum library charity shelter
    """
)
_ORG_HEADS = frozenset({"university", "college", "bank", "church", "school", "academy"})
_PLACE_CUES = wordset(
    """
    city town village street st avenue ave road rd boulevard park lake river mountain
    mountains mount mt beach island islands valley canyon county state province falls bay
    coast forest desert ocean sea hill hills square bridge airport station harbor harbour
    peninsula gulf national republic kingdom
    """
)
_PLACE_HEADS = frozenset({"mount", "mt", "lake", "lago", "isle", "cape", "fort", "port"})
# Prepositions and verbs that introduce a place: "in Paris", "visited Rome".
_PLACE_PREPS = wordset(
    "in to from at near around across towards toward through via into visit visited visiting visits"
)
# Words after which "to X"/"from X"/"at X" names a person: "talked to Mel",
# "a card from Mel".
_PERSON_BEFORE_PREP = wordset(
    """
    talk talked talking talks said say says spoke speak speaking speaks gave give giving
    gives sent send sending sends wrote write writing writes listen listened listening
    introduced married reached close next thanks thank according belong belongs belonged
    message messaged text texted letter card gift call called heard hear hearing received
    learned note email present lesson lessons advice shout look looked looking smiled used
    goodbye bye hello hi
    """
)


def _lower(token: str) -> str:
    return token.replace("'", "").replace("’", "").casefold()


def _is_capitalised(token: str) -> bool:
    return token[:1].isupper()


def _is_common(token: str) -> bool:
    """Stopwords, chat interjections, month/day names and the pronoun "I"."""
    low = _lower(_POSSESSIVE.sub("", token))
    return (
        is_stopword(token)
        or low in _COMMON
        or low in _MONTHS
        or low in _DAYS
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
        found.append(Entity(stripped, "title", (start, start + len(stripped))))
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
            _lower(tok.text) in _HONORIFICS
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


def _categorise(group: list[_Tok], before: list[_Tok], nxt: _Tok | None) -> str:
    """Category of a name group.

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
    lows = [_lower(_POSSESSIVE.sub("", t.text)) for t in group]
    if lows[0] in _HONORIFICS:
        return "person"
    if any(low in _ORG_CUES for low in lows[1:]) or (len(lows) > 1 and lows[0] in _ORG_HEADS):
        return "organization"
    if any(low in _HOLIDAYS for low in lows) or (len(lows) == 1 and lows[0] in _NATIONALITIES):
        return "other"
    if any(low in _PLACE_CUES for low in lows[1:]) or (len(lows) > 1 and lows[0] in _PLACE_HEADS):
        return "place"
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
            and _lower(prev2.text) in _PERSON_BEFORE_PREP
        )
        if p in _PLACE_PREPS and not person_prep:
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
    if lows[0] == "the" or len(group) > 3:
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
        * category: organisation cue words (University, Club, Inc, ...) ->
          "organization"; place cue words (Lake, Street, ...) or a preceding
          "in/to/from/at/near/visited" -> "place" (but "talked to X" -> person);
          single CamelCase words ("YouTube") -> "organization"; acronyms,
          holidays, numbers, "The ..." or more than three words -> "other";
          remaining names -> "person";
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
            category = _categorise(group, sentence[: sentence.index(group[0])], nxt)
            found.append(Entity(text[start:end], category, (start, end)))
    found.sort(key=lambda ent: ent.span)
    return found


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


# Vocabulary of small talk: greetings, thanks, farewells, acknowledgements,
# interjections and stock compliments. A turn made only of these (plus stopwords
# and the name of the person addressed) carries no memorable information.
_FILLER_VOCAB = wordset(
    """
    hey hi hello hiya howdy yo greetings morning afternoon evening night good great nice
    cool awesome amazing wonderful fantastic excellent lovely sweet neat super incredible
    impressive beautiful gorgeous stunning cute adorable perfect brilliant fab fabulous
    wow whoa oh ooh ah aw aww haha hahaha hehe lol lmao omg yay hooray woohoo yeah yep
    yup yes no nope ok okay alright sure right true exactly absolutely definitely totally
    indeed agreed agree thanks thank thx ty appreciate appreciated welcome bye goodbye
    farewell cya later soon see talk catch care take luck cheers congrats congratulations
    sounds sound glad happy hear heard sorry love fun really much lot lots well hmm um uh
    ugh wish best pleasure anytime np problem bet dear friend buddy pal man dude girl
    guys everyone keep day meet wait proud means miss excited interesting inspiring hope
    going new anything thing things stuff also truly get got kind hug hugs xoxo long time
    ages em nah
    """
)
_GREETING_BEFORE_NAME = wordset(
    "hey hi hello hiya thanks thank bye goodbye congrats congratulations dear yo morning night"
)


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
                or low in _FILLER_VOCAB
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
        or _lower(prev.text) in _GREETING_BEFORE_NAME
        or (_is_capitalised(prev.text) and tok.gap == " " and not _is_common(prev.text))
    )
