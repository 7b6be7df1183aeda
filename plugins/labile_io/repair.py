"""``labile repair``: build the memory of observations that are still pending.

An observation is pending when it was stored but its memory could not be
built because the model did not answer (see `labile.Memory.repair`). The
command builds them, namespace by namespace, and prints what it built and
what still waits; it exits with 1 while anything is still pending (the model
is still away), so a scheduler can retry it.
"""

from __future__ import annotations

import argparse
from typing import Any

from labile.plugin import add_memory_options, echo, open_memory

__all__ = ["register_repair"]


def register_repair(register: Any) -> None:
    """Register ``labile repair``."""
    register("repair", run=run_repair, configure=repair_options,
             help="build the memory of observations left pending by an LLM outage")


def repair_options(p: argparse.ArgumentParser) -> None:
    """``--namespace`` (default: every namespace)."""
    add_memory_options(p)
    p.add_argument("--namespace", "-n", help="only this namespace (default: all)")


def run_repair(args: argparse.Namespace) -> int:
    """Repair each namespace; one line per namespace with pending work."""
    left = 0
    with open_memory(args) as memory:
        spaces = [args.namespace] if args.namespace else memory.store.namespaces()
        for namespace in spaces:
            pending = memory.stats(namespace)["pending"]
            if not pending and not args.namespace:
                continue
            report = memory.repair(namespace)
            left += len(report.pending)
            echo(f"{namespace}: built {len(report.added)} observations "
                 f"({report.nodes_written} nodes, {report.edges_written} edges); "
                 f"pending {len(report.pending)}")
    return 1 if left else 0
