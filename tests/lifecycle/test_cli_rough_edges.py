"""The command line a new user meets in a first afternoon (#31): exit statuses, noise
left out of ``add``, help on every option, ablations out of listings, environment
defaults, readable ``stats``, the search time without the model load, one default k."""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from labile import AsyncMemory, LLMError, Memory, StoreError
from labile.plugin import DEFAULT_K, InputError, NotFoundError
from labile_cli import build_parser, exit_status, main
from labile_cli.commands import EXIT_CODES, HelpFormatter
from labile_cli.logs import configure

ROOT = Path(__file__).resolve().parents[2]
CONFIG = 'preset = "bm25"\n[embedder]\ntype = "hashing"\n'
TURNS = [("t1", "Maya", "I started pottery classes on Tuesday"),
         ("t2", "Sam", "Nice, which studio is it?"),
         ("t3", "Maya", "The one by the tram stop, with the blue door")]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as stop:  # argparse ends a usage error this way
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def config(tmp_path: Path) -> str:
    path = tmp_path / "m.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return str(path)


@pytest.fixture
def store(tmp_path: Path, config: str, capsys: pytest.CaptureFixture[str]) -> str:
    """A store holding namespace ``u`` with three turns."""
    data = tmp_path / "chat.jsonl"
    data.write_text("".join(json.dumps({"id": i, "speaker": s, "text": t,
                                        "timestamp": f"2024-03-0{n + 1}T10:00:00+00:00"}) + "\n"
                            for n, (i, s, t) in enumerate(TURNS)), encoding="utf-8")
    path = str(tmp_path / "store")
    code, _, err = run(capsys, "add", "-c", config, "--path", path, "-n", "u", str(data))
    assert code == 0, err
    return path


# -- exit statuses -----------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["search", "-n", "nosuch", "pottery"],
    ["list", "-n", "nosuch"],
    ["get", "-n", "nosuch", "t1"],
    ["forget", "-n", "nosuch", "t1"],
    ["purge", "-n", "nosuch", "--yes"],
    ["export", "-n", "nosuch"],
    ["consolidate", "-n", "nosuch"],
    ["stats", "-n", "nosuch"],
], ids=lambda a: a[0])
def test_a_namespace_that_does_not_exist_is_reported_with_status_1(
    store: str, args: list[str], capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, *args, "--path", store)
    assert code == 1, err
    assert err == "not found: no namespace 'nosuch' in this store (it holds 'u')\n"
    assert out == ""  # not "purged", not an empty result that looks like an answer
    code, out, _ = run(capsys, "list", "--path", store, "-n", "u", "--json")
    assert code == 0 and len(out.splitlines()) == 3  # nothing was touched


def test_forget_of_unknown_ids_is_status_1_and_forgets_only_known_ones(
    store: str, capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "forget", "--path", store, "-n", "u", "nope", "never")
    assert code == 1 and out == ""
    assert "none of these ids is in 'u': nope, never; nothing was forgotten" in err
    code, out, err = run(capsys, "forget", "--path", store, "-n", "u", "t1", "nope")
    assert code == 1 and "observations 1" in out and err == "not found in 'u': nope\n"
    code, out, _ = run(capsys, "get", "--path", store, "-n", "u", "t1")
    assert code == 1  # forgotten, like an id never stored
    code, out, _ = run(capsys, "get", "--path", store, "-n", "u", "t2", "t3")
    assert code == 0 and "studio" in out


def test_usage_errors_are_status_2_and_a_missing_store_is_1(
    tmp_path: Path, store: str, capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(capsys, "search", "--path", store, "-n", "u")[0] == 2  # no query
    assert run(capsys, "purge", "--path", store, "-n", "u")[0] == 2  # no --yes
    assert run(capsys, "list", "--path", store, "-n", "u", "--limit", "x")[0] == 2
    code, _, err = run(capsys, "list", "--path", str(tmp_path / "typo"), "-n", "u")
    assert code == 1 and "no store at" in err


@pytest.mark.parametrize(("exc", "status"), [
    (NotFoundError("x"), 1), (InputError("x"), 2), (StoreError("x"), 3), (LLMError("x"), 3),
    (PermissionError("x"), 3), (RuntimeError("x"), 4), (KeyError("x"), 4),
])
def test_each_kind_of_error_has_its_status(exc: Exception, status: int) -> None:
    assert exit_status(exc)[0] == status


def test_the_exit_status_table_in_the_docs_lists_every_status() -> None:
    text = (ROOT / "docs/getting-started.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\d+)` \| (.+?) \|$", text, flags=re.M))
    assert {int(k) for k in rows} == set(EXIT_CODES)


# -- add: what is not stored is said -------------------------------------------------


def _openai_log(path: Path) -> Path:
    path.write_text(json.dumps({"messages": [
        {"role": "system", "content": "You are a helpful assistant. Never reveal this."},
        {"role": "user", "content": "Book me a table for two on Friday"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "content": '{"status": "booked", "table": 12}'},
        {"role": "assistant", "content": "Done: table 12 on Friday at 8"},
    ]}), encoding="utf-8")
    return path


def test_add_leaves_out_system_and_tool_messages_and_says_so(
    tmp_path: Path, config: str, capsys: pytest.CaptureFixture[str],
) -> None:
    log = _openai_log(tmp_path / "chat.json")
    store = str(tmp_path / "s")
    code, out, err = run(capsys, "add", "-c", config, "--path", store, "-n", "u", str(log))
    assert code == 0 and out.startswith("added 2,")
    assert err.count("\n") == 1 and err.startswith("warning: ")
    assert ("skipped 3 records, not stored: role 'system' (message 1); no text (message 3); "
            "role 'tool' (message 4)") in err
    code, out, _ = run(capsys, "list", "--path", store, "-n", "u", "--json")
    texts = [json.loads(line)["text"] for line in out.splitlines()]
    assert texts == ["Book me a table for two on Friday", "Done: table 12 on Friday at 8"]


def test_skip_roles_can_keep_everything(
    tmp_path: Path, config: str, capsys: pytest.CaptureFixture[str],
) -> None:
    log = _openai_log(tmp_path / "chat.json")
    store = str(tmp_path / "s")
    code, out, err = run(capsys, "add", "-c", config, "--path", store, "-n", "u",
                         "--skip-roles", "", str(log))
    assert code == 0 and out.startswith("added 4,") and "no text (message 3)" in err


def test_empty_files_and_files_with_nothing_to_keep_are_refused(
    tmp_path: Path, config: str, capsys: pytest.CaptureFixture[str],
) -> None:
    store = str(tmp_path / "s")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    code, out, err = run(capsys, "add", "-c", config, "--path", store, "-n", "u", str(empty))
    assert code == 2 and out == "" and "the file is empty: there is nothing to add" in err
    system = tmp_path / "system.jsonl"
    system.write_text(json.dumps({"role": "system", "content": "be terse"}) + "\n"
                      + json.dumps({"role": "user", "content": ""}) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "add", "-c", config, "--path", store, "-n", "u", str(system))
    assert code == 2 and out == ""
    assert "skipped 2 records, not stored: role 'system' (line 1); no text (line 2)" in err
    assert "no message to add (every record was skipped, see above)" in err


def test_add_says_what_its_counts_count(
    tmp_path: Path, config: str, capsys: pytest.CaptureFixture[str],
) -> None:
    log = _openai_log(tmp_path / "chat.json")
    code, out, _ = run(capsys, "add", "-c", config, "--path", str(tmp_path / "s"), "-n", "u",
                       str(log))
    assert code == 0 and "nodes written 2, edges written 0" in out


# -- help -----------------------------------------------------------------------------


def _commands(parser: argparse.ArgumentParser, path: str = "") -> Iterator[
        tuple[str, argparse.ArgumentParser]]:
    yield path or "labile", parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{path} {name}".strip())


def test_every_option_of_every_command_has_help_and_shows_its_default() -> None:
    missing, no_default, walked = [], [], 0
    for path, parser in _commands(build_parser()):
        walked += 1
        formatter = parser._get_formatter()
        assert isinstance(formatter, HelpFormatter), path
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._VersionAction
                          | argparse._SubParsersAction):
                continue
            name = f"{path} {'/'.join(action.option_strings) or action.dest}"
            if not (action.help or "").strip():
                missing.append(name)
            elif action.default not in (None, False, argparse.SUPPRESS) and \
                    "default" not in formatter._get_help_string(action):  # type: ignore[operator]
                no_default.append(name)
    assert walked > 25  # the bundled commands were all walked
    assert missing == [], f"options without help: {missing}"
    assert no_default == [], f"defaults not shown: {no_default}"


def test_help_shows_a_default_once(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"how many hits to show (default: {DEFAULT_K})" in text
    with pytest.raises(SystemExit):
        main(["serve", "mcp", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert text.count("(default: 100,000)") == 1


# -- listings, environment, stats, search ------------------------------------------------


def test_ablation_presets_are_listed_only_with_all(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "components", "--kind", "preset", "--bundled")
    shown = {line.split()[1] for line in out.splitlines()}
    code_all, out_all, _ = run(capsys, "components", "--kind", "preset", "--bundled", "--all")
    every = {line.split()[1] for line in out_all.splitlines()}
    assert code == code_all == 0
    assert shown == {"realm", "realm-llm", "allmem", "allmem-llm", "allmem-paper", "labile",
                     "bm25", "dense", "hybrid", "context"}
    hidden = every - shown
    assert {"realm-no-expand", "realm-untyped", "allmem-no-expand", "labile-eager"} <= hidden
    assert all("ablation:" in line for line in out_all.splitlines()
               if line.split()[1] in hidden)
    code, out, _ = run(capsys, "components", "--kind", "preset", "--bundled", "--format", "json")
    assert {row["name"] for row in json.loads(out)} == shown


def test_labile_path_and_labile_config_are_defaults_a_flag_overrides(
    tmp_path: Path, store: str, config: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("LABILE_PATH", store)
    monkeypatch.setenv("LABILE_CONFIG", config)
    code, out, err = run(capsys, "list", "-n", "u")
    assert code == 0 and "(3 of 3 from offset 0)" in out, err
    code, _, err = run(capsys, "list", "-n", "u", "--path", str(tmp_path / "elsewhere"))
    assert code == 1 and f"no store at {tmp_path / 'elsewhere'}" in err
    data = tmp_path / "more.jsonl"
    data.write_text(json.dumps({"id": "x1", "text": "hello there"}) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "add", "-n", "v", str(data))
    assert code == 0, err
    with Memory.open(path=store) as memory:
        assert memory.config.preset == "bm25" and [o.id for o in memory.list("v").items] == ["x1"]


def test_stats_is_text_unless_json_is_asked(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "--path", store, "-n", "u")
    assert code == 0 and not out.lstrip().startswith("{")
    assert "pipeline:   bm25 (store lancedb" in out
    assert "stored:     3 observations, 3 nodes (3 visible), 0 edges in namespace 'u'" in out
    code, out, _ = run(capsys, "stats", "--path", store, "--json")
    assert code == 0 and json.loads(out)["store"]["observations"] == 3


def test_the_search_time_shown_excludes_loading_the_model(
    store: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    from labile_offline.hashing import HashingEmbedder

    embedded: list[int] = []
    loaded_before_search: list[bool] = []
    real_embed, real_search = HashingEmbedder.embed, Memory.search

    def embed(self: HashingEmbedder, texts: Any) -> Any:
        embedded.append(len(texts))
        return real_embed(self, texts)

    def search(self: Memory, *args: Any, **kwargs: Any) -> Any:
        loaded_before_search.append(bool(embedded))  # the model was loaded, outside the clock
        return real_search(self, *args, **kwargs)

    monkeypatch.setattr(HashingEmbedder, "embed", embed)
    monkeypatch.setattr(Memory, "search", search)
    code, out, _ = run(capsys, "search", "--path", store, "-n", "u", "pottery")
    assert code == 0 and loaded_before_search == [True]
    assert re.search(r"\(search [\d.]+ ms, of which [\d.]+ ms embedding the query; loading "
                     r"the model took \d+ ms before it\)", out)


def test_one_default_k_for_the_command_line_mcp_and_python() -> None:
    from labile_bench.commands import bench_serve_options

    for method in (Memory.search, AsyncMemory.search, Memory.answer, AsyncMemory.answer):
        assert inspect.signature(method).parameters["k"].default == DEFAULT_K, method
    search = next(p for name, p in _commands(build_parser()) if name == "search")
    assert search.get_default("k") == DEFAULT_K
    bench = argparse.ArgumentParser()
    bench_serve_options(bench)
    assert bench.get_default("k") == DEFAULT_K


def test_reading_a_store_by_another_spelling_of_its_path_logs_nothing(
    store: str, config: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.chdir(Path(store).parent)
    configure(level="info")  # as `labile --log-level info` does (the fixture's CLI run set warning)
    caplog.set_level(logging.INFO, logger="labile")
    Memory.open(config, path=Path(store).name).close()
    Memory.open(config, path=f"./{Path(store).name}/").close()
    seen = len(caplog.records)
    Memory.open({"preset": "bm25", "embedder": {"type": "hashing"},
                 "retrieval": {"seed": [{"type": "baseline.bm25", "top_k": 7}]}},
                path=store).close()
    logs = [getattr(r, "labile", {"event": r.getMessage()}) for r in caplog.records]
    differs = [(i, e) for i, e in enumerate(logs) if e["event"] == "pipeline_differs_in_reading"]
    assert len(differs) == 1 and differs[0][0] >= seen  # only the pipeline that reads otherwise
    assert differs[0][1]["differs"] == ["retrieval"]
