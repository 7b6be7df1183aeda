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


def atc_options(p: argparse.ArgumentParser) -> None:
    """The LoCoMo file, which conversations, the preset, and the output."""
    p.add_argument("path", help="a LoCoMo JSON file (e.g. ../shared/data/locomo/locomo_dev.json)")
    p.add_argument("--conversation", "-c", action="append", default=None,
                   help="sample id to audit (repeatable; default: all)")
    p.add_argument("--preset", default="allmem", help="an All-Mem preset (default: allmem)")
    p.add_argument("--show", choices=("none", "executed", "proposals"), default="executed",
                   help="list the executed operations (default), every proposal, or none")
    p.add_argument("--text", action="store_true",
                   help="print the source turns' text under each operation (for judging)")
    p.add_argument("--json", dest="json_out", help="write the audits (ids only) here")


def run_atc(args: argparse.Namespace) -> int:
    """Audit ATC on each conversation (`labile_allmem.audit`) and print what it did."""
    from pathlib import Path

    from labile import LabileError
    from labile_allmem.audit import audit_conversation, format_audit
    from labile_allmem.presets import PRESETS, preset_table
    from labile_bench.locomo import load_locomo

    if args.preset not in PRESETS:
        raise LabileError(f"unknown All-Mem preset {args.preset!r}; "
                          f"choose one of {', '.join(sorted(PRESETS))}")
    try:
        conversations, _ = load_locomo(args.path)
    except (OSError, ValueError) as exc:
        raise LabileError(f"cannot read LoCoMo file {args.path}: {exc}") from None
    wanted = set(args.conversation or [])
    unknown = wanted - {c.sample_id for c in conversations}
    if unknown:
        raise LabileError(f"no conversation {', '.join(sorted(unknown))} in {args.path}")
    audits = []
    for conv in conversations:
        if wanted and conv.sample_id not in wanted:
            continue
        table = preset_table(args.preset)
        table["store"] = {"type": "memory"}
        audit = audit_conversation(conv, table)
        audits.append(audit)
        turns = {t.id: t for s in conv.sessions for t in s.turns} if args.text else None
        echo(format_audit(audit, show=args.show, turns=turns))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            [{**a.table_row(), "outcomes": [o.to_dict() for o in a.outcomes],
              "proposals": [o.to_dict() for o in a.proposals]} for a in audits], indent=1)
            + "\n", encoding="utf-8")
    return 0
