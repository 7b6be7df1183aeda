"""The ``labile`` command line: a shell that plugins fill.

An application of the kernel like any other: it builds a plugin manager and
turns every plugin's ``labile_register_commands`` into a sub-command
(`labile_cli.commands`). The shell owns only ``plugins`` (and the ``inspect``
group); every other command (``components``, ``check``, ``search``, ``add``,
``demo``, ``bench …``, ``inspect …``) comes from a plugin. Every command
works offline on the embedded default. Output goes to stdout; logs
(`labile_cli.logs`) and progress bars go to stderr. An error is one line on
stderr, and its kind picks the exit status (`labile_cli.commands.EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import attrs
import pluggy

import labile
from labile import LabileError
from labile.plugin import (
    LLMError,
    NotFoundError,
    RegisterCommand,
    StoreError,
    echo,
    get_plugin_manager,
    load_report,
)
from labile_cli.commands import (
    EXIT_BUG,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NOT_FOUND,
    EXIT_USAGE,
    HelpFormatter,
    add_commands,
    collect_commands,
)
from labile_cli.logs import LEVELS, configure

__all__ = ["PluginInfo", "build_parser", "exit_status", "list_plugins", "main", "one_line",
           "register_shell_commands"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other CLI error."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)  # every option shows its default
        super().__init__(**kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"error: {message} (see `{self.prog} --help`)\n")


def _global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--log-json", action="store_true", help="log JSON lines to stderr")
    parser.add_argument("--log-level", default="warning", type=str.lower, choices=LEVELS,
                        help="log events at this level and above (default: warning)")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error (and log at debug level)")


def build_parser(plugin_manager: pluggy.PluginManager | None = None) -> argparse.ArgumentParser:
    """The argument parser of every command: the shell's and the plugins'.

    Args:
        plugin_manager: Take the plugins' commands from this manager instead
            of a fresh one (`labile.plugin.get_plugin_manager`).

    Raises:
        DuplicateComponentError: two plugins registered the same command path.
    """
    parser = _Parser(
        prog="labile",
        description="Long-term memory for LLM agents. Every command works offline on the "
                    "embedded default; results go to stdout, logs and progress to stderr.",
    )
    _global_options(parser)
    parser.add_argument("--version", action="version", version=f"labile {_version()}")
    pm = plugin_manager if plugin_manager is not None else get_plugin_manager()
    add_commands(parser, collect_commands(pm, builtin=register_shell_commands))
    return parser


def main(
    argv: Sequence[str] | None = None, *, plugin_manager: pluggy.PluginManager | None = None
) -> int:
    """Entry point of the ``labile`` script; returns the exit status.

    ``plugin_manager`` is passed to `build_parser` (tests add plugins that way).
    """
    # Logging first: loading the plugins that fill the parser may already log.
    early = _Parser(prog="labile", add_help=False)
    _global_options(early)
    known, _ = early.parse_known_args(argv)  # exits with a usage error on a bad level
    configure(json=known.log_json, level="debug" if known.debug else known.log_level)
    try:
        args = build_parser(plugin_manager).parse_args(argv)
        status = args.labile_command.run(args)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as exc:
        if known.debug:
            raise
        # One line naming the problem; --debug shows where it came from.
        status, kind = exit_status(exc)
        sys.stderr.write(f"{kind}: {one_line(str(exc))}\n")
        return status
    return int(status or 0)


def one_line(message: str) -> str:
    """``message`` on one line: its lines joined by "; " (a line ending in ":" by a
    space), so several problems reported at once stay told apart."""
    out = ""
    for line in (" ".join(raw.split()) for raw in message.splitlines()):
        if line:
            out += line if not out else (" " if out.endswith(":") else "; ") + line
    return out


def exit_status(exc: Exception) -> tuple[int, str]:
    """The exit status of a command that raised ``exc``, and the word its message starts with.

    Something named is missing (1), the caller asked for something wrong (2),
    the store, the disk or a service failed (3), anything else is a bug (4).
    """
    if isinstance(exc, NotFoundError):
        return EXIT_NOT_FOUND, "not found"
    if isinstance(exc, StoreError | LLMError):
        return EXIT_FAILED, "error"
    if isinstance(exc, LabileError):
        return EXIT_USAGE, "error"
    if isinstance(exc, OSError):
        return EXIT_FAILED, type(exc).__name__
    return EXIT_BUG, type(exc).__name__


def _version() -> str:
    return str(labile.__version__)


def register_shell_commands(register: RegisterCommand) -> None:
    """The shell's own commands: ``plugins`` (so a broken plugin can always be
    diagnosed), and the ``inspect`` group that bundles fill."""
    register("plugins", run=_cmd_plugins, configure=_opts_plugins,
             help="list plugins with their version and hooks")
    register("inspect", help="diagnostics of a bundle's memory")


def _opts_plugins(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _cmd_plugins(args: argparse.Namespace) -> int:
    pm = get_plugin_manager()
    infos = list_plugins(pm)
    errors = load_report(pm).errors
    if args.json:
        echo(json.dumps({"plugins": [attrs.asdict(i) for i in infos],
                         "errors": [str(e) for e in errors]}, indent=2, default=list))
        return 0
    for info in infos:
        hooks = ", ".join(h.removeprefix("labile_register_") for h in info.hooks)
        echo(f"{info.name:<20} {info.distribution or '-'} {info.version or '-'}")
        echo(f"    module: {info.module}")
        echo(f"    registers: {hooks or '-'}")
    for err in errors:
        echo(f"FAILED: {err}")
    return 1 if errors else 0


@attrs.frozen(kw_only=True)
class PluginInfo:
    """What ``labile plugins`` lists about one plugin."""

    name: str
    module: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]


def list_plugins(pm: pluggy.PluginManager) -> list[PluginInfo]:
    """Every registered plugin with its distribution, version and implemented hooks."""
    dists = load_report(pm).dists
    out = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda item: item[0]):
        if plugin is None:
            continue
        hooks = tuple(sorted(h.name for h in pm.get_hookcallers(plugin) or []))
        dist, version = dists.get(name, ("labile", _version()))
        module = getattr(plugin, "__name__", type(plugin).__name__)
        out.append(PluginInfo(name=name, module=module, distribution=dist, version=version,
                              hooks=hooks))
    return out
