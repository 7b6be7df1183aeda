"""``labile retain`` end to end: dry run, save and apply, restore, and its exit statuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from retention_helpers import turns

from labile import Memory
from labile_cli import main

CONFIG = 'preset = "bm25"\n[embedder]\ntype = "hashing"\n'
NOW = "2025-02-04T09:00:00+00:00"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def store(tmp_path: Path) -> str:
    cfg = tmp_path / "m.toml"
    cfg.write_text(CONFIG)
    path = str(tmp_path / "store")
    with Memory.open(cfg, path=path) as memory:
        memory.add(turns("t", [0, 1, 2, 380, 390, 395]), namespace="u")
        memory.add(turns("o", [0, 1]), namespace="other")
    return path


def _visible(path: str, namespace: str) -> set[str]:
    with Memory.open(path=path) as memory:
        hits = memory.search("pottery Lisbon thanks Ines Alps sounds Porto", namespace=namespace,
                             k=50).hits
    return {s for h in hits for s in h.node.sources}


def test_dry_run_lists_what_and_why_and_changes_nothing(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "retain", "--path", store, "-n", "u", "--unused-days", "90",
                         "--small-talk-days", "0", "--now", NOW, "--dry-run")
    assert code == 0, err
    lines = out.strip().splitlines()
    # t0 and t2 unused; t1 ("Hey, thanks so much!") and t4 ("haha okay") small talk
    assert sum(line.startswith("would hide ") for line in lines) == 4
    assert any(line.endswith(": small_talk") and "learned 2025-01-" in line for line in lines)
    assert lines[-1] == ("u: would hide 4 (superseded 0, small_talk 2, unused 2) "
                         "under unused_days=90, small_talk_days=0")
    assert _visible(store, "u") == {f"t{i}" for i in range(6)}


def test_save_apply_restore(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "retain", "--path", store, "-n", "u", "--unused-days", "90",
                         "--save", "--now", NOW, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["counts"]["unused"] == 3 and not report["dry_run"]
    assert _visible(store, "u") == {"t3", "t4", "t5"}
    assert _visible(store, "other") == {"o0", "o1"}  # another namespace is untouched
    code, out, _ = run(capsys, "retain", "--path", store, "-n", "u", "--now", NOW)  # saved
    assert code == 0 and out.strip() == "u: hide 0 (superseded 0, small_talk 0, unused 0) " \
                                        "under unused_days=90"
    code, out, _ = run(capsys, "retain", "--path", store, "-n", "u", "--restore", "--dry-run")
    assert code == 0 and out.strip().endswith("u: would restore 3")
    code, out, _ = run(capsys, "retain", "--path", store, "-n", "u", "--restore")
    assert code == 0 and _visible(store, "u") == {f"t{i}" for i in range(6)}


@pytest.mark.parametrize(("args", "message"), [
    ((), "no saved retention policy"),
    (("--unused-days", "-3"), "unused_days must be a whole number of days from 0 to 36500"),
    (("--restore", "--unused-days", "3"), "--restore takes no rules"),
    (("--save",), "--save needs at least one rule"),
    (("--reason", "unused"), "--reason is for --restore"),
    (("--unused-days", "3", "--now", "2025-01-01"), "has no UTC offset"),
    (("--unused-days", "3", "--now", "soon"), "--now 'soon' is not an ISO 8601 time"),
])
def test_bad_input_exits_2_naming_the_problem_and_keeps_the_store(
    store: str, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, _, err = run(capsys, "retain", "--path", store, "-n", "u", *args)
    assert code == 2 and message in err
    assert _visible(store, "u") == {f"t{i}" for i in range(6)}


def test_an_unknown_path_or_namespace_is_not_found(
    store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "retain", "--path", str(tmp_path / "nothing"), "-n", "u",
                       "--unused-days", "3")
    assert code == 1 and "not found" in err
    code, _, err = run(capsys, "retain", "--path", store, "-n", "uu", "--unused-days", "3",
                       "--save")
    assert code == 1 and "no namespace 'uu'" in err and "'u'" in err


def test_search_shows_hidden_memories_only_when_asked(
    store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "retain", "--path", store, "-n", "u", "--unused-days", "90",
               "--now", NOW)[0] == 0
    code, out, _ = run(capsys, "search", "--path", store, "-n", "u", "pottery class Lisbon")
    assert code == 0 and "pottery" not in out and "hidden by retention" not in out
    code, out, _ = run(capsys, "search", "--path", store, "-n", "u", "--include-hidden",
                       "pottery class Lisbon")
    assert code == 0 and "pottery" in out
    assert f"hidden by retention since {NOW}: unused" in out
