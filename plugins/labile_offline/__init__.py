"""The offline embedder bundle: ONNX sentence embedders that ship their weights in a package.

``minilm`` (all-MiniLM-L6-v2 int8, the default), ``paraphrase-l3`` (paraphrase-MiniLM-L3-v2,
optional extra ``l3``) and ``minilm+l3`` (both fused in one vector space); plus ``hashing``
(`labile_offline.hashing`), the dependency-free embedder of fast tests. Loaded ONNX
sessions are shared per process (`labile_offline.pool`); ``labile bench cycles``
(`labile_offline.bench_cycles`) checks that opening a Memory per request does not grow.
"""

from __future__ import annotations

import argparse

from labile.plugin import Register, RegisterCommand, hookimpl


@hookimpl
def labile_register_embedders(register: Register) -> None:
    """Register ``minilm``, ``paraphrase-l3``, ``minilm+l3`` and ``hashing``."""
    from labile_offline.hashing import HashingConfig, HashingEmbedder
    from labile_offline.minilm import MiniLMConfig, MiniLMEmbedder
    from labile_offline.paraphrase import (
        FusedEmbedder,
        FusedEmbedderConfig,
        ParaphraseL3Config,
        ParaphraseL3Embedder,
    )

    register("minilm", MiniLMEmbedder, config=MiniLMConfig,
             summary="all-MiniLM-L6-v2 int8 ONNX on onnxruntime (384-d); offline default")
    register("paraphrase-l3", ParaphraseL3Embedder, config=ParaphraseL3Config,
             summary="paraphrase-MiniLM-L3-v2 fp32 ONNX (384-d); needs labile[l3]")
    register("minilm+l3", FusedEmbedder, config=FusedEmbedderConfig,
             summary="MiniLM-L6 and paraphrase-L3 concatenated (768-d, weighted cosine); "
                     "needs labile[l3]")
    register("hashing", HashingEmbedder, config=HashingConfig,
             summary="deterministic feature hashing; for tests, not for quality")


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """``labile bench cycles``: threads and memory over many open/search/close cycles."""
    register("bench cycles", run=_run_cycles, configure=_cycles_options,
             help="open, search and close a Memory many times: threads and RSS per checkpoint")


def _cycles_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cycles", type=int, default=1000, help="cycles to run (default: 1000)")
    p.add_argument("--every", type=int, default=100,
                   help="cycles between checkpoints (default: 100)")
    p.add_argument("--preset", default="realm", help="preset to open (default: realm)")
    p.add_argument("--embedder", default=None,
                   help="embedder type instead of the preset's (e.g. hashing, minilm)")
    p.add_argument("--no-session-pool", action="store_true",
                   help="load an ONNX session per open, as before the pool (the baseline)")


def _run_cycles(args: argparse.Namespace) -> int:
    from labile.plugin import InputError, echo
    from labile_offline.bench_cycles import WARM_UP, run_cycles

    if args.cycles < 1 or args.every < 1:
        raise InputError("--cycles and --every must be at least 1")
    config = {"embedder": {"type": args.embedder}} if args.embedder else None
    echo("cycle  os_threads  py_threads  rss_mb  ms/cycle")
    warm = last = None
    for last in run_cycles(args.cycles, config=config, preset=args.preset, every=args.every,
                           pool=not args.no_session_pool):
        if last.cycle == min(WARM_UP, args.cycles):
            warm = last
        echo(f"{last.cycle:5d}  {last.os_threads:10d}  {last.python_threads:10d}  "
             f"{last.rss_mb:6.1f}  {last.ms_per_cycle:8.1f}")
    if warm is not None and last is not None and last is not warm:
        echo(f"after the warm-up (cycle {warm.cycle}): threads "
             f"{last.os_threads - warm.os_threads:+d}, RSS {last.rss_mb - warm.rss_mb:+.1f} MB")
    return 0
