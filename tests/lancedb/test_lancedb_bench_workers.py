"""``labile bench workers``: the many-processes benchmark reports every figure, and
refuses bad options with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labile_cli import main


def test_the_workers_bench_reports_every_figure(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rows.json"
    code = main(["bench", "workers", "--workers", "1,2", "--batches", "2", "--batch-units",
                 "3", "--queries", "5", "--dir", str(tmp_path / "stores"), "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    rows = json.loads(out.read_text())
    assert [(r["location"], r["workers"]) for r in rows] == [("local", 1), ("local", 2)]
    for row in rows:
        assert row["ingest_units_per_s"] > 0 and row["search_qps"] > 0
        assert 0 < row["query_p50_ms"] <= row["query_p95_ms"]
        assert row["freshness_ms"] >= 0 and row["reload_ms"] > 0
    assert rows[0]["ingest_x"] == rows[0]["search_x"] == 1.0
    assert "| local | 2 |" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--workers", "0"], ["--workers", "x"],
                                  ["--option", "novalue"]])
def test_bad_options_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "workers", *args]) == 2
    assert "labile bench workers:" in capsys.readouterr().err
