"""Document mode: a very long turn is built as its opening plus passages that tile the rest.

See `labile_realm.construct.passages`. What must hold: every part of the text is
stored verbatim with its place in the observation, a detail in the middle of a
megabyte is found by search, later turns never treat a passage as a neighbour,
and turns up to ``document_chars`` are built exactly as before.
"""

from __future__ import annotations

import itertools
import random
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from realm_helpers import T0

from labile import Limits, Memory
from labile.plugin import Node, NodeFilter, Observation
from labile_realm.construct.extract_offline import OfflineUnitExtractor
from labile_realm.construct.passages import DOCUMENT_CHARS, PASSAGE_CHARS, PASSAGE_KEY, cut
from labile_realm.construct.units import ConversationState, Unit
from labile_realm.schema import COMPRISES, EVENT

_WORDS = ("the", "committee", "reviewed", "quarterly", "ledger", "figures", "while", "river",
          "barges", "moved", "grain", "north", "and", "seven", "clerks", "copied", "minutes",
          "about", "harbour", "tolls", "winter", "lamps")
NEEDLE = "Marguerite keeps the spare key under the blue ceramic frog beside the greenhouse door."


def filler(chars: int, seed: int = 0) -> str:
    """Deterministic prose of about ``chars`` characters, none of the needle's rarer words."""
    rnd = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < chars:
        sentence = " ".join(rnd.choice(_WORDS) for _ in range(rnd.randint(6, 18)))
        sentence = sentence.capitalize() + (".\n" if rnd.random() < 0.1 else ". ")
        out.append(sentence)
        size += len(sentence)
    return "".join(out)


def _memory(size: int) -> Memory:
    table = {"preset": "realm", "store": {"type": "memory"}, "embedder": {"type": "hashing"}}
    return Memory.open(table, limits=Limits(observation_chars=size + 1_000,
                                            batch_chars=max(size + 1_000, 2_000_000)))


def _passages(mem: Memory, ns: str) -> list[Node]:
    return [n for n in mem.store.iter_nodes(ns, NodeFilter(kinds={EVENT}))
            if PASSAGE_KEY in n.attrs]


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("ab \n\t."), max_size=300),
       start=st.integers(0, 20), most=st.integers(1, 40))
def test_cut_tiles_the_text_in_bounded_spans(text: str, start: int, most: int) -> None:
    """For any text, start and length, the spans tile the rest of the text exactly, in
    order, none longer than asked, and one with a late line break in its window ends there."""
    start = min(start, len(text))
    spans = cut(text, start, most)
    assert "".join(text[s:e] for s, e in spans) == text[start:]
    assert all(s < e <= s + most for s, e in spans)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    for s, e in spans[:-1]:
        second_half = text[s + max(1, most // 2):s + most]
        if "\n" in second_half:  # a late line break in the window: the span ends after one
            assert text[e - 1] == "\n" and e > s + most // 2


def test_cut_refuses_a_non_positive_length() -> None:
    with pytest.raises(ValueError, match="positive"):
        cut("abc", 0, 0)


def _extract(text: str, **sizes: int) -> list[Unit]:
    units = OfflineUnitExtractor(None, **sizes)
    obs = Observation(id="doc", text=text, speaker="Anna", timestamp=T0, session="1")
    return units.extract(obs, ConversationState()).units


def test_a_turn_up_to_the_threshold_is_built_as_before() -> None:
    text = filler(2_000)
    at_limit = _extract(text, document_chars=len(text))
    assert not [u for u in at_limit if PASSAGE_KEY in u.attrs]
    assert [u.key for u in at_limit] == [u.key for u in _extract(text)]
    assert at_limit[0].content == text


def test_a_longer_turn_is_its_opening_plus_passages_that_tile_the_rest() -> None:
    text = filler(5_000) + "\n\n   \n" + filler(3_000, seed=1)
    units = _extract(text, document_chars=1_000, passage_chars=300)
    event = units[0]
    assert event.kind == EVENT and event.key == "event|doc"
    opening = event.content
    assert text.startswith(opening) and 800 < len(opening) <= 1_000
    passages = [u for u in units if PASSAGE_KEY in u.attrs]
    places = [u.attrs[PASSAGE_KEY] for u in passages]
    assert places[0]["start"] == len(opening)
    for unit, place in zip(passages, places, strict=True):
        assert text[place["start"]:place["end"]] == unit.content
        assert len(unit.content) <= 300 and unit.content.strip()
        assert unit.attrs["clause_of"] == event.key and unit.sources == ("doc",)
        assert unit.searchable and unit.time_start == T0
    # Together they hold every non-blank character after the opening, in order.
    assert "".join(u.content for u in passages).split() == text[len(opening):].split()
    assert [p["part"] for p in places] == list(range(1, len(places) + 1))
    linked = [link.target for link in event.links if link.predicate == COMPRISES]
    assert linked == [u.key for u in passages]


def test_passages_are_stored_linked_and_never_neighbours_of_later_turns() -> None:
    text = filler(DOCUMENT_CHARS + 5_000) + NEEDLE + " " + filler(5_000, seed=2)
    mem = _memory(len(text))
    mem.add([Observation(id="doc", text=text, speaker="Anna", timestamp=T0, session="1")],
            namespace="n")
    passages = {n.id: n for n in _passages(mem, "n")}
    assert len(passages) >= 10_000 // PASSAGE_CHARS
    for node in passages.values():
        place = node.attrs[PASSAGE_KEY]
        assert text[place["start"]:place["end"]] == node.content
        assert node.embedding is not None
        into = mem.store.edges_of("n", [node.id], direction="in")
        assert [e.predicate for e in into] == [COMPRISES]
    # A later turn that repeats a passage word for word links to its turn, not to it.
    mem.add([Observation(id="later", text=NEEDLE, speaker="Tom", session="1",
                         timestamp=T0 + timedelta(minutes=1))], namespace="n")
    edges = mem.store.edges_of("n", list(passages), direction="both")
    assert {e.predicate for e in edges} == {COMPRISES}
    # Adding the same observation again writes nothing new.
    mem.add([Observation(id="doc", text=text, speaker="Anna", timestamp=T0, session="1")],
            namespace="n")
    assert {n.id for n in _passages(mem, "n")} == set(passages)


def test_a_fact_in_the_middle_of_a_megabyte_message_is_found() -> None:
    half = filler(500_000)
    text = half + NEEDLE + " " + filler(500_000, seed=3)
    mem = _memory(len(text))
    mem.add([Observation(id="big", text=text, speaker="Anna", timestamp=T0, session="1")],
            namespace="n")
    hits = mem.search("Where does Marguerite keep the spare key?", namespace="n", k=5).hits
    found = [h for h in hits if "ceramic frog" in h.node.content]
    assert found, [h.node.content[:80] for h in hits]
    place = found[0].node.attrs[PASSAGE_KEY]
    assert place["start"] <= len(half) < place["end"]
    assert found[0].node.sources == ("big",)
    assert found[0].node.embedding is not None
