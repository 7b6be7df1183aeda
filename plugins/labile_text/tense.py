"""Which way a clause looks in time: forward (a plan), back (a report) or undecided.

A bare "in May", "on Friday" or "August 11" names a different day depending on
the clause around it: "I start on April 7" said in February is the coming
April, "I started on April 7" the last one. :class:`TenseReader` reads the
grammatical cues of English that decide it:

* **forward**: the future (``will``, ``shall``, ``'ll``, ``gonna``, ``going to``),
  intention and arrangement (``plan to``, ``hope to``, ``want to``, ``thinking
  about``, ``can't wait``, ``looking forward``, ``scheduled``, ``booked``,
  ``due``, ``signed up``), the present simple of a timetable ("I start on
  April 7", "the course begins in May"), obligation and possibility (``have to``, ``need to``,
  ``should``, ``might``), purpose ("training for", "saving up for"), the
  present progressive ("I'm moving", "we're flying") and ``next`` / ``soon`` /
  ``upcoming``;
* **back**: the simple past (``was``, ``went``, ``-ed`` forms of a verb), the
  present perfect ("have seen", "'ve been to"), ``used to``, ``ago``, ``last``,
  ``yesterday``, ``back in``;
* **undecided**: a plan reported in the past ("was going to", "had planned"),
  which may since have happened, been cancelled or still lie ahead, and a
  clause with no cue at all ("Japan in October!", "the wedding is in June",
  which is a schedule or a caption of an old photo).

The cues are read in the clause that holds the time phrase (a sentence is cut
at ``;``, dashes and at ``but`` / ``because`` / ``and I`` …, so "I moved in
March and I'll start in April" reads each half on its own); when a clause has
cues both ways the one nearest the phrase decides, because the verb that
governs a time phrase is usually the one beside it ("Yesterday I booked the
flight for October" looks forward). A clause without a cue borrows its
sentence's reading.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Literal

import attrs

__all__ = ["BOTH", "FUTURE", "PAST", "Direction", "TenseReader"]

Direction = Literal["future", "past", "both"]
FUTURE: Direction = "future"
PAST: Direction = "past"
BOTH: Direction = "both"

# -ing words that are adjectives or nouns, not a progressive verb ("is amazing in May").
_NOT_PROGRESSIVE = (
    "amazing|interesting|exciting|boring|annoying|relaxing|stunning|inspiring|charming|"
    "refreshing|surprising|fascinating|challenging|rewarding|overwhelming|exhausting|tiring|"
    "thrilling|satisfying|frustrating|disappointing|encouraging|touching|heartwarming|"
    "calming|soothing|worrying|confusing|depressing|embarrassing|terrifying|frightening|"
    "breathtaking|entertaining|promising|outstanding|nothing|something|anything|"
    "everything|thing|king|ring|spring|morning|evening|wedding|building|meeting|during|"
    "ceiling|darling|sibling|pudding|clothing|painting|drawing|booking|ending|beginning"
)
_ADVERB = (
    r"(?:(?:also|still|just|finally|actually|really|probably|definitely|now|all|both|not)\s+)?"
)
_IRREGULAR_PAST = (
    # "got" after "have" is having ("I've got a match on Saturday"), not a past event
    r"was|were|did|had|went|came|(?<!'ve\s)(?<!\bhave\s)(?<!'s\s)(?<!\bhas\s)got|made|"
    "took|saw|said|told|found|gave|left|felt|met|bought|"
    "brought|ran|won|lost|thought|knew|began|wrote|ate|drank|drove|flew|swam|sang|sat|"
    "stood|spent|sent|kept|slept|taught|caught|fought|built|heard|held|paid|read|rode|"
    "wore|broke|chose|forgot|grew|hid|hit|hurt|became|threw|woke|fell|spoke|stole|shook"
)
_PARTICIPLE = (
    # not "got": "I've got a match on Saturday" is having, not a past event
    r"(?:been(?!\s+\w+ing\b)|done|gone|seen|had|made|taken|given|known|met|gotten|"
    r"found|left|felt|bought|brought|won|lost|thought|begun|written|eaten|driven|flown|"
    r"spent|sent|kept|heard|paid|read|become|grown|chosen|forgotten|broken|spoken|"
    r"[a-z]+ed)\b"
)

#: Cues that point the clause forward.
_FUTURE = re.compile(
    r"\b(?:will|shall|gonna|wanna|going\s+to|plan(?:s|ning)?\s+(?:to|on)|"
    r"hop(?:e|es|ing)\s+to|intend(?:s|ing)?\s+to|aim(?:s|ing)?\s+to|want(?:s|ing)?\s+to|"
    r"would\s+like\s+to|about\s+to|looking\s+forward|can'?t\s+wait|cannot\s+wait|"
    r"upcoming|coming\s+up|soon|scheduled|booked|reserved|due(?!\s+to\b)|"
    r"(?:think|thinking)\s+(?:about|of)|consider(?:s|ing)?|"
    r"sign(?:ed|ing)?\s+up|register(?:ed|ing)?\s+for|"
    r"start(?:s|ing)?\s+(?:on|in)|begin(?:s|ning)?\s+(?:on|in)|starting|beginning(?!\s+of\b)|"
    # the present simple of a timetable ("the course starts", "I fly out on May 3")
    r"(?:starts|begins|leaves|flies|arrives|returns|departs|graduates|moves|opens|closes|"
    r"ends|finishes|launches|lands|kicks\s+off)|"
    r"(?:i|we|you|they)\s+(?:also\s+|then\s+|finally\s+|\w+ly\s+)?(?:start|begin|leave|fly|"
    r"arrive|return|depart|graduate|move|finish|launch|land|kick\s+off)|"
    r"(?:have|has|need|needs)\s+to|must|should|might|(?-i:may)(?=\s+[a-z])|"
    r"(?:training|preparing|practi[cs]ing|studying|saving(?:\s+up)?|getting\s+ready|"
    r"gearing\s+up|packing|waiting)\s+for|"
    r"excited\s+(?:for|about)|next(?!\s+to\b)|tomorrow|let'?s|"
    r"(?:am|are|is|'m|'re|'s)\s+" + _ADVERB + r"(?!(?:" + _NOT_PROGRESSIVE + r")\b)[a-z]+ing)\b"
    r"|'ll\b",
    re.IGNORECASE,
)

#: Cues that point the clause back.
_PAST = re.compile(
    r"\b(?:" + _IRREGULAR_PAST + r"|used\s+to|ago|last|yesterday|back\s+in|previously|"
    r"earlier|(?:have|has|'ve|had)\s+" + _ADVERB + r"(?:(?:ever|never|already|recently)\s+)?"
    + _PARTICIPLE + r")\b",
    re.IGNORECASE,
)
#: A lower-case -ed word: a past-tense verb unless a form of "be" / "get" / "feel" or an
#: intensifier comes before it (then an adjective or a passive: "I'm so excited", "we're
#: booked") or it is one of the words that merely end so ("need", "hundred").
_ED = re.compile(r"\b(?P<before>[A-Za-z']+\s+)?(?P<word>[a-z]{2,}ed)\b")
_ED_NOT_VERB = frozenset({
    "need", "speed", "indeed", "seed", "feed", "weed", "breed", "bleed", "proceed", "succeed",
    "exceed", "hundred", "sacred", "naked", "wicked", "beloved", "kindred", "rugged", "ragged",
    "shed", "sled", "wed",
})
_ED_AFTER = frozenset({
    "am", "is", "are", "'m", "'re", "'s", "be", "been", "being", "get", "gets", "getting",
    "got", "feel", "feels", "felt", "so", "very", "really", "too", "pretty", "quite", "more",
    "most", "fully", "all",
})

#: A plan told in the past: it may have happened, been dropped or still lie ahead.
_PAST_PLAN = re.compile(
    r"\b(?:(?:was|were|had)\s+(?:\w+\s+)?(?:going\s+to|gonna|planning|planned|hoping|"
    r"supposed\s+to|meant\s+to|about\s+to|scheduled|due|thinking)|"
    r"(?:planned|wanted|hoped|intended|meant)\s+to)\b",
    re.IGNORECASE,
)

_SENTENCE_END = re.compile(r"[.!?\n]")
_CLAUSE_BREAK = re.compile(
    r"[;:\u2013\u2014]|\s-\s|,?\s+(?=(?:but|because|although|though|whereas|while|"
    r"and\s+(?:then\s+)?(?:i|we|you|he|she|they|it)|then)\b)",
    re.IGNORECASE,
)


@attrs.frozen
class _Cues:
    """One sentence's cues in text order, with running counts of each direction so that
    which directions a stretch of them holds is two subtractions."""

    starts: list[int]
    ends: list[int]
    directions: list[Direction]
    counts: dict[Direction, list[int]]  # counts[d][i]: cues of direction d among the first i

    @classmethod
    def of(cls, found: list[tuple[int, int, Direction]]) -> _Cues:
        found.sort()
        counts: dict[Direction, list[int]] = {d: [0] for d in (FUTURE, PAST, BOTH)}
        for _, _, direction in found:
            for d, running in counts.items():
                running.append(running[-1] + (d == direction))
        return cls([f[0] for f in found], [f[1] for f in found], [f[2] for f in found],
                   counts)

    def decide(self, lo: int, hi: int, start: int, end: int) -> Direction | None:
        """The direction of the cues ``lo:hi`` for a phrase at ``[start, end)``: one if
        they all agree, else the nearest one's; ``None`` without cues. A plan told in
        the past makes it undecided whatever else the stretch says."""
        count = self.counts
        if count[BOTH][hi] - count[BOTH][lo]:
            return BOTH
        # cues that start inside the phrase are part of it ("next" of "next Friday")
        i = bisect_left(self.starts, start, lo, hi)
        j = bisect_left(self.starts, end, i, hi)
        seen = [d for d in (FUTURE, PAST)
                if count[d][i] - count[d][lo] + count[d][hi] - count[d][j]]
        if len(seen) <= 1:
            return seen[0] if seen else None
        # the nearest cue before the phrase and the nearest after it; the earlier one on a tie
        around = [k for k in (i - 1, j) if lo <= k < hi]
        nearest = min(around, key=lambda k: max(start - self.ends[k], self.starts[k] - end, 0))
        return self.directions[nearest]


@attrs.define
class TenseReader:
    """The direction in time of any span of one text.

    Sentence and clause boundaries are found once, and each sentence's cues
    once, and a phrase's cues are looked up by bisection: asking about every
    time phrase of a long text stays close to linear in its length.
    """

    text: str
    _sentence_ends: list[int] = attrs.field(init=False, factory=list)
    _clause_ends: list[int] = attrs.field(init=False, factory=list)
    _cues: dict[tuple[int, int], _Cues] = attrs.field(init=False, factory=dict)
    _split: bool = attrs.field(init=False, default=False)

    def _split_once(self) -> None:
        """Find the sentence and clause ends on the first question (most texts ask none)."""
        if not self._split:
            self._sentence_ends = [m.end() for m in _SENTENCE_END.finditer(self.text)]
            self._clause_ends = sorted(
                {m.end() for m in _CLAUSE_BREAK.finditer(self.text)} | set(self._sentence_ends)
            )
            self._split = True

    def direction(self, start: int, end: int) -> Direction:
        """Whether the time phrase at ``text[start:end]`` looks forward, back or both ways.

        The cues of its clause (those that start in it) decide; a clause without any
        takes its sentence's; a sentence without any is undecided."""
        self._split_once()
        size = len(self.text)
        cues = self._sentence_cues(_bounds(self._sentence_ends, start, end, size))
        left, stop = _bounds(self._clause_ends, start, end, size)
        lo, hi = bisect_left(cues.starts, left), bisect_left(cues.starts, stop)
        return (cues.decide(lo, hi, start, end) or cues.decide(0, len(cues.starts), start, end)
                or BOTH)

    def _sentence_cues(self, bounds: tuple[int, int]) -> _Cues:
        """The cues of one sentence; a cue that starts inside an earlier one (the "going
        to" of "was going to") is part of it. Marked characters keep this linear in the
        sentence's length, however many cues it has."""
        if bounds not in self._cues:
            left, stop = bounds
            taken = bytearray(stop - left)
            found: list[tuple[int, int, Direction]] = []

            def keep(a: int, b: int, direction: Direction) -> None:
                if not taken[a - left]:
                    taken[a - left:b - left] = b"\x01" * (b - a)
                    found.append((a, b, direction))

            for pattern, direction in ((_PAST_PLAN, BOTH), (_FUTURE, FUTURE), (_PAST, PAST)):
                for m in pattern.finditer(self.text, left, stop):
                    keep(m.start(), m.end(), direction)
            for m in _ED.finditer(self.text, left, stop):
                if _past_verb(m):
                    keep(m.start("word"), m.end(), PAST)
            self._cues[bounds] = _Cues.of(found)
        return self._cues[bounds]


def _past_verb(m: re.Match[str]) -> bool:
    before = (m.group("before") or "").strip().casefold()
    before = "'" + before.rsplit("'", 1)[1] if "'" in before else before
    return m.group("word") not in _ED_NOT_VERB and before not in _ED_AFTER


def _bounds(ends: list[int], start: int, end: int, size: int) -> tuple[int, int]:
    """The segment (between consecutive ``ends``) that holds ``[start, end)``."""
    before = bisect_right(ends, start) - 1
    left = ends[before] if before >= 0 else 0
    after = bisect_right(ends, end)
    stop = ends[after] if after < len(ends) else size
    return left, stop
