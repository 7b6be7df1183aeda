"""``labile bench bigturn``: one long message added whole or in parts, one row per size."""

from __future__ import annotations

from pathlib import Path

import pytest

from labile import MAX_OBSERVATION_CHARS
from labile_bench.bigturn import message, run_bigturn
from labile_cli import main


def test_the_message_has_the_size_asked_and_does_not_change() -> None:
    assert len(message(12_345)) == 12_345 and message(500) == message(500)


def test_rows_per_size_whole_and_chunked(tmp_path: Path) -> None:
    rows = run_bigturn("bm25", [2_000, 4_000], chunk=False, embedder="hashing",
                       directory=tmp_path / "whole")
    assert [(r["chars"], r["parts"]) for r in rows] == [(2_000, 1), (4_000, 1)]
    assert rows[0]["vs_smallest"] == 1.0 and all(r["seconds"] >= 0 for r in rows)
    size = MAX_OBSERVATION_CHARS + 50_000
    chunked = run_bigturn("bm25", [size], chunk=True, embedder="hashing",
                          directory=tmp_path / "parts")
    assert chunked[0]["parts"] == 2


def test_the_command_prints_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "bigturn", "--preset", "bm25", "--sizes", "1000",
                 "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| preset | chars | parts | seconds")
    assert out[2].startswith("| bm25 | 1000 | 1 |")
