"""The ``lancedb`` store bundle: LanceDB on disk, the embedded default store.

Only the registration hooks live here: the store, and the ``labile bench
scale`` and ``labile bench workers`` commands. The store imports lancedb when
it is built (the import costs about 1.4 s), never when the plugin is loaded.
"""

from __future__ import annotations

import argparse

from labile.plugin import Register, RegisterCommand, hookimpl


@hookimpl
def labile_register_stores(register: Register) -> None:
    """Register ``lancedb`` (`labile_lancedb.store.LanceStore`)."""
    from labile_lancedb.config import LanceStoreConfig
    from labile_lancedb.store import LanceStore

    register("lancedb", LanceStore, config=LanceStoreConfig,
             summary="LanceDB directory per memory: durable, crash-safe batches, vector "
                     "(exact, quantized or IVF_RQ) and BM25 full-text search; the embedded default")


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """``labile bench scale`` (synthetic scale) and ``labile bench workers`` (many
    processes on one store) of this store."""
    register("bench scale", run=_run_scale, configure=_scale_options,
             help="synthetic scale benchmark of the lancedb store")
    from labile_lancedb._bench_workers_cli import configure, run

    register("bench workers", run=run, configure=configure,
             help="1, 2 and 4 worker processes on one store: local directory and object store")


def _scale_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=100_000, help="synthetic nodes to store")
    p.add_argument("--queries", type=int, default=200, help="searches to time")
    p.add_argument("--dim", type=int, default=384, help="vector length")
    p.add_argument("--json", dest="json_out", help="write the results here")
    p.add_argument("--candidates", help="comma-separated vector-search candidates to measure "
                   "(default: all; the exact scan always runs): exact, quantized, partitioned, "
                   "auto, ivf_rq, ivf_rq_np40, ivf_rq_p1024, ivf_rq_p1024_np32, hnsw_sq")
    p.add_argument("--in-ram", action="store_true",
                   help="measure only the in-memory candidates on a table filled directly, "
                        "without LanceDB (for 1M nodes, whose LanceDB ingest takes most of "
                        "an hour on a small machine)")


def _run_scale(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from labile.plugin import echo
    from labile_lancedb._bench_candidates import pick_candidates
    from labile_lancedb.bench_scale import run_scale_bench

    try:
        candidates = pick_candidates(args.candidates)
    except ValueError as exc:
        sys.stderr.write(f"labile bench scale: {exc}\n")
        return 2
    summary = run_scale_bench(args.nodes, dim=args.dim, n_queries=args.queries,
                              candidates=candidates, in_ram=args.in_ram)
    # The candidates' table for people on stderr; stdout stays one JSON document.
    sys.stderr.write(f"{summary['nodes']} nodes, {summary['queries']} queries\n"
                     f"{summary['table']}\n")
    text = json.dumps(summary, indent=2, default=str)
    echo(text)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    return 0
