"""Grounded sentence spans."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile_text import split_sentences


def _sents(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Hey Mel! Good to see you! How have you been?",
            ["Hey Mel!", "Good to see you!", "How have you been?"],
        ),
        ("Dr. Smith met Mr. Jones. They talked.", ["Dr. Smith met Mr. Jones.", "They talked."]),
        ("It costs 3.5 dollars. Cheap!", ["It costs 3.5 dollars.", "Cheap!"]),
        ("Use e.g. apples, i.e. fruit. Done", ["Use e.g. apples, i.e. fruit.", "Done"]),
        ("I moved to the U.S. Then I left.", ["I moved to the U.S.", "Then I left."]),
        (
            "We met at 7 a.m. and ate. At 8 p.m. Then slept.",
            ["We met at 7 a.m. and ate.", "At 8 p.m.", "Then slept."],
        ),
        ("Bring pens, paper, etc. to class.", ["Bring pens, paper, etc. to class."]),
        ("J. K. Rowling wrote it. Wow.", ["J. K. Rowling wrote it.", "Wow."]),
        ("Really?! Yes!!! Ok…", ["Really?!", "Yes!!!", "Ok…"]),
        ("I was thinking... maybe not. Sure?", ["I was thinking... maybe not.", "Sure?"]),
        ("Hmm… Yes", ["Hmm…", "Yes"]),
        ('He said "Hi." Then left.', ['He said "Hi."', "Then left."]),
        ("(Really?) Yes.", ["(Really?)", "Yes."]),
        ("Great! 😊 See you", ["Great! 😊", "See you"]),
        ("So fun :) See you soon :)", ["So fun :)", "See you soon :)"]),
        ("Love it 😍😍", ["Love it 😍😍"]),
        ("line one\nline two. three", ["line one", "line two.", "three"]),
        ("first\r\n\r\nsecond", ["first", "second"]),
        ("no terminator here", ["no terminator here"]),
        ("  padded sentence.   ", ["padded sentence."]),
        ("Visit example.com today. Ok", ["Visit example.com today.", "Ok"]),
        ("!!!", ["!!!"]),
        ("... Hello there.", ["... Hello there."]),
        ("Ça va? Très bien.", ["Ça va?", "Très bien."]),
    ],
)
def test_split_sentences_examples(text: str, expected: list[str]) -> None:
    assert _sents(text) == expected


def test_blank_text_has_no_sentences() -> None:
    assert split_sentences("") == []
    assert split_sentences("   \n\t ") == []


def test_spans_are_offsets() -> None:
    text = "Hi there. Bye."
    assert split_sentences(text) == [(0, 9), (10, 14)]


@given(st.text())
def test_spans_are_grounded_ordered_and_trimmed(text: str) -> None:
    """For any text, spans are ordered, non-empty and trimmed, and cover every non-space."""
    spans = split_sentences(text)
    prev_end = 0
    for start, end in spans:
        assert prev_end <= start < end <= len(text)
        piece = text[start:end]
        assert piece == piece.strip()
        assert piece in text
        prev_end = end
    if text.strip():
        assert spans  # non-blank text always yields at least one sentence
    covered = "".join(text[s:e] for s, e in spans)
    assert "".join(covered.split()) == "".join(text.split())  # nothing but whitespace lost


@given(
    st.lists(
        st.sampled_from(
            [
                "Hello",
                "Mr.",
                "3.5",
                "e.g.",
                "!",
                "?",
                "...",
                " ",
                "\n",
                "😊",
                ":)",
                '"',
                ")",
                "U.S.",
                "a.m.",
                "Ok",
                "world.",
            ]
        ),
        max_size=30,
    )
)
def test_spans_on_tricky_tokens(parts: list[str]) -> None:
    """Abbreviations, decimals, emoji and quotes in any order give ordered, trimmed spans."""
    text = " ".join(parts)
    spans = split_sentences(text)
    assert all(s < e for s, e in spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    assert all(text[s:e] == text[s:e].strip() for s, e in spans)
