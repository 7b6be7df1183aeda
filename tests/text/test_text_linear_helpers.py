"""The bisecting helpers that keep long texts linear agree with the scans they replaced."""

from __future__ import annotations

import re
from datetime import date, timedelta
from random import Random

from hypothesis import given, settings
from hypothesis import strategies as st

from labile_text.keywords import _SpanSet
from labile_text.tense import TenseReader
from labile_text.timeparse import _disjoint, _Found

spans = st.tuples(st.integers(0, 60), st.integers(0, 12)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=300, deadline=None)
@given(st.lists(spans, max_size=20), spans)
def test_span_set_overlap_is_any_overlap(blocked: list[tuple[int, int]],
                                         word: tuple[int, int]) -> None:
    """For any spans and any word: overlapping the merged runs is overlapping one span."""
    s, e = word
    assert _SpanSet(blocked).overlaps(s, e) == any(a < e and s < b for a, b in blocked)


@settings(max_examples=300, deadline=None)
@given(st.lists(spans.filter(lambda t: t[0] < t[1]), max_size=25))
def test_disjoint_keeps_what_the_pairwise_scan_kept(found: list[tuple[int, int]]) -> None:
    """For any candidates: the bisecting choice keeps exactly what the pairwise scan kept."""
    day = date(2023, 5, 8)
    cands: list[_Found] = [(s, e, (day, day + timedelta(days=1), "day"), None) for s, e in found]
    expected: list[_Found] = []
    for cand in cands:
        if all(cand[1] <= s or e <= cand[0] for s, e, *_ in expected):
            expected.append(cand)
    expected.sort(key=lambda f: f[0])
    assert _disjoint(cands, 80) == expected


def _sentence_around(text: str, start: int) -> tuple[int, int]:
    """The quadratic definition: the sentence around ``start``, found by scanning."""
    ends = re.compile(r"[.!?\n]")
    left = max((mm.end() for mm in ends.finditer(text, 0, start)), default=0)
    stop = ends.search(text, start)
    return left, stop.end() if stop else len(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["I", "will", "go", "next", "'ll", "went", "in May", ".",
                                 "!", "?", "\n", " ", "going to", "was", "but", "and I",
                                 "moved", "x", ";", "I'm", "moving"]), max_size=40),
       st.randoms(use_true_random=False))
def test_tense_reader_reads_each_sentence_on_its_own(pieces: list[str], rnd: Random) -> None:
    """For any text: a phrase's direction, asked in any order of one shared reader, is the
    one its sentence gives when read alone (sentences found by bisection, cues cached)."""
    text = " ".join(pieces)
    spans = [(m.start(), m.end()) for m in re.finditer("May", text)]
    rnd.shuffle(spans)
    shared = TenseReader(text)
    for start, end in spans:
        left, stop = _sentence_around(text, start)
        alone = TenseReader(text[left:stop]).direction(start - left, end - left)
        assert shared.direction(start, end) == alone
