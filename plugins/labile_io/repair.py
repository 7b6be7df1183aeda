"""``labile repair``: bring the store back to a clean state, then build the memory of
observations that are still pending.

First the store itself, where it can (``repair_storage``, the LanceDB store):
batches of writers that died are undone, every namespace's pinned table
versions move to the newest (healing pins that name deleted versions, as an
erase killed under an older build left them), and an erase that was
interrupted is finished. Then the memory: an observation is pending when it
was stored but its memory could not be built because the model did not
answer (see `labile.Memory.repair`). The command builds them, namespace by
namespace, and prints what it did and what still waits; it exits with 1 while
anything is still pending (the model is still away), so a scheduler can retry it.
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
        _repair_storage(memory.store)
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


def _repair_storage(store: Any) -> None:
    """Run the store's own repair, if it has one, and say what it did."""
    fix = getattr(getattr(store, "inner", store), "repair_storage", None)
    if not callable(fix):
        return
    done = fix()
    if done.get("intents_undone"):
        echo(f"store: undid the unfinished batches of {', '.join(done['intents_undone'])}")
    if done.get("pins_healed"):
        echo("store: read versions restored for " + ", ".join(done["pins_healed"]))
    if done.get("erase_finished"):
        echo("store: finished an interrupted history erase")
