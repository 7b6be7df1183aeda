"""The bundle's commands, run through the ``labile`` shell in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labile._plugins import get_plugin_manager
from labile_cli import main
from labile_cli.commands import collect_commands

DATA = Path(__file__).parent / "data"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_bundle_registers_demo_and_the_dataset_commands() -> None:
    import labile_bench

    commands = collect_commands(get_plugin_manager(entry_points=False, extra=[labile_bench]))
    runnable = {c.name: c.plugin for c in commands if c.run is not None}
    assert runnable == {"demo": "labile_bench", "bench locomo": "labile_bench",
                        "bench change": "labile_bench",
                        "bench longmemeval": "labile_bench", "bench transfer": "labile_bench",
                        "bench compare": "labile_bench", "bench graph": "labile_bench",
                        "bench crash": "labile_bench", "bench scale": "labile_bench",
                        "bench workers": "labile_bench", "bench atc": "labile_bench",
                        "bench serve": "labile_bench", "bench http": "labile_bench",
                        "bench cycles": "labile_bench", "bench bigturn": "labile_bench",
                        "bench entities": "labile_bench", "bench embed": "labile_bench"}
    group = commands.get(("bench",))
    assert group is not None and group.run is None and group.help == "benchmarks"


def test_demo_runs_offline(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "demo")
    assert code == 0
    assert out.count("Q: ") == 5
    assert "← S" in out  # source turns are shown
    assert "store:" in out


def test_bench_locomo_on_fixture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "summary.json"
    code, out, _ = run(capsys, "bench", "locomo", str(DATA / "locomo_tiny.json"), "--preset",
                       "bm25", "--k", "5", "--json", str(out_file), "--no-progress")
    assert code == 0 and "R@5" in out and "bm25" in out
    summary = json.loads(out_file.read_text())
    assert summary["schema_version"] == 1 and summary["presets"]["bm25"]["overall"]["n"] == 3


def test_bench_compare_counts_changed_ranked_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Logs of two runs of one preset show 0 changed lists; a reordered list counts as 1."""
    fixture = str(DATA / "locomo_tiny.json")
    for name in ("a", "b"):
        assert run(capsys, "bench", "locomo", fixture, "--preset", "bm25", "--k", "5",
                   "--log-dir", str(tmp_path / name), "--no-progress")[0] == 0
    log_a, log_b = tmp_path / "a" / "locomo-bm25.jsonl", tmp_path / "b" / "locomo-bm25.jsonl"
    code, out, _ = run(capsys, "bench", "compare", str(log_a), str(log_b))
    assert code == 0 and "ranked lists changed: 0 of 3" in out
    rows = [json.loads(line) for line in log_b.read_text().splitlines()]
    rows[1]["retrieved_turns"] = list(reversed(rows[1]["retrieved_turns"]))
    assert len(set(rows[1]["retrieved_turns"])) > 1, "the fixture must retrieve several turns"
    log_b.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = run(capsys, "bench", "compare", str(log_a), str(log_b))
    assert code == 0 and "ranked lists changed: 1 of 3" in out


def test_bench_compare_names_a_file_that_is_not_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"not": "a log"}\n')
    code, _, err = run(capsys, "bench", "compare", str(bad), str(bad))
    assert code == 2 and "is not a per-question log" in err and "x.jsonl" in err


def test_blocking_the_bundle_removes_its_commands(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LABILE_DISABLE_PLUGINS", "bench")
    with pytest.raises(SystemExit) as info:
        main(["demo"])
    assert info.value.code == 2
    assert "invalid choice: 'demo'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    # every benchmark lives in the bench bundle (the runtime bundles carry none): all go
    assert "demo" not in out and "bench" not in out


def test_bench_locomo_llm_subset_options(capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:
    """--limit-sessions needs --llm; with it the real-model runner prints its table."""
    code, _, err = run(capsys, "bench", "locomo", str(DATA / "locomo_tiny.json"),
                       "--limit-sessions", "1")
    assert code != 0 and "--llm" in err
    out_json = tmp_path / "s.json"
    code, out, _ = run(capsys, "bench", "locomo", str(DATA / "locomo_tiny.json"), "--preset",
                       "bm25", "--llm", "scripted", "--limit-sessions", "1", "--no-qa",
                       "--json", str(out_json), "--no-progress")
    assert code == 0 and "ingest calls/turn" in out and "R@5 recon. off" in out
    assert json.loads(out_json.read_text())["kind"] == "locomo-llm"


def test_bench_locomo_embedder_replaces_every_presets_embedder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """--embedder TYPE:key=value reaches the stores; a bad spec and --llm are refused."""
    fixture = str(DATA / "locomo_tiny.json")
    code, out, _ = run(capsys, "bench", "locomo", fixture, "--preset", "dense", "--k", "5",
                       "--embedder", "hashing:dim=64", "--store-dir", str(tmp_path),
                       "--no-progress")
    assert code == 0 and "dense" in out
    record = json.loads((tmp_path / "dense" / "labile-pipeline.json").read_text())
    assert record["pipeline"]["embedder"] == {"type": "hashing", "dim": 64}
    code, _, err = run(capsys, "bench", "locomo", fixture, "--embedder", "hashing:dim")
    assert code == 2 and "--embedder 'hashing:dim': option 'dim' is not key=value" in err
    code, _, err = run(capsys, "bench", "locomo", fixture, "--embedder", "hashing",
                       "--llm", "scripted")
    assert code == 2 and "--embedder goes with the offline run" in err
