"""Named entities, name normalisation and filler detection."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile_text import Entity, is_filler, named_entities, normalize_name


def _ents(text: str) -> list[tuple[str, str]]:
    return [(e.name, e.category) for e in named_entities(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hey Mel! Good to see you!", [("Mel", "person")]),
        ("Yesterday I went to Paris with Caroline.", [("Paris", "place"), ("Caroline", "person")]),
        ('I read "Charlotte\'s Web" to my kids.', [("Charlotte's Web", "title")]),
        ("We loved “Becoming Nicole” a lot.", [("Becoming Nicole", "title")]),
        (
            "Dr. Smith works at Stanford University.",
            [("Dr. Smith", "person"), ("Stanford University", "organization")],
        ),
        ("I joined the Chess Club at school.", [("Chess Club", "organization")]),
        (
            "We hiked Mount Rainier and swam in Lake Tahoe.",
            [("Mount Rainier", "place"), ("Lake Tahoe", "place")],
        ),
        ("I'm moving to New York next week.", [("New York", "place")]),
        ("I talked to Melanie on Monday in May.", [("Melanie", "person")]),
        (
            "She studied at the University of Michigan.",
            [("University of Michigan", "organization")],
        ),
        ("I went to a LGBTQ support group.", [("LGBTQ", "other")]),
        ("I post videos on YouTube.", [("YouTube", "organization")]),
        ("We celebrated Christmas with Anna.", [("Christmas", "other"), ("Anna", "person")]),
        ("I love Caroline's painting.", [("Caroline", "person")]),
        ("Woah Joanna! Go Jon!", [("Joanna", "person"), ("Jon", "person")]),
        ("I read The Lord of the Rings twice.", [("The Lord of the Rings", "other")]),
        ("J.K. Rowling wrote it.", [("J.K. Rowling", "person")]),
        ("She speaks German and plays RPGs.", [("German", "other"), ("RPGs", "other")]),
        ("We met Mr. McGee in the U.S. yesterday.", [("Mr. McGee", "person"), ("U.S", "place")]),
        ("J. K. Rowling wrote it.", [("J. K. Rowling", "person")]),
    ],
)
def test_named_entities_examples(text: str, expected: list[tuple[str, str]]) -> None:
    assert _ents(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I think so.",
        "Yesterday was fun.",
        "Painting looks like a great outlet.",
        "Recently, I started running.",
        "Remember, it takes time.",
        "Hahaha, that's wild!",
        "Life's too short.",
        "Caroline's painting is lovely.",  # a lone sentence-initial word is ambiguous
        'I loved "That" a lot.',
        "I'll see, I'm sure, I've been there.",
        "The weather is nice in May and on Sunday.",
        'She said "I love it" twice.',
        "",
        "?!",
    ],
)
def test_no_false_entities(text: str) -> None:
    assert named_entities(text) == []


def test_sentence_initial_name_known_from_elsewhere() -> None:
    text = "Caroline went home. Later I called Caroline."
    assert [e.name for e in named_entities(text)] == ["Caroline", "Caroline"]


def test_spans_point_at_names() -> None:
    text = "Thanks, Melanie! I saw Mel's dog meet Dr. Smith in Rome."
    for ent in named_entities(text):
        assert text[ent.span[0] : ent.span[1]] == ent.name
    assert [e.name for e in named_entities(text)] == ["Melanie", "Mel", "Dr. Smith", "Rome"]


def test_entity_is_frozen_and_validated() -> None:
    ent = Entity("Rome", "place", (0, 4))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        ent.name = "Paris"  # type: ignore[misc]
    with pytest.raises(ValueError, match="category"):
        Entity("Rome", "city", (0, 4))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("The Beatles", "beatles"),
        ("Caroline's", "caroline"),
        ("the Beatles'", "beatles"),
        ("U.S.", "us"),
        ("Jean-Luc", "jean luc"),
        ("  the  Lord of the Rings ", "lord of the rings"),
        ("CAROLINE", "caroline"),
        ("An Apple", "apple"),
        ("", ""),
    ],
)
def test_normalize_name(name: str, expected: str) -> None:
    assert normalize_name(name) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Hey!",
        "Hey Mel!",
        "Thanks so much!",
        "Wow, that's great!",
        "See you later!",
        "Bye!",
        "Thanks, Melanie! That's really sweet.",
        "Take care, Mary Ann!",
        "How have you been?",
        "That's so cool, Caroline!",
        "Hahaha yeah",
        "😊😊",
        "!!!",
        "",
    ],
)
def test_is_filler_true(text: str) -> None:
    assert is_filler(text)


@pytest.mark.parametrize(
    "text",
    [
        "Thanks! I went to Paris yesterday.",
        "I love Paris!",
        "I have 2 kids.",
        "Good luck with your exam!",
        "My dog is sick.",
        "Hey Mel, I adopted a puppy!",
    ],
)
def test_is_filler_false(text: str) -> None:
    assert not is_filler(text)


@given(st.text())
def test_entities_are_grounded(text: str) -> None:
    """Every entity's span holds exactly its name, and its category is a known one."""
    for ent in named_entities(text):
        start, end = ent.span
        assert 0 <= start < end <= len(text)
        assert text[start:end] == ent.name
        assert ent.category in {"person", "place", "organization", "title", "other"}


@given(st.text())
def test_is_filler_and_normalize_are_total(text: str) -> None:
    """Filler detection answers a bool for any text; name normalisation is idempotent."""
    assert isinstance(is_filler(text), bool)
    assert normalize_name(text) == normalize_name(normalize_name(text))
