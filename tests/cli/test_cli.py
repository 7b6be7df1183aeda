"""The command line, run in-process: the shell, its own commands, and plugins' commands."""

from __future__ import annotations

import argparse
import json
import types
from datetime import datetime
from pathlib import Path
from typing import Any

import pluggy
import pytest

from extras import ECHO_INSTALL, require_module
from labile._errors import DuplicateComponentError, PluginLoadError
from labile._hookspecs import hookimpl
from labile._plugins import ESSENTIALS, get_plugin_manager
from labile.plugin import RegisterCommand, echo
from labile_cli import build_parser, list_plugins, main, register_shell_commands
from labile_cli.commands import Commands, collect_commands


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_plugins_lists_bundles(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "plugins", "--json")
    data = json.loads(out)
    names = {p["name"] for p in data["plugins"]}
    assert {"labile._essentials", "baseline", "offline", "lancedb"} <= names
    assert code == (1 if data["errors"] else 0)


def test_plugins_listing_has_versions_and_hooks(bundled_pm: pluggy.PluginManager) -> None:
    by_name = {i.name: i for i in list_plugins(bundled_pm)}
    assert "labile_register_stores" in by_name[ESSENTIALS].hooks
    assert "labile_register_embedders" in by_name["offline"].hooks


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


def _violin_log(tmp_path: Path, second: tuple[str, str, str]) -> tuple[Path, Path, str]:
    """A two-turn log (the violin lesson, then ``second`` = text, time, speaker), a bm25
    config on the hashing embedder, and a store path: ``(data, cfg, store)``."""
    text, when, speaker = second
    data = tmp_path / "obs.jsonl"
    data.write_text(
        json.dumps({"id": "a1", "text": "My violin lesson is on Friday",
                    "timestamp": "2024-02-01T10:00:00+00:00", "speaker": "Ana"}) + "\n"
        + json.dumps({"id": "a2", "text": text, "timestamp": when, "speaker": speaker}) + "\n")
    cfg = tmp_path / "m.toml"
    cfg.write_text('preset = "bm25"\n[embedder]\ntype = "hashing"\n')
    return data, cfg, str(tmp_path / "store")


def test_add_search_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, cfg, store = _violin_log(
        tmp_path, ("The garden needs water", "2024-02-01T10:05:00+00:00", "Ben"))
    code, out, _ = run(capsys, "add", "-c", str(cfg), "--path", store, "-n", "u", str(data))
    assert code == 0 and "added 2" in out
    code, out, _ = run(capsys, "add", "-c", str(cfg), "--path", store, "-n", "u", str(data))
    assert "added 0, already stored 2" in out
    code, out, _ = run(capsys, "search", "-c", str(cfg), "--path", store, "-n", "u", "-k", "1",
                       "violin")
    assert code == 0 and "violin" in out and "↳ a1" in out


def test_search_as_of_sees_the_memory_as_it_was_known_then(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    data, cfg, store = _violin_log(
        tmp_path, ("My violin lesson moved to Monday", "2024-03-01T10:00:00+00:00", "Ana"))
    run(capsys, "add", "-c", str(cfg), "--path", store, "-n", "u", str(data))
    base = ("search", "-c", str(cfg), "--path", store, "-n", "u", "--json")
    code, out, _ = run(capsys, *base, "violin")
    hits = json.loads(out)["hits"]
    assert code == 0 and {h["sources"][0]["id"] for h in hits} == {"a1", "a2"}
    assert all(h["validity"]["current"] and h["validity"]["superseded_by"] == [] for h in hits)
    code, out, _ = run(capsys, *base, "--as-of", "2024-02-15T00:00:00+00:00", "violin")
    assert code == 0 and [[s["id"] for s in h["sources"]]
                          for h in json.loads(out)["hits"]] == [["a1"]]
    code, _, err = run(capsys, *base, "--as-of", "2024-02-15T00:00:00", "violin")
    assert code == 2 and "no UTC offset" in err
    code, _, err = run(capsys, *base, "--as-of", "mid-February", "violin")
    assert code == 2 and "not an ISO 8601 time" in err


def test_search_says_when_scores_do_not_follow_rank(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ranks that a filter set against the scores are flagged; sorted ones are not."""
    import contextlib
    from collections.abc import Iterator
    from datetime import UTC

    import labile_io.pipeline_commands as cli
    from labile._model import Hit, Node, Query, Reach, RetrievalResult, Subgraph

    def result(scores: list[float]) -> RetrievalResult:
        when = datetime(2024, 1, 1, tzinfo=UTC)
        hits = tuple(Hit(node=Node(id=f"n{i}", kind="k", content=f"text {i}", created_at=when,
                                   updated_at=when),
                         score=s, via=Reach(atom="a")) for i, s in enumerate(scores))
        return RetrievalResult(query=Query(text="q", namespace="u", as_of=when, k=3),
                               hits=hits, subgraph=Subgraph(), trace=())

    class Stub:
        def __init__(self, scores: list[float]) -> None:
            self.scores = scores
            self.store = types.SimpleNamespace(namespaces=lambda: ["u"])
            self.embedder = types.SimpleNamespace(embed=lambda texts: None)

        def search(self, *_a: Any, **_k: Any) -> RetrievalResult:
            return result(self.scores)

    for scores, flagged in (([0.9, 0.5, 0.7], True), ([0.9, 0.7, 0.7], False)):
        @contextlib.contextmanager
        def fake_open(_args: argparse.Namespace, s: list[float] = scores) -> Iterator[Stub]:
            yield Stub(s)

        monkeypatch.setattr(cli, "open_memory", fake_open)
        code, out, _ = run(capsys, "search", "--preset", "bm25", "-n", "u", "q")
        assert code == 0 and "text 2" in out
        assert ("ordering rules can override the score shown" in out) is flagged


def test_add_reads_naive_timestamps_in_tz(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "obs.jsonl"
    data.write_text(json.dumps({"id": "a1", "text": "x", "timestamp": "2024-02-01T10:00:00"}))
    store = str(tmp_path / "s")
    code, _, err = run(capsys, "add", "--preset", "bm25", "--path", store, "-n", "u",
                       "--tz", "Europe/Paris", str(data))
    assert code == 0, err
    code, out, _ = run(capsys, "get", "--path", store, "-n", "u", "a1", "--json")
    assert json.loads(out)["timestamp"] == "2024-02-01T09:00:00+00:00"


# -- commands from plugins ----------------------------------------------------------


class Greeter:
    """A test plugin adding ``labile hello`` and the group ``labile greet`` with one command."""

    def __init__(self) -> None:
        self.seen: list[argparse.Namespace] = []

    @hookimpl
    def labile_register_commands(self, register: RegisterCommand) -> None:
        register("hello", run=self.hello, configure=self.hello_options, help="say hello")
        register("greet", help="greetings")
        register("greet loudly", run=self.loudly, help="say HELLO")

    @staticmethod
    def hello_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("name")
        p.add_argument("--times", type=int, default=1)

    def hello(self, args: argparse.Namespace) -> int:
        self.seen.append(args)
        for _ in range(args.times):
            echo(f"hello {args.name}")
        return 3

    def loudly(self, args: argparse.Namespace) -> None:
        echo("HELLO")


class Clasher:
    """Registers whatever path it is given."""

    def __init__(self, path: str, *, group: bool = False) -> None:
        self.path, self.group = path, group

    @hookimpl
    def labile_register_commands(self, register: RegisterCommand) -> None:
        run = None if self.group else (lambda args: 0)
        register(self.path, run=run, help="clash")


def _pm(*plugins: object) -> Any:
    return get_plugin_manager(entry_points=False, extra=plugins)


def test_hook_labile_register_commands(capsys: pytest.CaptureFixture[str]) -> None:
    """A plugin's command gets its arguments, writes to stdout, and sets the exit status."""
    greeter = Greeter()
    pm = _pm(greeter)
    assert main(["hello", "Ana", "--times", "2"], plugin_manager=pm) == 3
    assert capsys.readouterr().out == "hello Ana\nhello Ana\n"
    assert greeter.seen[0].name == "Ana"
    assert main(["greet", "loudly"], plugin_manager=pm) == 0  # None is success
    assert capsys.readouterr().out == "HELLO\n"
    commands = collect_commands(pm)
    assert {c.name: c.plugin for c in commands} == {  # a directly registered plugin object
        "hello": "extra-0", "greet": "extra-0", "greet loudly": "extra-0"}


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    """The top-level help names each command, and each group's help line its sub-commands."""
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name in ("plugins", "components", "check", "add", "search", "consolidate", "stats",
                 "demo"):
        assert f"    {name} " in out
    assert "bench               benchmarks (atc, bigturn, change, compare, crash," in out
    assert "inspect             diagnostics of a bundle's memory (allmem)" in out
    commands = collect_commands(get_plugin_manager(), builtin=register_shell_commands)
    runnable = [c for c in commands if c.run is not None]
    assert {c.plugin for c in runnable} >= {"labile", "bench", "io", "allmem"}
    for command in runnable:
        assert command.path[-1] in out, command.name


def test_a_group_without_commands_is_not_shown() -> None:
    """The shell declares ``inspect``; with no plugin filling it, it is not a command."""
    parser = build_parser(_pm())
    with pytest.raises(SystemExit):
        parser.parse_args(["inspect"])
    assert "inspect" not in parser.format_help()
    assert "plugins" in parser.format_help()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (Clasher("hello"), Clasher("hello")),  # the same command
        (Clasher("greet loudly"), Clasher("greet loudly")),  # the same sub-command
        (Clasher("greet loudly"), Clasher("greet")),  # a command where a group is
        (Clasher("greet"), Clasher("greet loudly")),  # a sub-command under a command
        (Clasher("greet", group=True), Clasher("greet", group=True)),  # two owners of a group
    ],
)
def test_a_clash_names_both_plugins(first: Clasher, second: Clasher) -> None:
    commands = Commands()
    commands.register_for("one")(first.path, run=None if first.group else print, help="x")
    with pytest.raises(DuplicateComponentError) as info:
        commands.register_for("two")(second.path, run=None if second.group else print, help="x")
    assert info.value.plugin == "two" and info.value.existing_plugin == "one"
    assert "'one'" in str(info.value) and "'two'" in str(info.value)


def test_a_plugin_cannot_take_a_shell_command(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plugins"], plugin_manager=_pm(Clasher("plugins")))
    assert code == 2
    err = capsys.readouterr().err
    assert ("command 'plugins' from plugin 'extra-0' clashes with the one from plugin "
            "'labile'") in err


@pytest.mark.parametrize("path", ["", "  ", "Bench", "bench_scale", "bench/scale", "9lives"])
def test_a_bad_path_is_rejected_with_the_rule(path: str) -> None:
    with pytest.raises(ValueError, match="bad command path.*lower-case words") as info:
        Commands().register_for("p")(path, run=print, help="x")
    assert "plugin 'p'" in str(info.value)


def test_run_and_configure_must_be_callable() -> None:
    with pytest.raises(TypeError, match="plugin 'p', command 'x': run must be callable"):
        Commands().register_for("p")("x", run="main", help="x")  # type: ignore[arg-type]


def test_a_wrapper_cannot_register_commands() -> None:
    class Wrapper:
        @hookimpl(wrapper=True)
        def labile_register_commands(self, register: RegisterCommand) -> Any:
            return (yield)

    with pytest.raises(PluginLoadError, match="cannot be a wrapper"):
        collect_commands(_pm(Wrapper()))


@pytest.mark.extras
def test_the_sample_plugin_adds_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    """The plugin-authoring guide's ``labile echo`` (CI installs the sample and runs it)."""
    require_module("labile_echo", ECHO_INSTALL)
    import labile_echo

    pm = _pm(labile_echo)
    assert main(["echo", "--threshold", "0.3", "0.1", "0.5", "0.9"], plugin_manager=pm) == 0
    assert capsys.readouterr().out == "kept 2 of 3 scores at threshold 0.3: 0.5, 0.9\n"
    assert main(["echo", "--threshold", "0.95", "0.1"], plugin_manager=pm) == 0
    assert capsys.readouterr().out == "kept 0 of 1 scores at threshold 0.95: none\n"
    assert main(["echo", "--threshold", "2", "0.1"], plugin_manager=pm) == 2
    assert "error: --threshold: 'threshold' must be <= 1.0" in capsys.readouterr().err
    command = next(c for c in collect_commands(get_plugin_manager()) if c.name == "echo")
    assert command.plugin == "echo"  # found by its entry point, like any third-party plugin


# -- commands of the bundled plugins --------------------------------------------------


def test_bench_scale_small(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "scale.json"
    code, out, _ = run(capsys, "bench", "scale", "--nodes", "300", "--queries", "20",
                       "--dim", "32", "--json", str(out_file))
    assert code == 0
    data = json.loads(out_file.read_text())
    assert data == json.loads(out)
    assert any("recall" in key for key in data)


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
