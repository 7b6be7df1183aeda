"""``--retain`` of ``bench change`` / ``bench locomo``: each preset also runs with the policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from labile import LabileError
from labile_bench.change import load_change
from labile_bench.change_run import run_change
from labile_bench.locomo_run import run_locomo
from labile_bench.retention_run import parse_retain
from labile_cli import main
from labile_retention import RetentionPolicy

FAST = {"store": {"type": "memory"}, "embedder": {"type": "hashing"}}
LOCOMO_TINY = Path(__file__).parents[1] / "bench" / "data" / "locomo_tiny.json"


def _move(tmp_path: Path) -> Path:
    """A move told in two sessions five months apart; asked about a month later."""
    sessions = [
        ("2025-01-05", [("D1:1", "Ana", "I live in a small flat in Lisbon near the river."),
                        ("D1:2", "Rui", "Lisbon suits you. Still teaching piano?")]),
        ("2025-06-05", [("D2:1", "Ana", "We moved! The new house in Porto has a garden."),
                        ("D2:2", "Rui", "Porto, wow. Do you miss the river?")]),
    ]
    doc: dict[str, Any] = {
        "id": "ana", "person": "Ana", "speakers": ["Ana", "Rui"], "about": "a move",
        "sessions": [{"turns": [{"id": i, "speaker": s, "text": t,
                                 "timestamp": f"{day}T10:0{j}:00+00:00"}
                                for j, (i, s, t) in enumerate(turns)]}
                     for day, turns in sessions],
        "questions": [{"id": "ana-q1", "question": "Where does Ana live now?",
                       "asked_at": "2025-07-01T09:00:00+00:00", "kind": "current",
                       "gold": ["D2:1"], "stale": ["D1:1"]}]}
    path = tmp_path / "ana.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_the_retained_run_hides_the_old_session_before_the_question(tmp_path: Path) -> None:
    summary = run_change(["bm25"], load_change([_move(tmp_path)]), config_overrides=FAST,
                         show_progress=False, retention=RetentionPolicy(unused_days=90))
    plain, kept = summary["presets"]["bm25"], summary["presets"]["bm25+retain"]
    assert "retention" not in plain
    assert kept["retention"] == {"policy": {"unused_days": 90},
                                 "hidden": {"superseded": 0, "small_talk": 0, "unused": 2}}
    # BM25 puts the January turn ("live") first; hidden, it is gone and Porto is first.
    assert plain["by_kind"]["current"]["stale_first@5"] == 100.0
    assert kept["by_kind"]["current"]["stale_first@5"] == 0.0
    assert kept["by_kind"]["current"]["Hit@1"] == 100.0


def test_locomo_runs_each_preset_with_and_without_the_policy() -> None:
    summary, _ = run_locomo(LOCOMO_TINY, ["bm25"], ks=(5,), config_overrides=FAST,
                            show_progress=False, retention=RetentionPolicy(unused_days=0))
    assert list(summary["presets"]) == ["bm25", "bm25+retain"]
    kept = summary["presets"]["bm25+retain"]
    assert kept["retention"]["hidden"]["unused"] > 0  # every turn is older than 0 days
    assert kept["overall"]["R@5"] <= summary["presets"]["bm25"]["overall"]["R@5"]


def test_retain_values_are_checked() -> None:
    assert parse_retain(None) is None
    assert parse_retain(["superseded_days=30", "small_talk_days=0"]) == RetentionPolicy(
        superseded_days=30, small_talk_days=0)
    for bad in (["unused_days"], ["unused_days=-1"], ["unused_days=x"]):
        with pytest.raises(LabileError, match="RULE=DAYS"):
            parse_retain(bad)
    with pytest.raises(LabileError, match="unknown rule"):
        parse_retain(["forever=1"])


def test_the_command_refuses_retain_with_a_real_model(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "locomo", str(LOCOMO_TINY), "--llm", "litellm", "--retain",
                 "unused_days=1"])
    assert code == 2 and "--retain is for the offline run" in capsys.readouterr().err
