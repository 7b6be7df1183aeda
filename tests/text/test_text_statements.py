"""`labile_text.statements`: sentence roles, stance, and facts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile_text.statements import is_statement, sentence_role, stance, states_fact


@pytest.mark.parametrize(("sentence", "role"), [
    ("Any fun plans for the summer?", "question"),
    ("Thanks, Melanie! Your kind words mean a lot.", "social"),
    ("Wow, Caroline, that sounds super rewarding!", "social"),
    ("You are so inspiring!", "social"),
    ("Hey Mel, long time no chat!", "social"),
    ("Since we last spoke, some big things have happened.", "social"),
    ("I'm so happy for you, Caroline.", "social"),
    ("Last Fri I finally took my kids to a pottery workshop.", "statement"),
    ("My brother moved to Denver for a job at the airport.", "statement"),
])
def test_sentence_roles(sentence: str, role: str) -> None:
    """Questions, social glue and statements are told apart."""
    assert sentence_role(sentence) == role
    assert is_statement(sentence) == (role == "statement")


@pytest.mark.parametrize(("sentence", "expected"), [
    ("We're thinking about going camping next month.", "plan"),
    ("I'm going to a conference this month.", "plan"),
    ("I went to a conference two days ago.", "report"),
    ("I usually play the violin on weekends.", "habit"),
    ("Thanks so much!", "none"),
    ("Is the concert next week?", "none"),
])
def test_stance(sentence: str, expected: str) -> None:
    """Plans look ahead, reports look back; questions and small talk have no stance."""
    assert stance(sentence) == expected


@pytest.mark.parametrize(("sentence", "fact"), [
    ("We even went on another camping trip in the forest.", True),
    ("Grandma Rosa bakes cinnamon rolls every Sunday morning.", True),
    ("My sister turned 30 in March.", True),
    ("Art is so cool, it connects us and helps us understand each other.", False),
    ("Stuff like this mural is really special to me!", False),
    ("Thanks, Caroline! The event was really thought-provoking.", False),
])
def test_states_fact(sentence: str, fact: bool) -> None:
    """A fact is a statement with a stance or a concrete anchor; opinions are not."""
    assert states_fact(sentence) is fact


@given(st.text(max_size=80))
def test_roles_are_consistent(text: str) -> None:
    """Property: a fact is always a statement, a sentence ending in "?" is always
    a question, and only statements have a stance."""
    role = sentence_role(text)
    if states_fact(text):
        assert role == "statement"
    if text.strip().endswith("?"):
        assert role == "question"
    if role != "statement":
        assert stance(text) == "none"
