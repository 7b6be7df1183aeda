"""The no-graph ``context`` baseline: context indexing, z-score fusion, speaker boost."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile import Memory
from labile.plugin import zscores
from labile.testing import observations

TABLE: dict[str, Any] = {"preset": "context", "store": {"type": "memory"},
                         "embedder": {"type": "hashing"}}


def test_reply_is_found_by_the_words_of_the_turn_before() -> None:
    """A reply sharing no word with the question is found through its predecessor."""
    with Memory.open(TABLE) as memory:
        memory.add(observations([
            ("Ana", "Did you ever visit the lighthouse museum?"),
            ("Ben", "Yes, twice last year!"),
            ("Ana", "I baked bread this morning"),
        ]), namespace="u")
        result = memory.search("lighthouse museum", namespace="u", k=3)
        top = [h.node.sources[0] for h in result.hits[:2]]
        assert set(top) == {"o1", "o2"}
        reply = next(h.node for h in result.hits if h.node.sources == ("o2",))
        # the turn itself stays the content; the context only joins the index text
        assert "twice" in reply.content and "lighthouse" not in reply.content
        assert "lighthouse" in reply.description


def test_context_does_not_cross_namespaces() -> None:
    with Memory.open(TABLE) as memory:
        memory.add(observations([("Ana", "The lighthouse museum opens on Monday")],
                                prefix="a"), namespace="u1")
        memory.add(observations([("Ben", "Great news")], prefix="b"), namespace="u2")
        (hit,) = memory.search("news", namespace="u2", k=1).hits
        assert hit.node.description == ""


def test_named_speaker_is_favoured() -> None:
    """Two turns with the same words: the one said by the person asked about ranks first."""
    with Memory.open({**TABLE, "retrieval": {"seed": [
            {"type": "baseline.context", "speaker_boost": 1.0}]}}) as memory:
        memory.add(observations([("Ben", "I love painting sunsets"),
                                 ("Ana", "I love painting sunsets")]), namespace="u")
        hits = memory.search("What does Ana love painting?", namespace="u", k=2).hits
        assert hits[0].node.sources == ("o2",)
        assert hits[0].scores["speaker"] == 1.0 and hits[1].scores["speaker"] == 0.0


def test_empty_namespace_gives_no_hits() -> None:
    with Memory.open(TABLE) as memory:
        assert memory.search("anything", namespace="nobody", k=5).hits == ()


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=30))
def test_zscores_are_centred_and_scaled(values: list[float]) -> None:
    """z-scores have mean 0 and, unless every value is equal, standard deviation 1."""
    z = zscores(values)
    assert len(z) == len(values)
    assert sum(z) / len(z) == pytest.approx(0.0, abs=1e-6)
    if max(values) - min(values) > 1e-3:
        var = sum(x * x for x in z) / len(z)
        assert var == pytest.approx(1.0, rel=1e-6)
    if len(set(values)) == 1:
        assert z == [0.0] * len(values)
