"""The ``labile bench workers`` command: options, the moto server, the report.

The benchmark itself is `labile_bench.lancedb_workers`. With ``--moto`` the
command starts moto's S3 server on a loopback port (``pip install
'moto[server]'``) with fake credentials, so the object-store rows need no
cloud account; ``--uri s3://bucket/prefix`` measures a real bucket instead
(credentials by variable name, ``--option-env``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["configure", "run"]

_MOTO_ENV = {"LABILE_BENCH_S3_KEY": "bench", "LABILE_BENCH_S3_SECRET": "bench"}


def configure(p: argparse.ArgumentParser) -> None:
    """The command's options."""
    p.add_argument("--workers", default="1,2,4", help="worker counts (default 1,2,4)")
    p.add_argument("--batches", type=int, default=20, help="batches per worker")
    p.add_argument("--batch-units", type=int, default=10, help="units per batch")
    p.add_argument("--queries", type=int, default=200, help="queries per worker")
    p.add_argument("--dir", help="local base directory (default: a temporary one)")
    p.add_argument("--uri", help="object-store base URI, e.g. s3://bucket/prefix")
    p.add_argument("--moto", action="store_true",
                   help="start moto's S3 server on loopback and measure it too")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="storage option of --uri (not secret)")
    p.add_argument("--option-env", action="append", default=[], metavar="KEY=VARIABLE",
                   help="storage option of --uri read from an environment variable")
    p.add_argument("--json", dest="json_out", help="write the rows as JSON here")


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{flag} takes KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; the table goes to stderr, the rows as JSON to stdout."""
    from labile.plugin import echo
    from labile_bench.lancedb_workers import format_table, run_workers_bench

    try:
        workers = tuple(int(w) for w in args.workers.split(","))
        if not workers or min(workers) < 1:
            raise ValueError("--workers takes positive counts, e.g. 1,2,4")
        options, env = _pairs(args.option, "--option"), _pairs(args.option_env, "--option-env")
    except ValueError as exc:
        sys.stderr.write(f"labile bench workers: {exc}\n")
        return 2
    server = None
    with tempfile.TemporaryDirectory(prefix="labile-bench-workers-") as tmp:
        locations: dict[str, tuple[str, dict[str, str], dict[str, str]]] = {
            "local": (args.dir or tmp, {}, {})}
        if args.uri:
            locations["object store"] = (args.uri, options, env)
        if args.moto:
            server, endpoint = _start_moto()
            locations["s3 (moto)"] = ("s3://labile-bench/run", {
                "aws_endpoint": endpoint, "aws_region": "us-east-1", "allow_http": "true"}, {
                "aws_access_key_id": "LABILE_BENCH_S3_KEY",
                "aws_secret_access_key": "LABILE_BENCH_S3_SECRET"})
        try:
            rows = run_workers_bench(locations, workers=workers, batches=args.batches,
                                     batch_units=args.batch_units, queries=args.queries)
        finally:
            if server is not None:
                server.stop()
    sys.stderr.write(format_table(rows))
    text = json.dumps(rows, indent=2)
    echo(text)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    return 0


def _start_moto() -> tuple[Any, str]:
    import logging
    import urllib.request

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    os.environ.update(_MOTO_ENV)  # the workers inherit the fake credentials
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    with urllib.request.urlopen(urllib.request.Request(f"{endpoint}/labile-bench",
                                                       method="PUT"), timeout=10):
        pass
    return server, endpoint
