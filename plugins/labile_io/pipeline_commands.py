"""``labile components | check | search | consolidate | stats``: a pipeline's vocabulary and a
memory's contents.

``components`` lists what the installed plugins register, with every option
and its default; ``check`` validates a config file and prints it resolved;
``search``, ``consolidate`` and ``stats`` act on the memory the common options
(`labile.plugin.add_memory_options`) name. Results go to stdout.
"""

from __future__ import annotations

import argparse
import itertools
import json
from datetime import datetime

from labile import build_registries, get_plugin_manager, plugins_disabled, read_toml, resolve
from labile.plugin import (
    BUNDLED,
    InputError,
    RegisterCommand,
    add_memory_options,
    echo,
    open_memory,
)

__all__ = ["register_pipeline_commands"]


def register_pipeline_commands(register: RegisterCommand) -> None:
    """Register every command of this module."""
    register("components", run=_cmd_components, configure=_opts_components,
             help="list registered components and their options")
    register("check", run=_cmd_check, configure=_opts_check,
             help="validate a config and print it resolved")
    register("search", run=_cmd_search, configure=_opts_search, help="search a namespace")
    register("consolidate", run=_cmd_consolidate, configure=_opts_namespace,
             help="run the consolidators over a namespace")
    register("stats", run=_cmd_stats, configure=_opts_stats, help="store and usage statistics")


# -- options ----------------------------------------------------------------------


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
    p.add_argument("--as-of", default=None, metavar="TIME",
                   help="search the memory as it was known at this ISO 8601 time with a "
                        "UTC offset (e.g. 2025-03-01T12:00:00+00:00): later statements are "
                        "left out and later replacements not applied")
    p.add_argument("--json", action="store_true",
                   help="one JSON object: the hits with their sources, times and scores")
    p.add_argument("query")


def _as_of(text: str | None) -> datetime | None:
    """``--as-of``: an ISO 8601 time with a UTC offset (``InputError`` naming it if not)."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"--as-of {text!r} is not an ISO 8601 time "
                         "(e.g. 2025-03-01T12:00:00+00:00)") from None
    if when.tzinfo is None:
        raise InputError(f"--as-of {text!r} has no UTC offset: add one, e.g. {text}+00:00")
    return when


def _opts_stats(p: argparse.ArgumentParser) -> None:
    add_memory_options(p)
    p.add_argument("--namespace", "-n")


# -- commands -----------------------------------------------------------------------


def _cmd_components(args: argparse.Namespace) -> int:
    from labile_io.render import components_json, components_markdown, components_text

    pm = get_plugin_manager(only=BUNDLED) if args.bundled else None
    registries = build_registries(pm)
    kinds = [args.kind] if args.kind else list(registries.by_kind)
    if args.kind:
        registries[args.kind]  # raises with the known kinds
    render = {"text": components_text, "md": components_markdown, "json": components_json}
    echo(render[args.format](registries, kinds))
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from labile_io.render import to_toml

    table = read_toml(args.file)
    registries = build_registries(disable=plugins_disabled(table))
    config = resolve(table, registries)
    echo(f"# {args.file}: valid" + (f" (preset {config.preset!r})" if config.preset else ""))
    echo(to_toml(config.to_table()))
    return 0


def _cmd_search(args: argparse.Namespace) -> int:
    as_of = _as_of(args.as_of)
    with open_memory(args) as memory:
        result = memory.search(args.query, namespace=args.namespace, k=args.k, as_of=as_of)
    if args.json:
        echo(json.dumps({"query": args.query, "namespace": args.namespace, "hits": [
            {"id": h.node.id, "kind": h.node.kind, "score": h.score,
             "time": h.node.time_start.isoformat() if h.node.time_start else None,
             "text": h.node.description or h.node.content, "sources": list(h.node.sources),
             "via": h.via.atom, "current": h.is_current,
             "superseded_by": list(h.superseded_by)} for h in result.hits],
            "ms": result.total_ms}, ensure_ascii=False))
        return 0
    for rank, hit in enumerate(result.hits, 1):
        node = hit.node
        when = node.time_start.date().isoformat() if node.time_start else "-"
        echo(f"{rank:>2}. {hit.score:.3f} [{node.kind} {when}] {node.description or node.content}")
        echo(f"      sources: {', '.join(node.sources)}  via: {hit.via.atom}")
        if not hit.is_current:
            end = node.valid_to.date().isoformat() if node.valid_to else "?"
            echo(f"      no longer true since {end}: superseded by "
                 f"{', '.join(hit.superseded_by)}")
    scores = [hit.score for hit in result.hits]
    if any(later > earlier for earlier, later in itertools.pairwise(scores)):
        # Some filters rank by more than the score (REALM's aggregation puts
        # hits that add new source turns first): say so rather than let the
        # numbers look mis-sorted.
        echo("(ranked by the pipeline's last filter, whose ordering rules can override "
             "the score shown; each score is the hit's own relevance)")
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
