"""Split segmentation cues and the kinds of evidence the offline rules name."""

from __future__ import annotations

import numpy as np
from test_allmem_relate import PLAN, unit

from labile_allmem.consolidate.relate import profile, revision
from labile_allmem.consolidate.segment import MARKED_STRENGTH, segment, sentence_spans


def _segment(text: str) -> tuple[str, ...]:
    """Segment with orthogonal sentence vectors: no two sentences look alike."""
    spans = sentence_spans(text)
    vectors = np.eye(len(spans), 8, dtype=np.float32)
    return segment(text, spans, vectors, similarity=0.3, min_segment_words=3).segments(text)


def test_an_announced_change_of_topic_starts_a_segment_and_marks_the_split() -> None:
    """'On another note, …' starts a segment even after a sentence it could
    continue, and a split made only of such boundaries is the marked kind."""
    text = ("I finally finished the quarterly report for my manager at work. "
            "On another note, my brother adopted two turtles from the pet store.")
    spans = sentence_spans(text)
    seg = segment(text, spans, np.eye(len(spans), 8, dtype=np.float32), similarity=0.3,
                  min_segment_words=3)
    assert len(seg.spans) == 2 and seg.marked
    assert seg.confidence >= MARKED_STRENGTH


def test_a_sentence_that_adds_to_the_previous_one_stays_with_it() -> None:
    """'I even …', '… too' and a closing pronoun object ('… from it') continue the
    sentence before, however dissimilar their vectors."""
    for text in (
        "I watched that documentary about volcanoes three years ago. "
        "I even bought the physical copy at the store.",
        "I won the regional chess tournament last weekend in Denver. "
        "I still cannot believe how much money I made from it.",
        "The library downtown reopened with a new reading room last month. "
        "Their garden is lovely too.",
    ):
        assert len(_segment(text)) == 1, text


def test_a_teaser_stays_with_the_news_it_announces() -> None:
    """'So much has happened', 'last week was wild', 'since we last talked' say
    that news follows: the next sentence joins them, so a greeting with a
    teaser is not split from the news."""
    for text in (
        "Good to see you again. So much has happened in the last month at work. "
        "Last week I scored forty points in the regional basketball final.",
        "Last week was wild for our whole family. "
        "My brother adopted two turtles from the pet store downtown.",
        "It has been ages since we last talked about anything. "
        "I passed the final nursing exam at the city college yesterday.",
    ):
        assert len(_segment(text)) == 1, text


def test_unrelated_statements_still_split_without_a_marker() -> None:
    """Two unrelated statements with nothing tying them are two segments (unmarked)."""
    text = ("I finally finished the quarterly report for my manager at work. "
            "My brother adopted two turtles from the pet store last week.")
    spans = sentence_spans(text)
    seg = segment(text, spans, np.eye(len(spans), 8, dtype=np.float32), similarity=0.3,
                  min_segment_words=3)
    assert len(seg.spans) == 2 and not seg.marked


def test_a_negated_report_does_not_realise_a_plan() -> None:
    """'I won't go to the workshop' after a plan to go is not a plan realised."""
    older = profile(unit(PLAN))
    newer = profile(unit("Sadly I won't go to the pottery workshop after all, I went "
                         "skiing instead.", session=2, days=9))
    found = revision(newer, older, cos=0.7)
    assert found is None or found.kind not in {"plan realised", "dated plan realised"}


def test_rules_name_their_kind() -> None:
    """A plan followed by its report, dated inside the plan's week, is the 'dated
    plan realised' kind."""
    older = profile(unit(PLAN))
    newer = profile(unit("Guess what, I went to the pottery workshop last Saturday and made "
                         "two bowls.", session=2, days=14))
    found = revision(newer, older, cos=0.7)
    assert found is not None and found.kind == "dated plan realised"
