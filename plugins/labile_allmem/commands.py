"""``labile inspect allmem``: the bundle's diagnostics of one namespace, as JSON."""

from __future__ import annotations

import argparse
import json

from labile.plugin import add_memory_options, echo, open_memory


def inspect_options(p: argparse.ArgumentParser) -> None:
    """Which memory (``--config``/``--preset``/``--path``) and ``--namespace``."""
    add_memory_options(p)
    p.add_argument("--namespace", "-n", required=True, help="the namespace to inspect")


def run_inspect(args: argparse.Namespace) -> int:
    """Print `labile_allmem.diagnostics.inspect_namespace` of the namespace."""
    from labile_allmem.diagnostics import inspect_namespace

    with open_memory(args, bundle="allmem") as memory:
        report = inspect_namespace(memory.store, args.namespace)
    echo(json.dumps(report, indent=2, default=str))
    return 0
