"""The command line, run in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labile.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_plugins_lists_bundles(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plugins", "--json")
    data = json.loads(out)
    names = {p["name"] for p in data["plugins"]}
    assert {"labile.essentials", "baseline", "offline", "lancedb"} <= names
    assert code == (1 if data["errors"] else 0)


def test_components_shows_options_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "components", "--kind", "seeder")
    assert code == 0
    assert "baseline.hybrid" in out and "rrf_k: int = 60" in out


def test_components_unknown_kind(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "components", "--kind", "seeders")
    assert code == 2 and "unknown component kind 'seeders'" in err and "seeder" in err


def test_check_prints_resolved_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "ok.toml"
    cfg.write_text('preset = "bm25"\n[store]\ntype = "memory"\n')
    code, out, _ = run(capsys, "check", str(cfg))
    assert code == 0
    assert "valid (preset 'bm25')" in out and 'type = "baseline.bm25"' in out
    assert "[store]" in out and 'type = "memory"' in out


def test_check_names_the_bad_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('preset = "hybrid"\n[[retrieval.seed]]\ntype = "baseline.hybrid"\n'
                   'rrf_k = "sixty"\n')
    code, _, err = run(capsys, "check", str(cfg))
    assert code == 2
    assert "expected an integer, got str 'sixty' @ $.retrieval.seed[0].rrf_k" in err


def test_check_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", "/nonexistent/x.toml")
    assert code == 2 and "config file not found" in err


def test_add_search_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "obs.jsonl"
    data.write_text(
        json.dumps({"id": "a1", "text": "My violin lesson is on Friday",
                    "timestamp": "2024-02-01T10:00:00+00:00", "speaker": "Ana"}) + "\n"
        + json.dumps({"id": "a2", "text": "The garden needs water",
                      "timestamp": "2024-02-01T10:05:00+00:00", "speaker": "Ben"}) + "\n")
    cfg = tmp_path / "m.toml"
    cfg.write_text('preset = "bm25"\n[embedder]\ntype = "hashing"\n')
    store = str(tmp_path / "store")
    code, out, _ = run(capsys, "add", "-c", str(cfg), "--path", store, "-n", "u", str(data))
    assert code == 0 and "added 2" in out
    code, out, _ = run(capsys, "add", "-c", str(cfg), "--path", store, "-n", "u", str(data))
    assert "added 0, already stored 2" in out
    code, out, _ = run(capsys, "search", "-c", str(cfg), "--path", store, "-n", "u", "-k", "1",
                       "violin")
    assert code == 0 and "violin" in out and "sources: a1" in out


def test_add_rejects_naive_timestamps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "obs.jsonl"
    data.write_text(json.dumps({"id": "a1", "text": "x", "timestamp": "2024-02-01T10:00:00"}))
    code, _, err = run(capsys, "add", "--preset", "bm25", "--path", str(tmp_path / "s"),
                       "-n", "u", str(data))
    assert code == 2 and "obs.jsonl:1" in err and "timezone-aware" in err


def test_demo_runs_offline(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "demo")
    assert code == 0
    assert out.count("Q: ") == 5
    assert "← S" in out  # source turns are shown
    assert "store:" in out


def test_bench_scale_small(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "scale.json"
    code, out, _ = run(capsys, "bench", "scale", "--nodes", "300", "--queries", "20",
                       "--dim", "32", "--json", str(out_file))
    assert code == 0
    data = json.loads(out_file.read_text())
    assert data == json.loads(out)
    assert any("recall" in key for key in data)


def test_bench_locomo_on_fixture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixture = Path(__file__).parents[1] / "bench" / "data" / "locomo_tiny.json"
    out_file = tmp_path / "summary.json"
    code, out, _ = run(capsys, "bench", "locomo", str(fixture), "--preset", "bm25",
                       "--k", "5", "--json", str(out_file), "--no-progress")
    assert code == 0 and "R@5" in out and "bm25" in out
    summary = json.loads(out_file.read_text())
    assert summary["schema_version"] == 1 and summary["presets"]["bm25"]["overall"]["n"] == 3


def test_inspect_allmem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "obs.jsonl"
    rows = [{"id": f"t{i}", "text": text, "timestamp": f"2024-02-0{i}T10:00:00+00:00",
             "speaker": "Ana", "session": "1"}
            for i, text in enumerate(["I love hiking in the Alps.", "My cat is called Pixel.",
                                      "I moved to Lisbon last year."], 1)]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    cfg = tmp_path / "m.toml"
    cfg.write_text('preset = "allmem"\n[embedder]\ntype = "hashing"\n')
    store = str(tmp_path / "store")
    assert run(capsys, "add", "-c", str(cfg), "--path", store, "-n", "u", str(data))[0] == 0
    code, out, _ = run(capsys, "consolidate", "-c", str(cfg), "--path", store, "-n", "u")
    assert code == 0 and "allmem.atc" in out
    code, out, _ = run(capsys, "inspect", "allmem", "-c", str(cfg), "--path", store, "-n", "u")
    assert code == 0
    report = json.loads(out)
    assert report  # the diagnostics of a 3-unit namespace
