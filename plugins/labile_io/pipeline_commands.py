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
import time

from labile import plugins_disabled, read_toml, resolve
from labile.plugin import (
    BUNDLED,
    DEFAULT_K,
    HIDDEN_AT,
    Embedder,
    RegisterCommand,
    add_memory_options,
    build_registries,
    echo,
    get_plugin_manager,
    open_memory,
    require_namespace,
    time_option,
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
    p.add_argument("--format", choices=("text", "md", "json"), default="text",
                   help="plain text, JSON, or the Markdown reference of the docs (which "
                        "lists every component, ablations included)")
    p.add_argument("--bundled", action="store_true",
                   help="only the plugins that ship with labile (as in the docs)")
    p.add_argument("--all", action="store_true",
                   help="also list the ablation presets (benchmark variants, not for use)")


def _opts_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="the config file (TOML)")


def _opts_namespace(p: argparse.ArgumentParser) -> None:
    add_memory_options(p)
    p.add_argument("--namespace", "-n", required=True,
                   help="the namespace (a user, an agent, a conversation)")


def _opts_search(p: argparse.ArgumentParser) -> None:
    _opts_namespace(p)
    p.add_argument("-k", type=int, default=DEFAULT_K, help="how many hits to show")
    p.add_argument("--as-of", default=None, metavar="TIME",
                   help="search the memory as it was known at this ISO 8601 time with a "
                        "UTC offset (e.g. 2025-03-01T12:00:00+00:00): later statements are "
                        "left out and later replacements not applied")
    p.add_argument("--json", action="store_true",
                   help="one JSON object in the labile.hit/1 schema (docs/http-api.md): the "
                        "hits with their sources, labelled dates, validity and how each "
                        "was reached")
    p.add_argument("--include-hidden", action="store_true",
                   help="also show memories a retention policy hid (`labile retain`) "
                        "(default: %(default)s)")
    p.add_argument("query", help="what to look for, in natural language")


def _opts_stats(p: argparse.ArgumentParser) -> None:
    add_memory_options(p)
    p.add_argument("--namespace", "-n", help="only this namespace (default: the whole store)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


# -- commands -----------------------------------------------------------------------


def _cmd_components(args: argparse.Namespace) -> int:
    from labile_io.render import (
        components_json,
        components_markdown,
        components_text,
        is_ablation,
    )

    pm = get_plugin_manager(only=BUNDLED) if args.bundled else None
    registries = build_registries(pm)
    kinds = [args.kind] if args.kind else list(registries.by_kind)
    if args.kind:
        registries[args.kind]  # raises with the known kinds
    if args.format == "md":  # the reference documents every component
        echo(components_markdown(registries, kinds))
        return 0
    render = components_json if args.format == "json" else components_text
    echo(render(registries, kinds, hide=None if args.all else is_ablation))
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
    from labile_io.hits import search_payload
    from labile_io.render import hit_text

    as_of = time_option(args.as_of, "--as-of")
    with open_memory(args) as memory:
        require_namespace(memory, args.namespace)
        load_ms = _load_model(memory.embedder)
        result = memory.search(args.query, namespace=args.namespace, k=args.k, as_of=as_of,
                               include_hidden=args.include_hidden)
        payload = search_payload(memory, result)
    if args.json:
        echo(json.dumps(payload, ensure_ascii=False))
        return 0
    for hit, found in zip(payload["hits"], result.hits, strict=True):
        echo("\n".join(hit_text(hit)))
        if found.node.is_hidden(result.query.as_of):
            echo(f"  hidden by retention since {found.node.attrs[HIDDEN_AT]}: "
                 f"{found.node.attrs.get('hidden_why', 'a policy')}")
    scores = [hit.score for hit in result.hits]
    if any(later > earlier for earlier, later in itertools.pairwise(scores)):
        # Some filters rank by more than the score (REALM's aggregation puts
        # hits that add new source turns first): say so rather than let the
        # numbers look mis-sorted.
        echo("(ranked by the pipeline's last filter, whose ordering rules can override "
             "the score shown; each score is the hit's own relevance)")
    echo(f"(search {result.total_ms:.1f} ms, of which {result.embed_ms:.1f} ms embedding the "
         f"query; loading the model took {load_ms:.0f} ms before it)")
    return 0


def _load_model(embedder: Embedder) -> float:
    """Load ``embedder``'s model now, so the search time shown is the query's alone;
    returns the milliseconds it took (a model loads on its first use, once per process)."""
    start = time.perf_counter()
    load = getattr(embedder, "load", None)
    if callable(load):
        load()
    else:  # the protocol has no load(): one embedding loads whatever is lazy
        embedder.embed(["warm-up"])
    return (time.perf_counter() - start) * 1000


def _cmd_consolidate(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        require_namespace(memory, args.namespace)
        reports = memory.consolidate(namespace=args.namespace)
    if not reports:
        echo("this pipeline has no consolidators")
    for report in reports:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items())) or "nothing to do"
        echo(f"{report.operator}: {counts} ({report.ms:.0f} ms)")
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    from labile_io.stats_text import stats_text

    with open_memory(args) as memory:
        if args.namespace is not None:
            require_namespace(memory, args.namespace)
        stats = memory.stats(args.namespace)
    echo(json.dumps(stats, indent=2, default=str) if args.json
         else stats_text(stats, args.namespace))
    return 0
