"""Pending work is repaired: an LLM outage during ``add`` keeps the turns and marks
them pending (in the store, across reopening); ``repair`` (or a re-add of the same
ids, or ``labile repair``) builds them once the model is back, and the memory then
equals one that never saw the outage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from reliability_helpers import graph, turns

from labile import Memory
from labile._recovery import PENDING_KIND
from labile_cli import main
from labile_llm import ScriptedLLM

DESCRIPTOR = r"Write a search descriptor"
DIAGNOSE = r"proposals"
EXTRACT = r"Turn the NEW TURN below into memory units"
EXTRACT_BATCH = r"Turn each of the NEW TURNS below into memory units"  # several turns, one call
NODE = r"A new memory unit arrived"
EDGE = r"Link a memory node to related nodes"


def _reply(value: Any) -> str:
    return json.dumps(value)


RULES = {
    "realm-llm": [
        (EXTRACT_BATCH, _reply({"units": [{"turn": 1, "type": "event", "name": "a moment",
                                           "description": "Someone shares a moment of their day",
                                           "participants": ["Ana"], "time": "none"}],
                                "summary": "Ana and Ben talk."})),
        (EXTRACT, _reply({"units": [{"type": "event", "name": "a moment",
                                     "description": "Someone shares a moment of their day",
                                     "participants": ["Ana"]}],
                          "summary": "Ana and Ben talk."})),
        (NODE, _reply({"operation": "add", "related": []})),
        (EDGE, _reply({"edges": []})),
    ],
    "allmem-llm": [
        (DESCRIPTOR, _reply({"summary": "A speaker shares news.",
                             "keywords": ["news", "family", "home"]})),
        (DIAGNOSE, _reply({"proposals": []})),
    ],
}


class Model(ScriptedLLM):
    """The preset's scripted model, which can be taken down (every call fails with
    no answer, as an outage does) or made to answer nonsense."""

    def __init__(self, preset: str) -> None:
        super().__init__(rules=RULES[preset])
        self.state = "up"

    def _next(self, prompt: str) -> Any:
        if self.state == "down":
            return self.unavailable()
        if self.state == "malformed":
            return self.malformed()
        return super()._next(prompt)


def _open(preset: str, path: Path, model: Model) -> Memory:
    return Memory.open({"preset": preset, "embedder": {"type": "hashing"},
                        "llm": {"type": "scripted"}, "store": {"path": str(path)}}, llm=model)


def _clean(preset: str, path: Path) -> dict[str, Any]:
    with _open(preset, path, Model(preset)) as memory:
        memory.add(turns(0, 4), namespace="n")
        memory.add(turns(4, 4), namespace="n")
        return graph(memory, "n")


@pytest.mark.parametrize("preset", ["realm-llm", "allmem-llm"])
def test_an_outage_leaves_pending_work_that_repair_builds(preset: str, tmp_path: Path) -> None:
    expected = _clean(preset, tmp_path / "clean")
    model = Model(preset)
    with _open(preset, tmp_path / "m", model) as memory:
        model.state = "down"
        report = memory.add(turns(0, 4), namespace="n")
        assert report.pending == ["t0", "t1", "t2", "t3"]
        assert report.nodes_written == 0
        assert [o.id for o in memory.list("n").items] == ["t0", "t1", "t2", "t3"]  # kept
        assert memory.stats("n")["pending"] == 4
        assert {n.kind for n in memory.store.iter_nodes("n")} == {PENDING_KIND}
        assert memory.search("news", namespace="n", k=5).hits == ()  # marks never surface
        still = memory.repair("n")  # the model is still away: nothing changes
        assert (still.added, still.pending) == ([], ["t0", "t1", "t2", "t3"])
    model = Model(preset)
    with _open(preset, tmp_path / "m", model) as memory:  # reopened: still pending
        assert memory.stats("n")["pending"] == 4
        repaired = memory.repair("n")
        assert repaired.added == ["t0", "t1", "t2", "t3"] and repaired.pending == []
        assert repaired.nodes_written > 0
        assert memory.stats("n")["pending"] == 0
        memory.add(turns(4, 4), namespace="n")
        assert graph(memory, "n") == expected


@pytest.mark.parametrize("preset", ["realm-llm", "allmem-llm"])
def test_a_re_add_of_pending_ids_builds_them(preset: str, tmp_path: Path) -> None:
    expected = _clean(preset, tmp_path / "clean")
    model = Model(preset)
    with _open(preset, tmp_path / "m", model) as memory:
        model.state = "down"
        memory.add(turns(0, 4), namespace="n")
        model.state = "up"
        report = memory.add(turns(0, 4), namespace="n")
        assert report.skipped_existing == ["t0", "t1", "t2", "t3"]
        assert report.details["repaired"] == ["t0", "t1", "t2", "t3"]
        assert report.pending == []
        memory.add(turns(4, 4), namespace="n")
        assert graph(memory, "n") == expected


def test_a_malformed_reply_fails_closed_and_is_not_pending(tmp_path: Path) -> None:
    """A model that answers, unusably, is not an outage: the turn is built without
    what the reply would have given (the papers' fail-closed rule), nothing waits."""
    model = Model("realm-llm")
    with _open("realm-llm", tmp_path / "m", model) as memory:
        model.state = "malformed"
        report = memory.add(turns(0, 2), namespace="n")
        assert report.pending == [] and memory.stats("n")["pending"] == 0
        assert report.details["realm"]["llm_failures"] == {"extract": 2}


def test_a_forgotten_pending_observation_takes_its_mark_along(tmp_path: Path) -> None:
    model = Model("allmem-llm")
    with _open("allmem-llm", tmp_path / "m", model) as memory:
        model.state = "down"
        memory.add(turns(0, 3), namespace="n")
        memory.forget("n", ["t1"])
        assert memory.stats("n")["pending"] == 2
        model.state = "up"
        assert memory.repair("n").added == ["t0", "t2"]


def test_labile_repair_command_builds_pending_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``labile repair`` reports what it built and what still waits (exit 1 while
    anything does)."""
    descriptor = RULES["allmem-llm"][0][1]
    config = tmp_path / "labile.toml"
    config.write_text(
        f'preset = "allmem-llm"\n[store]\npath = "{tmp_path / "m"}"\n'
        '[embedder]\ntype = "hashing"\n[llm]\ntype = "scripted"\n'
        f"replies = [{json.dumps(descriptor)}, {json.dumps(descriptor)}]\n", encoding="utf-8")
    model = Model("allmem-llm")
    model.state = "down"
    with Memory.open(config, llm=model) as memory:
        memory.add(turns(0, 2), namespace="n")
    assert main(["repair", "--config", str(config)]) == 0  # the config's model answers
    assert capsys.readouterr().out == "n: built 2 observations (2 nodes, 3 edges); pending 0\n"
    assert main(["repair", "--config", str(config), "-n", "n"]) == 0
    assert "built 0 observations" in capsys.readouterr().out
