"""``labile bench embed``: one row per embedder, each compared with the first, on LoCoMo turns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from labile import ConfigError, UnknownComponentError
from labile_bench.embed_speed import _agreement, embed_summary, locomo_texts
from labile_cli import main

TINY = Path(__file__).parent / "data" / "locomo_tiny.json"  # one conversation, 6 turns


def _write_locomo(path: Path, turns: int) -> Path:
    """A LoCoMo file of one conversation with ``turns`` turns in one session."""
    session = [{"speaker": "Ann" if i % 2 == 0 else "Bob", "dia_id": f"D1:{i + 1}",
                "text": f"turn number {i} is about {'hiking' if i % 3 else 'pottery'}"}
               for i in range(turns)]
    sample = {"sample_id": "tmp-1", "qa": [],
              "conversation": {"speaker_a": "Ann", "speaker_b": "Bob",
                               "session_1_date_time": "1:56 pm on 8 May, 2023",
                               "session_1": session}}
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


def test_texts_are_the_first_turns_as_speaker_colon_text(tmp_path: Path) -> None:
    data = _write_locomo(tmp_path / "locomo.json", 5)
    assert locomo_texts(data, 2) == ["Ann: turn number 0 is about pottery",
                                     "Bob: turn number 1 is about hiking"]
    assert len(locomo_texts(data, 50)) == 5


def test_a_row_per_embedder_in_order_each_against_the_first(tmp_path: Path) -> None:
    data = _write_locomo(tmp_path / "locomo.json", 12)
    specs = [{"type": "hashing"}, {"type": "hashing"}, {"type": "hashing", "dim": 128}]
    summary = embed_summary(data, specs, texts=10, singles=3,
                            labels=["hashing", "hashing", "hashing:dim=128"])
    rows = summary["rows"]
    assert [r["embedder"] for r in rows] == ["hashing", "hashing", "hashing:dim=128"]
    assert [r["dim"] for r in rows] == [256, 256, 128]
    assert rows[0]["vs_first"] == 1.0
    assert rows[0]["cosine_mean"] is None and rows[0]["cosine_min"] is None
    assert rows[1]["cosine_mean"] == pytest.approx(1.0) and rows[1]["cosine_min"] == \
        pytest.approx(1.0)  # the same embedder twice gives the same vectors
    assert rows[2]["cosine_mean"] is None and rows[2]["cosine_min"] is None  # 128 vs 256
    for row in rows:
        assert row["texts_per_s"] > 0 and row["single_p95_ms"] >= row["single_p50_ms"] >= 0
        assert row["vs_first"] == pytest.approx(row["texts_per_s"] / rows[0]["texts_per_s"],
                                                rel=1e-2)
    assert summary["texts"] == summary["texts_requested"] == 10 and "note" not in summary
    assert len(summary["load_avg_start"]) == len(summary["load_avg_end"]) == 3


def test_agreement_is_the_row_wise_cosine_mean_and_min() -> None:
    first = np.array([[1, 0], [0, 2], [3, 4]], dtype=np.float32)
    other = np.array([[1, 0], [2, 0], [-3, -4]], dtype=np.float32)
    assert _agreement(first, other) == {"cosine_mean": pytest.approx(0.0),
                                        "cosine_min": pytest.approx(-1.0)}
    assert _agreement(first, other[:, :1]) == {"cosine_mean": None, "cosine_min": None}


def test_more_texts_than_turns_uses_what_there_is_and_says_so() -> None:
    summary = embed_summary(TINY, [{"type": "hashing"}], texts=500, singles=2)
    assert summary["texts_requested"] == 500 and summary["texts"] == 6
    assert "only 6 turns" in summary["note"]


def test_an_unknown_embedder_lists_the_registered_ones_before_any_is_run() -> None:
    with pytest.raises(UnknownComponentError, match=r"unknown embedder 'hashin'.*did you mean "
                                                    r"'hashing'.*available: .*hashing"):
        embed_summary(TINY, [{"type": "hashing"}, {"type": "hashin"}], texts=3, singles=1)
    with pytest.raises(ConfigError, match=r"dimm .*--embedder hashing:dimm=3"):
        embed_summary(TINY, [{"type": "hashing", "dimm": 3}], texts=3, singles=1,
                      labels=["hashing:dimm=3"])


def test_the_command_prints_the_table_and_writes_the_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_json = tmp_path / "embed.json"
    assert main(["bench", "embed", "--embedder", "hashing", "hashing:dim=64", "--texts", "4",
                 "--singles", "2", "--data", str(TINY), "--json", str(out_json)]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = lines.index("| embedder | dim | texts/s | vs first | single p50 ms | single p95 ms "
                       "| load RSS MB | cos mean | cos min |")
    assert lines[head + 2].startswith("| hashing | 256 |")
    assert lines[head + 3].startswith("| hashing:dim=64 | 64 |") and lines[head + 3].endswith(
        "| - | - |")
    summary = json.loads(out_json.read_text(encoding="utf-8"))
    assert [r["embedder"] for r in summary["rows"]] == ["hashing", "hashing:dim=64"]
    assert summary["texts"] == 4 and summary["rows"][0]["vs_first"] == 1.0


def test_the_command_names_the_unknown_embedder_and_a_missing_default_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["bench", "embed", "--embedder", "nope", "--data", str(TINY)]) == 2
    assert "unknown embedder 'nope'" in capsys.readouterr().err
    monkeypatch.setenv("LABILE_LOCOMO", str(tmp_path / "absent.json"))
    assert main(["bench", "embed", "--embedder", "hashing"]) == 2
    err = capsys.readouterr().err
    assert "no LoCoMo file at" in err and "give --data PATH" in err
    assert main(["bench", "embed", "--embedder", "hashing", "--data", str(TINY),
                 "--singles", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err
