"""The ``labile`` command line: a shell that plugins fill.

The kernel's own commands are the generic ones (``plugins``, ``components``,
``check``, ``add``, ``search``, ``consolidate``, ``stats``); the others
(``demo``, ``bench …``, ``inspect …``) come from plugins through the
``labile_register_commands`` hook (see `labile._commands`). Every command
works offline on the embedded default. Output goes to stdout; logs
(structlog) and progress bars go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from labile._commands import (
    RegisterCommand,
    add_commands,
    add_memory_options,
    collect_commands,
    echo,
    open_memory,
)
from labile._errors import LabileError

if TYPE_CHECKING:
    import pluggy


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other CLI error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def _global_options(parser: argparse.ArgumentParser) -> None:
    from labile._logconfig import LEVELS

    parser.add_argument("--log-json", action="store_true", help="log JSON lines to stderr")
    parser.add_argument("--log-level", default="warning", type=str.lower, choices=LEVELS,
                        help="log events at this level and above (default: warning)")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error (and log at debug level)")


def build_parser(plugin_manager: pluggy.PluginManager | None = None) -> argparse.ArgumentParser:
    """The argument parser of every command: the kernel's and the plugins'.

    Args:
        plugin_manager: Take the plugins' commands from this manager instead
            of a fresh one (`labile._plugins.get_plugin_manager`).

    Raises:
        DuplicateComponentError: two plugins registered the same command path.
    """
    from labile._plugins import get_plugin_manager

    parser = _Parser(
        prog="labile",
        description="Long-term memory for LLM agents. Every command works offline on the "
                    "embedded default; results go to stdout, logs and progress to stderr.",
    )
    _global_options(parser)
    parser.add_argument("--version", action="version", version=f"labile {_version()}")
    pm = plugin_manager if plugin_manager is not None else get_plugin_manager()
    add_commands(parser, collect_commands(pm, builtin=register_kernel_commands))
    return parser


def main(
    argv: Sequence[str] | None = None, *, plugin_manager: pluggy.PluginManager | None = None
) -> int:
    """Entry point of the ``labile`` script; returns the exit status.

    ``plugin_manager`` is passed to `build_parser` (tests add plugins that way).
    """
    from labile._logconfig import configure

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
        return 130
    except Exception as exc:
        if known.debug:
            raise
        # One line naming the problem; --debug shows where it came from.
        kind = "error" if isinstance(exc, LabileError) else type(exc).__name__
        sys.stderr.write(f"{kind}: {' '.join(str(exc).split())}\n")
        return 2
    return int(status or 0)


def _version() -> str:
    import labile

    return str(labile.__version__)


def register_kernel_commands(register: RegisterCommand) -> None:
    """The shell's own commands, and the ``inspect`` group that bundles fill."""
    register("plugins", run=_cmd_plugins, configure=_opts_plugins,
             help="list plugins with their version and hooks")
    register("components", run=_cmd_components, configure=_opts_components,
             help="list registered components and their options")
    register("check", run=_cmd_check, configure=_opts_check,
             help="validate a config and print it resolved")
    register("search", run=_cmd_search, configure=_opts_search, help="search a namespace")
    register("consolidate", run=_cmd_consolidate, configure=_opts_namespace,
             help="run the consolidators over a namespace")
    register("stats", run=_cmd_stats, configure=_opts_stats, help="store and usage statistics")
    register("inspect", help="diagnostics of a bundle's memory")


# -- options ----------------------------------------------------------------------


def _opts_plugins(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true")


def _opts_components(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kind", help="only this kind (seeder, store, …)")
    p.add_argument("--format", choices=("text", "md", "json"), default="text")
    p.add_argument("--bundled", action="store_true",
                   help="only the plugins that ship with labile (as in the docs)")


def _opts_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("file")


def _opts_namespace(p: argparse.ArgumentParser) -> None:
    add_memory_options(p)
    p.add_argument("--namespace", "-n", required=True)


def _opts_search(p: argparse.ArgumentParser) -> None:
    _opts_namespace(p)
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--json", action="store_true",
                   help="one JSON object: the hits with their sources, times and scores")
    p.add_argument("query")


def _opts_stats(p: argparse.ArgumentParser) -> None:
    add_memory_options(p)
    p.add_argument("--namespace", "-n")


# -- commands -----------------------------------------------------------------------


def _cmd_plugins(args: argparse.Namespace) -> int:
    import attrs

    from labile._plugins import get_plugin_manager, list_plugins, load_errors

    pm = get_plugin_manager()
    infos = list_plugins(pm)
    errors = load_errors(pm)
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


def _cmd_components(args: argparse.Namespace) -> int:
    from labile._docgen import components_json, components_markdown, components_text
    from labile._memory import build_registries
    from labile._plugins import BUNDLED, get_plugin_manager

    pm = get_plugin_manager(only=BUNDLED) if args.bundled else None
    registries = build_registries(pm)
    kinds = [args.kind] if args.kind else list(registries.by_kind)
    if args.kind:
        registries[args.kind]  # raises with the known kinds
    render = {"text": components_text, "md": components_markdown, "json": components_json}
    echo(render[args.format](registries, kinds))
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from labile._config import plugins_disabled, read_toml, resolve
    from labile._docgen import to_toml
    from labile._memory import build_registries

    table = read_toml(args.file)
    registries = build_registries(disable=plugins_disabled(table))
    config = resolve(table, registries)
    echo(f"# {args.file}: valid" + (f" (preset {config.preset!r})" if config.preset else ""))
    echo(to_toml(config.to_table()))
    return 0


def _cmd_search(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        result = memory.search(args.query, namespace=args.namespace, k=args.k)
    if args.json:
        echo(json.dumps({"query": args.query, "namespace": args.namespace, "hits": [
            {"id": h.node.id, "kind": h.node.kind, "score": h.score,
             "time": h.node.time_start.isoformat() if h.node.time_start else None,
             "text": h.node.description or h.node.content, "sources": list(h.node.sources),
             "via": h.via.atom} for h in result.hits], "ms": result.total_ms},
            ensure_ascii=False))
        return 0
    for rank, hit in enumerate(result.hits, 1):
        node = hit.node
        when = node.time_start.date().isoformat() if node.time_start else "-"
        echo(f"{rank:>2}. {hit.score:.3f} [{node.kind} {when}] {node.description or node.content}")
        echo(f"      sources: {', '.join(node.sources)}  via: {hit.via.atom}")
    echo(f"({result.total_ms:.1f} ms, of which {result.embed_ms:.1f} ms embedding the query)")
    return 0


def _cmd_consolidate(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        reports = memory.consolidate(namespace=args.namespace)
    if not reports:
        echo("this pipeline has no consolidators")
    for report in reports:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items())) or "nothing to do"
        echo(f"{report.operator}: {counts} ({report.ms:.0f} ms)")
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        echo(json.dumps(memory.stats(args.namespace), indent=2, default=str))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
