"""A REALM episode says the same whichever process wrote its turns, and after a forget it
says what construction would say of the turns that remain."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from labile import Memory, NodeFilter, Observation

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
LINES = [
    ("Maria", "I started a pottery class in Lisbon last week."),
    ("Tom", "That sounds fun. Is the studio far from your flat?"),
    ("Maria", "Twenty minutes by tram. My teacher Ines is very patient."),
    ("Tom", "I went hiking in the Alps with my brother Sam."),
    ("Maria", "Bo's PIN is 913, he is HIV+ and 34. Keep the mauve shed key for Bo?"),
    ("Tom", "Sure, I will keep it safe. Sam loved the glacier and the ibex."),
    ("Maria", "Ines says my bowls are getting better every week."),
    ("Tom", "Next month I am moving to Porto for a new job at a bakery."),
]
CONFIG = {"preset": "realm", "embedder": {"type": "hashing"}}


def _turns() -> list[Observation]:
    return [Observation(id=f"turn {60 + i}", text=text, speaker=who, session="1",
                        timestamp=T0 + timedelta(minutes=3 * i))
            for i, (who, text) in enumerate(LINES)]


def _episodes(memory: Memory) -> dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]:
    return {n.id: (n.description, n.keywords, n.sources)
            for n in memory.list_nodes("u", where=NodeFilter(kinds={"realm.episode"})).items}


def _summaries(memory: Memory) -> set[tuple[str, str, str]]:
    return {(e.src, e.dst, e.description) for e in memory.store.iter_edges("u")
            if e.predicate == "realm.summarizes"}


def test_the_episode_does_not_depend_on_which_process_wrote_which_turn(tmp_path: Path) -> None:
    turns = _turns()
    with Memory.open(CONFIG, path=tmp_path / "one") as memory:
        memory.add(turns[:4], namespace="u")
        memory.add(turns[4:], namespace="u")
        together = _episodes(memory)
    with Memory.open(CONFIG, path=tmp_path / "two") as memory:
        memory.add(turns[:4], namespace="u")
    with Memory.open(path=tmp_path / "two") as memory:  # a fresh writer: no state of its own
        memory.add(turns[4:], namespace="u")
        assert _episodes(memory) == together


def test_a_forgotten_turn_leaves_the_episode_construction_gives_the_rest(tmp_path: Path) -> None:
    turns = _turns()
    secret = turns[4].id
    with Memory.open(CONFIG, path=tmp_path / "forget") as memory:
        memory.add(turns[:4], namespace="u")
    with Memory.open(path=tmp_path / "forget") as memory:
        memory.add(turns[4:], namespace="u")
        assert "913" in next(iter(_episodes(memory).values()))[0]  # the highlight quotes it
        memory.forget("u", [secret])
        rebuilt, links = _episodes(memory), _summaries(memory)
    rest = [o for o in turns if o.id != secret]
    with Memory.open(CONFIG, path=tmp_path / "fresh") as memory:  # the same two batches
        memory.add(rest[:4], namespace="u")
        memory.add(rest[4:], namespace="u")
        assert rebuilt == _episodes(memory)
        assert links == _summaries(memory)
