"""Typing names from the words around them (`labile_text.entity_types`) and name keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile_text.entities import CATEGORIES, name_keys, named_entities, normalize_name
from labile_text.entity_types import introduces_speaker, type_by_context


def _typed(text: str) -> list[tuple[str, str]]:
    return [(e.name, e.category) for e in named_entities(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My dog Biscuit barked all night.", [("Biscuit", "animal")]),
        ("Our new puppy, Pepper, chewed my shoes.", [("Pepper", "animal")]),
        ("We took Biscuit the beagle to the vet.", [("Biscuit", "animal")]),
        ("Yesterday Mochi knocked my mug over, Mochi is a tabby cat.", [("Mochi", "animal"),
                                                                         ("Mochi", "animal")]),
        ("After dinner Rex barked at the neighbours.", [("Rex", "animal")]),
        ("I walked Rex, Rex's paws were muddy.", [("Rex", "animal"), ("Rex", "animal")]),
        ("I started at Acme Health last week.", [("Acme Health", "organization")]),
        ("So I had an interview at Globex yesterday.", [("Globex", "organization")]),
        ("I got a job offer from Initech!", [("Initech", "organization")]),
        ("We are moving to Denver in March.", [("Denver", "place")]),
        ("My sister lives in Somerville now.", [("Somerville", "place")]),
        ("I finally bought a Kindle.", [("Kindle", "other")]),
        ("I talked to Caroline about it.", [("Caroline", "person")]),
        ("Taking shifts with Sunita helps a lot.", [("Sunita", "person")]),
        ("I work with Anna on Mondays.", [("Anna", "person")]),
        ("I worked the late shift at Mistral.", [("Mistral", "organization")]),
        ("I'm walking Rufus at night, he's a lab.", [("Rufus", "animal")]),
        ("So the cat is officially Mango.", [("Mango", "animal")]),
    ],
)
def test_context_types_names(text: str, expected: list[tuple[str, str]]) -> None:
    assert _typed(text) == expected


def test_cue_says_what_typed_the_name() -> None:
    by_name = {e.name: e.cue for e in named_entities(
        "I saw Dr. Lee about my dog Biscuit, then met Anna in Paris.")}
    assert by_name == {"Dr. Lee": "name-word", "Biscuit": "animal-noun", "Anna": "",
                       "Paris": "form"}


def test_no_cue_gives_none() -> None:
    text = "Anna said it was fine."
    assert type_by_context(text, 0, 4) is None


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("Hi! I'm Elena.", "Elena", True),
        ("my name is Elena and I work nights", "Elena", True),
        ("Elena here, quick question", "Elena", True),
        ("Hi, I'm Elena by the way.", "Elena", True),
        ("I'm Elena's sister.", "Elena", False),
        ("I'm meeting Elena tomorrow.", "Elena", False),
        ("Tell Elena I said hi.", "Elena", False),
        ("I just got a puppy, this is Max!", "Max", False),
        ("It's Seattle, my favourite city.", "Seattle", False),
    ],
)
def test_introduces_speaker(text: str, name: str, expected: bool) -> None:
    start = text.index(name)
    assert introduces_speaker(text, start, start + len(name)) is expected


def test_name_keys_drop_role_titles_only() -> None:
    assert name_keys("Dr. Lee") == ("dr lee", "lee")
    assert name_keys("Coach Rivera's") == ("coach rivera", "rivera")
    assert name_keys("Mrs. Park") == ("mrs park",)
    assert name_keys("Biscuit's") == ("biscuit",)
    assert name_keys("") == ()


@given(st.text(max_size=200))
def test_every_mention_has_a_known_category_and_its_span(text: str) -> None:
    """For any text, every mention's category is a known one and its span holds its name."""
    for ent in named_entities(text):
        assert ent.category in CATEGORIES
        assert text[ent.span[0]:ent.span[1]] == ent.name


@given(st.text(max_size=60))
def test_name_keys_start_with_the_normal_form(name: str) -> None:
    """For any name, the first key is its normal form and no key is empty."""
    keys = name_keys(name)
    assert keys == () or keys[0] == normalize_name(name)
    assert all(keys)
