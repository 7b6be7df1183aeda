"""The linear sentence splitter gives exactly the spans of the quadratic one it replaced."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from sentences_reference import split_sentences as quadratic_split

from labile_text import split_sentences

# Pieces that exercise every rule: terminators, abbreviations, initials, decimals,
# ellipses, emoticons and emoji, quotes and brackets, odd whitespace and line breaks.
PIECES = [
    "Hi", "there", "Dr.", "Mr.", "e.g.", "etc.", "U.S.", "a.m.", "J.", "K.", "J.K.", "I.",
    "3.5", "x.y", ".", "!", "?", "?!", "...", "…", "‽", '"', "”", "'", ")", "(", "«", "»",
    ":)", ";-)", "<3", "xD", "^_^", "😊", "🎉🎉", "Then", "maybe", "so", "OK", "ok",
    " ", "  ", "\t", "\u00a0", "\u2003", "\n", "\r\n", "\u2028", "\x0b", "\x1c", "\x85",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=300),
       st.lists(st.sampled_from(["", " "]), min_size=300, max_size=300))
def test_same_spans_as_the_quadratic_splitter(pieces: list[str], seps: list[str]) -> None:
    """For any text made of the pieces the rules look at: the same spans as before."""
    text = "".join(p + s for p, s in zip(pieces, seps, strict=False))
    assert split_sentences(text) == quadratic_split(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_same_spans_on_arbitrary_text(text: str) -> None:
    """For any text at all: the same spans as before."""
    assert split_sentences(text) == quadratic_split(text)
