"""Reading statements of a value that holds one at a time, and deciding when one replaces another.

A person lives in one place, works at one job, eats one diet, is in one
relationship state, drinks so many cups a day; a plan has one date and is on
or off. When a later statement gives a different value of the same thing, the
earlier one stops being true (it becomes history). This module reads such
statements from plain English, offline:

* a **slot** is (subject, attribute class, key): the class says what kind of
  value the sentence states (``home``, ``work``, ``role``, ``diet``,
  ``relationship``, ``amount``, ``pet``, ``plan``); the key narrows classes
  that hold one value *per thing* (cups *of coffee*, the number of *cats*, the
  *Japan trip*);
* the **value** is the set of content stems the sentence adds beyond the words
  that name the class: two statements of one slot whose values each carry
  something the other lacks give different values;
* a **cue of change** ("now", "moved", "switched", "no longer", "anymore",
  "instead", "cancelled", "these days" …) says the speaker reports a change.

`replaces` decides: in a class that holds one value by its nature (home,
work, role, diet, relationship) a different value replaces the older one; in
the others (amounts, pets, plans), where two statements can be about two
things, the newer must also carry a cue of change or be close in meaning
(embedding similarity). A cancellation or a new date of a plan replaces the
plan it names.

Only first-person statements of the speaker are read (the subject is the
speaker); statements about the past ("I used to live in …", "I grew up in
…") describe history, never a current value, and give no slot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

import attrs

from labile.text.tokenize import content_words, stem
from labile_realm.retrieve.topic import OCCUPATIONS, PETS
from labile_text.sentences import split_sentences

__all__ = ["CLASSES", "SlotStatement", "read_slots", "replaces", "reports_change"]

#: Classes that hold one value by their nature: a different value replaces the old one.
STRICT_CLASSES: Final = frozenset({"home", "work", "role", "diet", "relationship"})
#: Every class this module reads.
CLASSES: Final = STRICT_CLASSES | {"amount", "pet", "plan"}

_I: Final = r"(?:I|we|We)"
_BE: Final = r"(?:['’]m|['’]re| am| are)"
#: "I", "we", "I'm", "we've", "I really", "we are": a first-person subject and one word.
_SUBJ: Final = rf"{_I}(?:['’](?:re|m|ve|ll|d)|\s+\w+)?"
_NUM: Final = (r"(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
               r"twelve|fifteen|twenty|a couple(?: of)?|a few|several|half a|a single|a|an)")
_PET: Final = rf"(?:{PETS})"

#: Where an utterance starts, before its first content word ("Yep, still …").
_UTTERANCE_START: Final = (r"^\W*(?:(?:yes|yep|yeah|yup|well|so|and|but|ok|okay|still|now|"
                           r"currently|just)\W+)*")
_A_JOB_AT: Final = (rf"(?:still\s+|now\s+)?(?:a|an)\s+(?:\w+\s+){{0,2}}?(?:{OCCUPATIONS})\s+"
                    r"(?:at|for|with|in)\b")
#: A job and where it is held: "I'm a nurse at Mass General", or, as chat answers say
#: it, without a subject ("Yep, still a data analyst at Lakeshore Bank"): the speaker's.
_JOB_AT: Final = rf"(?:\b{_I}{_BE}\s+|{_UTTERANCE_START}){_A_JOB_AT}"
_SUBJECTLESS_JOB: Final = re.compile(_UTTERANCE_START + _A_JOB_AT, re.IGNORECASE)
#: A home said the same way: "working from home in East Legon", "still living in Leeds"
#: ("Living in Paris was amazing" talks about living there, it does not say one does).
_SUBJECTLESS_HOME: Final = re.compile(
    _UTTERANCE_START + r"(?:living|working\s+from\s+home)\s+in\s+"
    r"(?=(?-i:[A-Z])[\w'’-]*(?:\s+(?-i:[A-Z])[\w'’-]*)*\s*"
    r"(?:$|[.,!;)]|\s+(?:now|still|with|and|for|since|these)\b))",
    re.IGNORECASE)

#: How many we are (a team, a household): "we're 9 people now", "we're at 7", "we're 7
#: again". Its slot's key is ``people``.
_GROUP_SIZE: Final = re.compile(
    r"\bwe['’]re\s+(?:now\s+|at\s+|down\s+to\s+|up\s+to\s+|back\s+to\s+)?"
    r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty)\b"
    r"(?=\s*(?:people|persons|of\s+us|now|again|total|in\s+total|btw|[.,!;]|$))",
    re.IGNORECASE)

#: (class, pattern). A sentence may state several classes; each gives a slot.
_CLASS_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (cls, re.compile(p, re.IGNORECASE)) for cls, p in (
        ("home", rf"\b{_SUBJ}\s+(?:live|living|moved|moving|relocat\w+|settled|"
                 r"settling|rent(?:ing)?|bought a (?:house|place|flat|condo|home))"
                 r"(?:\s+\w+){0,2}\s+(?:in|to|into|near|outside)\b"),
        ("home", rf"\b{_I}{_BE}\s+(?:now\s+|finally\s+|officially\s+|all\s+|back\s+)?"
                 r"(?:in|based in|living in)\s+(?=(?-i:[A-Z]))"),
        ("home", r"\b(?:my|our)\s+(?:new\s+)?(?:place|apartment|flat|house|home|condo|"
                 r"neighbou?rhood)\s+(?:in|near)\s+(?=(?-i:[A-Z]))"),
        ("home", _SUBJECTLESS_HOME.pattern),
        ("work", _JOB_AT),
        ("work", rf"\b{_SUBJ}\s+(?:work|working|started|starting|start)\s+"
                 r"(?:as|at|for|with)\b"),
        ("work", r"\b(?:my|a|the)\s+(?:new\s+)?(?:job|employer|company|firm)\b"
                 r"(?:\s+\w+){0,3}\s+(?:at|with|is|as)\b"),
        ("work", rf"\b{_SUBJ}\s+(?:quit|left|got hired|was hired|got laid off|"
                 r"was laid off|resigned from|accepted an offer)\s+(?:(?:my|the|a|an)\s+)?"
                 r"(?:(?:new|old)\s+)?(?:job|position|company|firm|at|as|by)\b"),
        ("work", rf"\b{_SUBJ}\s+joined\s+(?:\w+\s+){{0,3}}?(?:as|company|firm|"
                 r"startup|practice|hospital|clinic|school|agency|team at)\b"),
        ("role", r"\b(?:promoted|my\s+(?:new\s+)?(?:title|role|position)\b)"),
        ("role", rf"\b{_I}{_BE}\s+now\s+(?:a|an|the)\s+\w+"),
        ("diet", r"\b(?:vegetarian|vegan|pescatarian|keto|paleo|gluten[- ]free|dairy[- ]free|"
                 r"plant[- ]based|flexitarian|carnivore|(?:my|a|new)\s+diet|"
                 r"(?:stopped|quit|gave up|started|back to|cut out)\s+(?:eating\s+)?"
                 r"(?:meat|fish|dairy|sugar|carbs|gluten))\b"),
        ("relationship", rf"\b{_I}{_BE}?\s*(?:(?:now|officially|finally|still)\s+)?"
                         r"(?:single|dating|married|engaged|divorced|separated|"
                         r"got (?:married|engaged|divorced|together)|broke up|split up|"
                         r"seeing someone|in a relationship)\b"),
        ("amount", rf"\b{_NUM}\s+(?:cups?|mugs?|glasses|bottles|shots|drinks|beers|"
                   r"cigarettes|times|days|nights|hours|miles|kilometers|km|laps|sessions|"
                   r"classes|servings|pounds|kilos|kg|books|episodes)\b"
                   r"(?:\s+of\s+\w+)?(?:\s+(?:a|an|per|each|every)\s+\w+)?"),
        ("amount", r"\b(?:once|twice|daily|weekly|every (?:day|morning|night|week|weekend))\b"),
        ("amount", _GROUP_SIZE.pattern),
        ("pet", rf"\b(?:{_NUM}\s+(?:\w+\s+)?{_PET}|{_PET}\s+(?:named|called)\s+\w+|"
                rf"(?:adopted|got|have|has|lost)\s+(?:a|an|another|our|my)\s+(?:new\s+)?{_PET})"),
        ("plan", r"\b(?:cancel(?:l?ed|l?ing)?|called off|call(?:ing)? off|postponed?|"
                 r"pushed (?:it |that )?back|rescheduled?|fell through|"
                 r"(?:not|no longer|won['’]t be) (?:going|doing|happening))\b"),
        ("plan", rf"\b{_I}{_BE}?\s*(?:going to|gonna|planning (?:to|on)|booked|"
                 r"will be|['’]ll be|signed up for|registered for)\b"),
        ("plan", r"\b(?:our|my|the)\s+(?:\w+\s+)?(?:trip|wedding|move|visit|vacation|holiday|"
                 r"party|surgery|appointment|interview|race|marathon|concert)\b"
                 r"(?:\s+\w+){0,3}\s+(?:is|was|got)\s+(?:now\s+)?(?:on|in|set for|moved)\b"),
    )
)
#: Words that announce a change of value.
_CHANGE_CUE: Final = re.compile(
    r"\b(?:now|nowadays|these days|anymore|any more|no longer|moved|moving|switched|"
    r"switching|changed|instead|new|started|quit|stopped|gave up|down to|up to|cut (?:down|"
    r"back)|became|turned|officially|finally|cancel\w*|called off|postponed|pushed back|"
    r"rescheduled?|fell through|since then|left|broke up|split up|adopted|another|nope|"
    r"not any ?more|deferr\w*|pushing (?:it|that|the \w+)|outgrew|sold|dropped|upped|"
    r"more like|done with|backed out|no more|separat\w+|except now|again)\b",
    re.IGNORECASE,
)
#: The cues of `_CHANGE_CUE` that say a value *ended* or was replaced, for a change told
#: without a slot statement (`reports_change`). The others ("now", "new", "another",
#: "finally", "started") are as common in any friendly chat ("now you're helping others",
#: "I'd love to see another painting"): on LoCoMo's conv-26 they made 24 of 25 such
#: replacements, 1 of the 19 sampled right. "down to" / "up to" count before an amount only
#: ("down to one cup", not "waking up to the birds").
_ENDED_CUE: Final = re.compile(
    r"\b(?:no longer|anymore|any more|no more|switched|switching|instead|quit|stopped|"
    r"gave up|(?:down|up) to (?:\d|one|two|three|four|five|six|seven|eight|nine|ten|half|"
    r"a |an |just|only|about|around)|cut (?:down|back)|cancel\w*|called off|postponed|"
    r"pushed back|rescheduled?|fell through|broke up|split up|deferr\w*|"
    r"pushing (?:it|that|the \w+)|outgrew|sold|done with|backed out|"
    # moving home, not moving the sink under the window
    r"(?:moved|moving) (?:to|into|in|out|back|away|house|home|here|there|abroad|over)|"
    r"separat\w+|except now|upped|dropped|more like)\b",
    re.IGNORECASE,
)
#: A cancellation, or a plan given a new date.
_CANCEL: Final = re.compile(
    r"\b(?:cancel\w*|called off|call(?:ing)? off|postponed?|pushed (?:it |that )?back|"
    r"rescheduled?|fell through|(?:not|no longer|won['’]t be) (?:going|doing|happening)|"
    r"moved (?:it|that|the \w+) to)\b",
    re.IGNORECASE,
)
#: A sentence about how things were: history, not a current value.
_PAST: Final = re.compile(
    r"\b(?:used to|grew up|back (?:when|in|then)|when I was|years ago|as a kid|"
    r"before (?:I|we)|previously|at the time|moved (?:here |away )?from)\b",
    re.IGNORECASE,
)


_FIRST_PERSON: Final = re.compile(r"\b(?:I|we|We|my|My|our|Our|me|us)\b|\bI['’]")
#: The stems of words that name a class or a change, never part of a value.
_FRAME_STEMS: Final = frozenset(stem(w) for w in (
    "live", "living", "lived", "moved", "moving", "move", "relocate", "settled", "place",
    "apartment", "flat", "house", "home", "work", "working", "worked", "job", "started",
    "start", "starting", "quit", "left", "joined", "hired", "company", "employer", "firm",
    "promoted", "title", "role", "position", "diet", "eating", "eat", "now", "nowadays",
    "days", "anymore", "longer", "switched", "changed", "instead", "new", "stopped", "gave",
    "became", "officially", "finally", "cancelled", "canceled", "cancel", "postponed",
    "pushed", "rescheduled", "going", "planning", "plan", "plans", "booked", "really",
    "actually", "pretty", "love", "like", "great", "good", "still", "just", "since", "based",
    "cup", "cups", "day", "week", "time", "times", "every", "per", "lot", "got", "get",
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "couple", "few", "several", "half", "single", "back", "down", "cut", "things", "thing",
    "yeah", "yes", "well", "oh", "wow", "guess", "think", "know", "feel", "honestly",
    "officially", "happy", "excited", "crazy", "busy", "weird", "sad", "glad",
    # time words date a statement, they are not its value
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "monday", "tuesday", "wednesday", "thursday",
    "friday", "saturday", "sunday", "today", "tonight", "tomorrow", "yesterday", "week",
    "weekend", "month", "year", "last", "next", "ago", "soon", "later", "early", "late",
    "spring", "summer", "fall", "autumn", "winter", "morning", "night", "recently",
))
_NUMBER_WORDS: Final = frozenset((
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "fifteen", "twenty", "a", "an", "couple", "few", "several", "half", "single",
))
#: Where the clause that states a value ends.
_CLAUSE_END: Final = re.compile(
    r"[.,;:!?()]|\s[-–—]\s|\b(?:but|because|since|so|and (?:I|we|it|they)|which|where|"
    r"though|while|when)\b",
    re.IGNORECASE,
)
_PET_WORD: Final = re.compile(_PET, re.IGNORECASE)
_AMOUNT_HEAD: Final = re.compile(
    rf"\b{_NUM}\s+(cups?|mugs?|glasses|bottles|shots|drinks|beers|cigarettes|times|days|"
    r"nights|hours|miles|kilometers|km|laps|sessions|classes|servings|pounds|kilos|kg|books|"
    r"episodes)\b",
    re.IGNORECASE,
)


@attrs.frozen(kw_only=True)
class SlotStatement:
    """One sentence stating the value of a slot.

    Attributes:
        subject: Whose value it is (the speaker).
        cls: The attribute class (see `CLASSES`).
        key: What the value is of, within the class ("coffee", "cat"; "" when the
            class holds one value per subject).
        value: Content stems the sentence carries beyond the class's own words.
        cue: Whether the sentence says that something changed.
        cancels: Whether it calls off or re-dates a plan.
        numbers: The numbers it says ("four", "2"): an amount's value.
        sentence: The sentence as written.
    """

    subject: str
    cls: str
    key: str = ""
    value: frozenset[str] = frozenset()
    cue: bool = False
    cancels: bool = False
    numbers: frozenset[str] = frozenset()
    sentence: str = ""

    @property
    def slot(self) -> str:
        """The slot as one string: ``class`` or ``class:key``."""
        return f"{self.cls}:{self.key}" if self.key else self.cls

    def to_attr(self) -> dict[str, object]:
        """The statement as a JSON-able mapping (kept on the node, read back by `from_attr`)."""
        return {"subject": self.subject, "cls": self.cls, "key": self.key,
                "value": sorted(self.value), "cue": self.cue, "cancels": self.cancels,
                "numbers": sorted(self.numbers)}

    @classmethod
    def from_attr(cls, raw: object) -> SlotStatement | None:
        """The statement stored by `to_attr`, or ``None`` for anything malformed."""
        if not isinstance(raw, dict):
            return None
        subject, klass, key = raw.get("subject"), raw.get("cls"), raw.get("key", "")
        value, numbers = raw.get("value"), raw.get("numbers", [])
        if not isinstance(subject, str) or klass not in CLASSES or not isinstance(key, str) \
                or not isinstance(value, list) or not isinstance(numbers, list):
            return None
        return cls(subject=subject, cls=str(klass), key=key,
                   value=frozenset(str(v) for v in value), cue=bool(raw.get("cue")),
                   cancels=bool(raw.get("cancels")), numbers=frozenset(str(n) for n in numbers))


def _value_stems(sentence: str, names: Iterable[str]) -> frozenset[str]:
    skip = {stem(w) for n in names for w in content_words(n)}
    return frozenset(s for s in (stem(w) for w in content_words(sentence))
                     if s not in _FRAME_STEMS and s not in skip and not s.isdigit())


def _phrase(text: str, m: re.Match[str], words: int = 8) -> str:
    """The matched words and the rest of their clause (at most ``words`` more words)."""
    rest = text[m.end():]
    cut = _CLAUSE_END.search(rest)
    rest = rest[:cut.start()] if cut else rest
    return f"{m.group(0)} {' '.join(rest.split()[:words])}"


def _key(cls: str, sentence: str) -> str:
    if cls == "pet":
        m = _PET_WORD.search(sentence)
        word = m.group(0).casefold() if m else "pet"
        return {"puppy": "dog", "puppies": "dog", "kitten": "cat", "kittens": "cat",
                "bunny": "rabbit", "bunnies": "rabbit"}.get(word, stem(word))
    if cls == "amount":
        m = _AMOUNT_HEAD.search(sentence)
        if m is None:
            return "people" if _GROUP_SIZE.search(sentence) else "often"
        return stem(m.group(1).casefold())
    return ""


def read_slots(sentences: Iterable[str], subject: str | None,
               names: Iterable[str] = ()) -> list[SlotStatement]:
    """The slot statements of a turn's sentences, at most one per slot.

    Contract: only first-person sentences that are not questions and not about
    the past give statements; ``subject`` is required (a value needs an
    owner); ``names`` (the speakers) are left out of values, because every
    turn names them. Plans are keyed later by their topic (see `replaces`).

    Args:
        sentences: The sentences of one turn.
        subject: The speaker.
        names: Names to leave out of values.

    Returns:
        The statements, in the order their sentences come.
    """
    if not subject:
        return []
    names = [subject, *names]
    out: dict[str, SlotStatement] = {}
    for sentence in sentences:
        text = sentence.strip()
        # a job said without a subject is the speaker's too (read only when no first
        # person is named: most sentences stop at the first test)
        if not text or text.endswith("?") or _PAST.search(text) \
                or not (_FIRST_PERSON.search(text) or _SUBJECTLESS_JOB.search(text)
                        or _SUBJECTLESS_HOME.search(text)):
            continue
        cue = bool(_CHANGE_CUE.search(text))
        for cls, pattern in _CLASS_PATTERNS:
            m = pattern.search(text)
            if m is None:
                continue
            # a plan or a pet is named by its whole sentence (the names of pets follow
            # a comma); a value by the phrase that states it
            said = text if cls in ("plan", "pet") else _phrase(text, m)
            st = SlotStatement(subject=subject, cls=cls, key=_key(cls, text),
                               value=_value_stems(said, names), cue=cue,
                               cancels=cls == "plan" and bool(_CANCEL.search(text)),
                               numbers=_number_words(text), sentence=text)
            if st.value or st.cancels or (cls == "amount" and st.numbers):
                out.setdefault(st.slot, st)
    return list(out.values())


def reports_change(text: str) -> bool:
    """Whether a statement says that something ended or changed ("down to one cup",
    "we outgrew the coworking space", "I deferred Chicago", "switched to day
    shifts"): one of its sentences carries a cue of `_ENDED_CUE` and is neither a
    question ("Have you made any more art?") nor about how things used to be ("I
    used to …", "back when …")."""
    text = text.strip()
    if not text or _PAST.search(text):
        return False
    for start, end in split_sentences(text):
        sentence = text[start:end].strip()
        if _ENDED_CUE.search(sentence) and not sentence.endswith("?"):
            return True
    return False


def _number_words(sentence: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z0-9.]+", sentence.casefold())
                     if w in _NUMBER_WORDS or w.replace(".", "").isdigit())


def replaces(new: SlotStatement, old: SlotStatement, similarity: float,
             *, min_similarity: float = 0.5) -> bool:
    """Whether ``new`` gives a value that replaces ``old``'s (``new`` said later).

    Contract: same subject and slot, else never. In a strict class (one value
    by nature) the values must differ both ways (each carries a stem the
    other lacks: "Somerville" vs "Denver"; "Denver" then "Denver, the
    Highlands" is the same home told more precisely). In the other classes,
    ``new`` must also carry a cue of change or be at least ``min_similarity``
    close to ``old`` (the cosine of the two turns), because two amounts or two
    pets can be about two things. A plan is replaced only by a cancellation or
    a re-dating that shares a topic stem with it (``cancels``).

    Args:
        new: The later statement.
        old: The earlier statement.
        similarity: Cosine of the two statements' turns.
        min_similarity: The closeness that stands in for a cue in the loose classes.
    """
    if new.subject != old.subject or new.cls != old.cls:
        return False
    if new.cls == "plan":
        return new.cancels and not old.cancels and bool(new.value & old.value)
    if new.key != old.key:
        return False
    if new.cls in STRICT_CLASSES:
        return bool(new.value - old.value) and bool(old.value - new.value)
    if not (new.cue or similarity >= min_similarity):
        return False
    if new.cls == "amount":
        return new.numbers != old.numbers or new.value != old.value
    return bool(new.value - old.value) or new.cue
