"""The ``labile`` command line.

Every command works offline on the embedded default. Output goes to stdout;
logs (structlog) and progress bars go to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from labile.errors import LabileError


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _memory_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", "-c", help="pipeline config (TOML)")
    p.add_argument("--preset", help="preset name (default: the best installed)")
    p.add_argument("--path", help="store directory (overrides [store] path)")


def _open_memory(args: argparse.Namespace) -> Any:
    from labile.memory import Memory

    return Memory.open(args.config, preset=args.preset, path=args.path)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = argparse.ArgumentParser(prog="labile", description=__doc__)
    parser.add_argument("--log-json", action="store_true", help="log JSON lines to stderr")
    parser.add_argument("--log-level", default="warning", help="debug, info, warning, error")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("plugins", help="list plugins with their version and hooks")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("components", help="list registered components and their options")
    p.add_argument("--kind", help="only this kind (seeder, store, …)")
    p.add_argument("--format", choices=("text", "md", "json"), default="text")
    p.add_argument("--bundled", action="store_true",
                   help="only the plugins that ship with labile (as in the docs)")

    p = sub.add_parser("check", help="validate a config and print it resolved")
    p.add_argument("file")

    p = sub.add_parser("add", help="add observations from a JSON-lines file")
    _memory_args(p)
    p.add_argument("--namespace", "-n", required=True)
    p.add_argument("file", help="JSONL: {id, text, timestamp (ISO, with zone), speaker?, "
                                "session?, metadata?} per line")

    p = sub.add_parser("search", help="search a namespace")
    _memory_args(p)
    p.add_argument("--namespace", "-n", required=True)
    p.add_argument("-k", type=int, default=5)
    p.add_argument("query")

    p = sub.add_parser("consolidate", help="run the consolidators over a namespace")
    _memory_args(p)
    p.add_argument("--namespace", "-n", required=True)

    p = sub.add_parser("stats", help="store and usage statistics")
    _memory_args(p)
    p.add_argument("--namespace", "-n")

    p = sub.add_parser("demo", help="ingest a sample conversation and ask it questions")
    p.add_argument("--preset", help="preset (default: the best installed)")

    bench = sub.add_parser("bench", help="benchmarks").add_subparsers(dest="bench", required=True)
    p = bench.add_parser("locomo", help="turn-level retrieval (and QA) metrics on LoCoMo")
    p.add_argument("path")
    p.add_argument("--preset", nargs="+", default=["bm25", "hybrid"])
    p.add_argument("--k", nargs="+", type=int, default=[5, 10])
    p.add_argument("--limit-conversations", type=int)
    p.add_argument("--json", dest="json_out", help="write the summary here")
    p.add_argument("--log-dir", help="write per-question JSONL logs here")
    p.add_argument("--store-dir", help="keep the stores here (default: a temp dir)")
    p.add_argument("--answer-model", help="litellm model that answers (enables QA metrics)")
    p.add_argument("--judge-model", help="litellm model that judges answers")
    p.add_argument("--no-progress", action="store_true")

    p = bench.add_parser("longmemeval", help="session-level retrieval (and QA) on LongMemEval_S")
    p.add_argument("path")
    p.add_argument("--preset", nargs="+", default=["hybrid"])
    p.add_argument("--k", nargs="+", type=int, default=[5, 10])
    p.add_argument("--limit", type=int)
    p.add_argument("--json", dest="json_out")
    p.add_argument("--answer-model")
    p.add_argument("--judge-model")

    p = bench.add_parser("transfer", help="how much feedback on earlier questions could help "
                         "later ones (from a locomo per-question log)")
    p.add_argument("log", help="a locomo-PRESET.jsonl written by 'bench locomo --log-dir'")
    p.add_argument("--embedder", default="minilm", help="embeds the questions (default: minilm)")
    p.add_argument("--json", dest="json_out")

    p = bench.add_parser("compare", help="question-by-question comparison of two per-question "
                         "logs (e.g. an ablation against its preset)")
    p.add_argument("log_a", help="the reference log (A)")
    p.add_argument("log_b", help="the log compared against it (B)")
    p.add_argument("--metric", default="recall@5", help="metric whose moved questions are listed")
    p.add_argument("--list", action="store_true", help="list the questions that moved")
    p.add_argument("--json", dest="json_out")

    p = bench.add_parser("scale", help="synthetic scale benchmark of the lancedb store")
    p.add_argument("--nodes", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--json", dest="json_out")

    p = sub.add_parser("inspect", help="diagnostics of a bundle's memory")
    p.add_argument("bundle", choices=("allmem",))
    _memory_args(p)
    p.add_argument("--namespace", "-n", required=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``labile`` script; returns the exit status."""
    from labile.logconfig import configure

    args = build_parser().parse_args(argv)
    configure(json=args.log_json, level=args.log_level)
    try:
        handler = _HANDLERS[args.command]
        return handler(args)
    except LabileError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2


def _cmd_plugins(args: argparse.Namespace) -> int:
    from labile.plugins import get_plugin_manager, list_plugins, load_errors

    pm = get_plugin_manager()
    infos = list_plugins(pm)
    errors = load_errors(pm)
    if args.json:
        _out(json.dumps({"plugins": [i.__dict__ if hasattr(i, "__dict__") else
                                     {"name": i.name, "module": i.module,
                                      "distribution": i.distribution, "version": i.version,
                                      "hooks": list(i.hooks)} for i in infos],
                         "errors": [str(e) for e in errors]}, indent=2, default=list))
        return 0
    for info in infos:
        hooks = ", ".join(h.removeprefix("labile_register_") for h in info.hooks)
        _out(f"{info.name:<20} {info.distribution or '-'} {info.version or '-'}")
        _out(f"    module: {info.module}")
        _out(f"    registers: {hooks or '-'}")
    for err in errors:
        _out(f"FAILED: {err}")
    return 1 if errors else 0


def _cmd_components(args: argparse.Namespace) -> int:
    from labile.docgen import components_json, components_markdown, components_text
    from labile.memory import build_registries
    from labile.plugins import BUNDLED, get_plugin_manager

    pm = get_plugin_manager(only=BUNDLED) if args.bundled else None
    registries = build_registries(pm)
    kinds = [args.kind] if args.kind else list(registries.by_kind)
    if args.kind:
        registries[args.kind]  # raises with the known kinds
    render = {"text": components_text, "md": components_markdown, "json": components_json}
    _out(render[args.format](registries, kinds))
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from labile.config import plugins_disabled, read_toml, resolve
    from labile.docgen import to_toml
    from labile.memory import build_registries

    table = read_toml(args.file)
    registries = build_registries(disable=plugins_disabled(table))
    config = resolve(table, registries)
    _out(f"# {args.file}: valid" + (f" (preset {config.preset!r})" if config.preset else ""))
    _out(to_toml(config.to_table()))
    return 0


def _cmd_add(args: argparse.Namespace) -> int:
    from labile.errors import InputError
    from labile.model import Observation

    observations = []
    with open(args.file, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                observations.append(Observation(
                    id=str(row["id"]), text=row["text"],
                    timestamp=datetime.fromisoformat(row["timestamp"]),
                    speaker=row.get("speaker"), session=row.get("session"),
                    metadata=row.get("metadata") or {},
                ))
            except (KeyError, ValueError, TypeError) as exc:
                raise InputError(f"{args.file}:{lineno}: {exc}") from None
    with _open_memory(args) as memory:
        report = memory.add(observations, namespace=args.namespace)
    _out(f"added {len(report.added)}, already stored {len(report.skipped_existing)}, "
         f"nodes {report.nodes_written}, edges {report.edges_written} in {report.ms:.0f} ms")
    return 0


def _cmd_search(args: argparse.Namespace) -> int:
    with _open_memory(args) as memory:
        result = memory.search(args.query, namespace=args.namespace, k=args.k)
    for rank, hit in enumerate(result.hits, 1):
        node = hit.node
        when = node.time_start.date().isoformat() if node.time_start else "-"
        _out(f"{rank:>2}. {hit.score:.3f} [{node.kind} {when}] {node.description or node.content}")
        _out(f"      sources: {', '.join(node.sources)}  via: {hit.via.atom}")
    _out(f"({result.total_ms:.1f} ms, of which {result.embed_ms:.1f} ms embedding the query)")
    return 0


def _cmd_consolidate(args: argparse.Namespace) -> int:
    with _open_memory(args) as memory:
        reports = memory.consolidate(namespace=args.namespace)
    if not reports:
        _out("this pipeline has no consolidators")
    for report in reports:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items())) or "nothing to do"
        _out(f"{report.operator}: {counts} ({report.ms:.0f} ms)")
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    with _open_memory(args) as memory:
        _out(json.dumps(memory.stats(args.namespace), indent=2, default=str))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from labile.demo import run_demo

    run_demo(preset=args.preset, write=_out)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.bench == "locomo":
        return _bench_locomo(args)
    if args.bench == "longmemeval":
        from labile.bench.longmemeval_run import run_longmemeval

        summary = run_longmemeval(args.path, presets=args.preset, k_list=args.k,
                                  limit=args.limit, answer_model=args.answer_model,
                                  judge_model=args.judge_model)
        _emit(summary, args.json_out)
        return 0
    if args.bench == "transfer":
        return _bench_transfer(args)
    if args.bench == "compare":
        return _bench_compare(args)
    if args.bench == "scale":
        try:
            from labile_lancedb.bench_scale import run_scale_bench
        except ImportError as exc:
            raise LabileError(f"the scale benchmark needs the lancedb bundle: {exc}") from None
        summary = run_scale_bench(args.nodes, dim=args.dim, n_queries=args.queries)
        _emit(summary, args.json_out)
        return 0
    raise LabileError(f"unknown benchmark {args.bench!r}")


def _emit(summary: dict[str, Any], json_out: str | None) -> None:
    text = json.dumps(summary, indent=2, default=str)
    _out(text)
    if json_out:
        Path(json_out).write_text(text + "\n", encoding="utf-8")


def _bench_locomo(args: argparse.Namespace) -> int:
    from labile.bench.locomo_run import format_table, run_locomo

    qa_factory = None
    if args.answer_model:
        from labile.bench.qa import make_qa_hook

        qa_factory = make_qa_hook(answer_model=args.answer_model,
                                  judge_model=args.judge_model or args.answer_model)
    summary, cleaning = run_locomo(
        args.path, args.preset, ks=args.k, limit=args.limit_conversations,
        store_dir=args.store_dir, log_dir=args.log_dir, qa_hook_factory=qa_factory,
        show_progress=False if args.no_progress else None,
    )
    counts = ", ".join(f"{k} {v}" for k, v in cleaning.counts().items())
    _out(f"LoCoMo {args.path}: {summary['conversations']} conversations; evidence: {counts}")
    _out(format_table(summary, args.k))
    for name, preset in summary["presets"].items():
        if "qa" in preset:
            _out(f"\nQA ({name}): " + json.dumps(preset["qa"], default=str))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(summary, indent=2, default=str) + "\n",
                                       encoding="utf-8")
    return 0


def _read_question_log(path: Path) -> list[dict[str, Any]]:
    """The rows of a per-question log, or a `LabileError` saying what is wrong."""
    try:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise LabileError(f"cannot read the per-question log {path}: {exc}") from None
    if not rows or any(not isinstance(r, dict) or "question" not in r for r in rows):
        raise LabileError(f"{path} is not a per-question log of 'labile bench locomo --log-dir' "
                          "(every line needs question, sample_id, gold, retrieved_turns)")
    return rows


def _bench_compare(args: argparse.Namespace) -> int:
    from labile.bench.compare import compare_logs, format_comparison

    path_a, path_b = Path(args.log_a), Path(args.log_b)
    try:
        cmp = compare_logs(_read_question_log(path_a), _read_question_log(path_b),
                           focus=args.metric)
    except ValueError as exc:
        raise LabileError(f"{path_a} vs {path_b}: {exc}") from None
    _out(format_comparison(cmp, path_a.name, path_b.name))
    if args.list:
        for q in cmp.moved:
            _out(f"{q['sample_id']} #{q['index']} (cat {q['category']}) "
                 f"{args.metric} {q[args.metric][0]:.2f} -> {q[args.metric][1]:.2f}: "
                 f"{q['question']}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(cmp.to_dict(), indent=2) + "\n",
                                       encoding="utf-8")
    return 0


def _bench_transfer(args: argparse.Namespace) -> int:
    from labile.bench.transfer import analyse_transfer, format_transfer
    from labile.memory import Memory

    path = Path(args.log)
    rows = _read_question_log(path)
    with Memory.open({"store": {"type": "memory"}, "embedder": {"type": args.embedder},
                      "llm": {"type": "none"}}) as memory:
        vectors = memory.embedder.embed([str(r["question"]) for r in rows])
    try:
        report = analyse_transfer(rows, vectors)
    except ValueError as exc:
        raise LabileError(f"{path}: {exc}") from None
    _out(format_transfer(report))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report.to_dict(), indent=2) + "\n",
                                       encoding="utf-8")
    return 0


def _cmd_inspect(args: argparse.Namespace) -> int:
    try:
        from labile_allmem.diagnostics import inspect_namespace
    except ImportError as exc:
        raise LabileError(f"'inspect allmem' needs the allmem bundle: {exc}") from None
    with _open_memory(args) as memory:
        report = inspect_namespace(memory.store, args.namespace)
    _out(json.dumps(report, indent=2, default=str))
    return 0


_HANDLERS = {
    "plugins": _cmd_plugins,
    "components": _cmd_components,
    "check": _cmd_check,
    "add": _cmd_add,
    "search": _cmd_search,
    "consolidate": _cmd_consolidate,
    "stats": _cmd_stats,
    "demo": _cmd_demo,
    "bench": _cmd_bench,
    "inspect": _cmd_inspect,
}

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
