"""Extractive keyphrases and summaries."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from labile.text.tokenize import words
from labile_text import keyphrases, summarize


def test_keyphrases_basic() -> None:
    text = "I went to a LGBTQ support group yesterday and it was so powerful."
    assert keyphrases(text) == ["support group", "LGBTQ", "powerful"]


def test_keyphrases_keep_entities_titles_and_dates() -> None:
    text = 'I read "Charlotte\'s Web" to my kids on 8 May 2023 at the Boston Public Library.'
    assert keyphrases(text) == [
        "Boston Public Library",
        "8 May 2023",
        "Charlotte's Web",
        "read",
        "kids",
    ]


def test_keyphrases_skip_vocatives_fillers_and_relative_times() -> None:
    text = "Wow, Melanie! I painted that lake sunrise last year. It's special to me."
    assert keyphrases(text) == ["lake sunrise", "painted", "special"]


def test_keyphrases_dedupe_by_stem_and_limit() -> None:
    text = "Painting is my passion. I paint every day. Paintings calm me."
    out = keyphrases(text, k=2)
    assert len(out) == 2
    # "painting", "paint" and "paintings calm" share a stem: only the best survives.
    assert out == ["paintings calm", "passion"]


def test_keyphrases_year_cue_is_dropped() -> None:
    assert "2022" in keyphrases("We moved to Denver in 2022 for work.")


def test_keyphrases_edge_cases() -> None:
    assert keyphrases("") == []
    assert keyphrases("!!! ???") == []
    assert keyphrases("Thanks so much, Mel!") == []
    assert keyphrases("anything", k=0) == []
    assert keyphrases("Crème brûlée in Montréal") == ["crème brûlée", "Montréal"]


def test_keyphrases_deterministic() -> None:
    text = "We hiked the canyon trail, then camped by the river and cooked pasta."
    assert keyphrases(text) == keyphrases(text)


def test_summarize_picks_informative_sentences() -> None:
    text = (
        "Wow, Melanie! The colors really blend nicely. "
        "Painting looks like a great outlet for expressing yourself."
    )
    assert summarize(text, max_words=12) == "The colors really blend nicely."


def test_summarize_skips_greetings() -> None:
    text = "Hey Mel! Good to see you! I adopted a puppy named Max last week."
    assert summarize(text) == "I adopted a puppy named Max last week."


def test_summarize_keeps_neighbours_within_budget() -> None:
    text = "Thanks! I started a pottery class. We made bowls and cups. See you!"
    assert summarize(text, max_words=20) == "I started a pottery class. We made bowls and cups."


def test_summarize_truncates_long_sentence() -> None:
    text = "I went to a LGBTQ support group yesterday and it was so powerful."
    assert summarize(text, max_words=5) == "I went to a LGBTQ…"


def test_summarize_edge_cases() -> None:
    assert summarize("") == ""
    assert summarize("   ") == ""
    assert summarize("Thanks!") == "Thanks!"
    assert summarize("Bye! See you!") == "Bye! See you!"
    assert summarize("word", max_words=0) == "word"


@given(st.text(), st.integers(min_value=1, max_value=50))
def test_summary_words_come_from_input(text: str, max_words: int) -> None:
    """A summary is a verbatim passage of the text (plus "…") within the word budget."""
    summary = summarize(text, max_words)
    assert set(words(summary)) <= set(words(text))
    body = summary.removesuffix("…")
    assert body in text
    assert len(re.findall(r"\S+", body)) <= max(max_words, 0) or body == text.strip()


@given(st.text(), st.integers(min_value=0, max_value=8))
def test_keyphrases_are_bounded_and_grounded(text: str, k: int) -> None:
    """At most ``k`` distinct keyphrases, every word of which is a word of the text."""
    phrases = keyphrases(text, k)
    assert len(phrases) <= k
    assert len(set(phrases)) == len(phrases)
    # Every word of a phrase is a word of the text (possessive "'s" may be cut).
    source = set(re.findall(r"[^\W_]+", text.casefold()))
    for phrase in phrases:
        assert set(re.findall(r"[^\W_]+", phrase.casefold())) <= source
