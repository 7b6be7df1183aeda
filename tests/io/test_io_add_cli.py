"""``labile add`` end to end (#28 items 3, 4 and 7): ``--speaker`` and names that persist
in the namespace, ids from content (a renamed log adds nothing), missing timestamps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from labile import Memory
from labile_cli import main

HASHING_BM25 = 'preset = "bm25"\n[embedder]\ntype = "hashing"\n'

LOG = [
    {"role": "user", "content": "Hi! I'm Elena.", "timestamp": "2025-01-05T10:00:00"},
    {"role": "assistant", "content": "Welcome, how can I help?"},
    {"role": "user", "content": "ok"},
    {"role": "user", "content": "I work as a nurse.", "timestamp": "2025-01-05T10:04:00"},
    {"role": "user", "content": "ok"},
]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


class Cli:
    """``labile`` against one store, with captured output."""

    def __init__(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.cfg = tmp_path / "m.toml"
        self.cfg.write_text(HASHING_BM25)
        self.path = str(tmp_path / "store")
        self.capsys = capsys

    def add(self, *args: str) -> tuple[int, str, str]:
        code = main(["add", "-c", str(self.cfg), "--path", self.path, "-n", "u", *args])
        out, err = self.capsys.readouterr()
        return code, out, err

    def turns(self) -> list[Any]:
        with Memory.open(self.cfg, path=self.path) as memory:
            return list(memory.list("u", limit=1000).items)


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(tmp_path, capsys)


def test_the_same_log_under_another_name_adds_nothing_and_says_so(
        cli: Cli, tmp_path: Path) -> None:
    first = _jsonl(tmp_path / "chat.jsonl", LOG)
    code, out, _ = cli.add(str(first))
    assert code == 0 and out.startswith("added 5, already stored 0")
    renamed = tmp_path / "export-2025-06.jsonl"
    renamed.write_bytes(first.read_bytes())
    code, out, _ = cli.add(str(renamed))
    assert code == 0 and out.startswith("added 0, already stored 5")
    assert "nothing new: every message" in out
    assert len(cli.turns()) == 5  # "ok" said twice is two turns, each stored once


def test_a_grown_log_adds_only_the_new_lines_wherever_they_are(
        cli: Cli, tmp_path: Path) -> None:
    cli.add(str(_jsonl(tmp_path / "a.jsonl", LOG[1:])))
    code, out, _ = cli.add(str(_jsonl(tmp_path / "b.jsonl", [*LOG, {"role": "user",
                                                                    "content": "ok"}])))
    assert code == 0 and out.startswith("added 2, already stored 4")


def test_speaker_option_names_a_role_and_later_adds_remember_it(
        cli: Cli, tmp_path: Path) -> None:
    rows = [{"role": "user", "content": "I moved to Denver.", "timestamp": "2025-02-01"},
            {"role": "assistant", "content": "How is it?", "timestamp": "2025-02-01"}]
    code, _, err = cli.add("--speaker", "user=Elena", str(_jsonl(tmp_path / "a.jsonl", rows)))
    assert code == 0, err
    later = [{"role": "user", "content": "The snow is lovely.", "timestamp": "2025-02-03"}]
    cli.add(str(_jsonl(tmp_path / "b.jsonl", later)))  # a new process, the store reopened
    turns = cli.turns()
    assert [t.speaker for t in turns] == ["Elena", "assistant", "Elena"]
    assert turns[0].metadata == {"role": "user", "speaker_named_by": "caller"}
    assert turns[2].metadata == {"role": "user", "speaker_named_by": "introduction"}


def test_an_introduction_persists_and_an_explicit_speaker_overrides_or_undoes_it(
        cli: Cli, tmp_path: Path) -> None:
    cli.add(str(_jsonl(tmp_path / "a.jsonl", LOG[:2])))
    cli.add(str(_jsonl(tmp_path / "b.jsonl", [{"role": "user", "content": "One",
                                                "timestamp": "2025-02-01"}])))
    cli.add("--speaker", "user=Lena", str(_jsonl(tmp_path / "c.jsonl", [
        {"role": "user", "content": "Two", "timestamp": "2025-02-02"}])))
    cli.add(str(_jsonl(tmp_path / "d.jsonl", [{"role": "user", "content": "Three",
                                                "timestamp": "2025-02-03"}])))
    cli.add("--speaker", "user=user", str(_jsonl(tmp_path / "e.jsonl", [
        {"role": "user", "content": "Four", "timestamp": "2025-02-04"}])))
    cli.add(str(_jsonl(tmp_path / "f.jsonl", [{"role": "user", "content": "Five",
                                                "timestamp": "2025-02-05"}])))
    said = {t.text: t.speaker for t in cli.turns()}
    assert said == {"Hi! I'm Elena.": "Elena", "Welcome, how can I help?": "assistant",
                    "One": "Elena", "Two": "Lena", "Three": "Lena", "Four": "user",
                    "Five": "user"}


def test_a_bad_speaker_option_is_refused_before_anything_is_stored(
        cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli.add("--speaker", "Elena", str(_jsonl(tmp_path / "a.jsonl", LOG)))
    assert code != 0 and "--speaker 'Elena': expected ROLE=NAME" in err
    assert not Path(cli.path).exists()


def test_missing_times_take_the_previous_ones_with_a_warning(
        cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli.add(str(_jsonl(tmp_path / "a.jsonl", LOG)))
    assert code == 0
    assert "3 messages without a time took the time of the one before" in err
    assert "(lines 2, 3, 5)" in err
    stamps = [t.timestamp.isoformat() for t in cli.turns()]
    assert stamps == ["2025-01-05T10:00:00+00:00"] * 3 + ["2025-01-05T10:04:00+00:00"] * 2


def test_require_timestamps_refuses_a_file_with_some_missing(
        cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli.add("--require-timestamps", str(_jsonl(tmp_path / "a.jsonl", LOG)))
    assert code != 0
    assert "3 of 5 records have no time (line 2, line 3, line 5)" in err
    assert not Path(cli.path).exists()


def test_a_file_without_any_time_is_dated_by_timestamp_as_before(
        cli: Cli, tmp_path: Path) -> None:
    rows = [{k: v for k, v in r.items() if k != "timestamp"} for r in LOG]
    code, _, err = cli.add("--require-timestamps", "--timestamp", "2024-03-01T09:00",
                           str(_jsonl(tmp_path / "a.jsonl", rows)))
    assert code == 0 and "without a time" not in err
    assert {t.timestamp.isoformat() for t in cli.turns()} == {"2024-03-01T09:00:00+00:00"}


def test_names_and_content_ids_survive_export_and_import(
        cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _jsonl(tmp_path / "a.jsonl", LOG)
    cli.add(str(log))
    dump = tmp_path / "u.jsonl"
    common = ["-c", str(cli.cfg), "--path", cli.path]
    assert main(["export", *common, "-n", "u", "-o", str(dump)]) == 0
    assert main(["import", *common, "-n", "v", str(dump)]) == 0
    capsys.readouterr()
    code = main(["add", *common, "-n", "v", str(log)])  # the same log: nothing new
    out, _ = capsys.readouterr()
    assert code == 0 and out.startswith("added 0, already stored 5")
    later = _jsonl(tmp_path / "b.jsonl", [{"role": "user", "content": "I run daily.",
                                           "timestamp": "2025-02-01"}])
    assert main(["add", *common, "-n", "v", str(later)]) == 0
    with Memory.open(cli.cfg, path=cli.path) as memory:
        said = {o.text: o.speaker for o in memory.list("v", limit=100).items}
    assert said["I run daily."] == "Elena" and said["Hi! I'm Elena."] == "Elena"
