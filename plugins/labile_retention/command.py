"""``labile retain``: hide what a namespace's retention policy says has aged out.

    labile retain -n maya --unused-days 180 --superseded-days 90 --dry-run
    labile retain -n maya --unused-days 180 --save      # save, then apply
    labile retain -n maya                               # apply the saved policy
    labile retain -n maya --restore [--reason unused]   # un-hide

Prints one line per node hidden (or, with ``--dry-run``, that would be) and
why, then the counts; ``--json`` prints the report as JSON instead. Exits 0;
2 for a bad option or a namespace with no saved policy; 1 for a store or a
namespace that does not exist.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from labile.plugin import (
    InputError,
    add_memory_options,
    echo,
    open_memory,
    require_namespace,
    time_option,
)
from labile_retention.apply import (
    REASONS,
    RetentionReport,
    apply_retention,
    restore_hidden,
    save_policy,
)
from labile_retention.policy import RetentionPolicy

__all__ = ["register_retain"]


def register_retain(register: Any) -> None:
    """Register ``labile retain``."""
    register("retain", run=run_retain, configure=retain_options,
             help="hide (never erase) memories that aged out under a retention policy")


def retain_options(p: argparse.ArgumentParser) -> None:
    """The rules, ``--save``, ``--dry-run``, ``--restore``, ``--now``, ``--json``."""
    add_memory_options(p)
    p.add_argument("--namespace", "-n", required=True, help="the namespace to apply it to")
    for rule, what in (("unused", "learned and not used for more than DAYS days"),
                       ("superseded", "replaced more than DAYS days ago"),
                       ("small-talk", "of small talk older than DAYS days (0: all)")):
        p.add_argument(f"--{rule}-days", type=int, metavar="DAYS", default=None,
                       help=f"hide memories {what} (default: off, or the saved policy)")
    p.add_argument("--save", action="store_true",
                   help="save these rules as the namespace's policy before applying "
                        "(default: %(default)s)")
    p.add_argument("--dry-run", action="store_true",
                   help="list what would be hidden (or restored) and why; change nothing "
                        "(default: %(default)s)")
    p.add_argument("--restore", action="store_true",
                   help="un-hide what a policy hid (default: %(default)s)")
    p.add_argument("--reason", action="append", choices=REASONS, default=None,
                   help="with --restore: only nodes hidden for this reason (repeatable; "
                        "default: every reason)")
    p.add_argument("--now", default=None,
                   help="apply as of this ISO 8601 time with a zone (default: the current "
                        "time)")
    p.add_argument("--json", action="store_true", help="print the report as JSON "
                                                        "(default: %(default)s)")


def _policy(args: argparse.Namespace) -> RetentionPolicy | None:
    rules = {"unused_days": args.unused_days, "superseded_days": args.superseded_days,
             "small_talk_days": args.small_talk_days}
    given = {k: v for k, v in rules.items() if v is not None}
    return RetentionPolicy.from_mapping(given) if given else None


def run_retain(args: argparse.Namespace) -> int:
    """Apply, preview, save or restore; print the report."""
    policy = _policy(args)
    now = time_option(args.now, "--now")
    if args.restore and (policy is not None or args.save):
        raise InputError("--restore takes no rules and no --save: restore, then apply "
                         "the new rules")
    if args.save and policy is None:
        raise InputError("--save needs at least one rule (--unused-days, --superseded-days, "
                         "--small-talk-days)")
    if args.reason and not args.restore:
        raise InputError("--reason is for --restore")
    with open_memory(args, create=False) as memory:
        require_namespace(memory, args.namespace)  # a mistyped name is not an empty memory
        if args.restore:
            report = restore_hidden(memory, args.namespace, reasons=args.reason,
                                    dry_run=args.dry_run)
        else:
            if args.save and not args.dry_run:
                assert policy is not None
                save_policy(memory, args.namespace, policy)
            report = apply_retention(memory, args.namespace, policy, now=now,
                                     dry_run=args.dry_run)
    echo(json.dumps(report_json(report), indent=2) if args.json else render(report))
    return 0


def report_json(report: RetentionReport) -> dict[str, Any]:
    """The report as a JSON-ready table."""
    return {
        "namespace": report.namespace, "now": report.now.isoformat(),
        "dry_run": report.dry_run,
        "policy": report.policy.to_mapping() if report.policy is not None else None,
        "hidden": [{"id": h.node_id, "kind": h.kind, "reason": h.reason,
                    "learned_at": h.learned_at.isoformat()} for h in report.hidden],
        "restored": list(report.restored), "counts": report.counts(),
    }


def render(report: RetentionReport) -> str:
    """One line per node, then the counts."""
    verb = "would " if report.dry_run else ""
    lines = [f"{verb}hide {h.node_id} ({h.kind}, learned {h.learned_at.date()}): {h.reason}"
             for h in report.hidden]
    lines += [f"{verb}restore {node_id}" for node_id in report.restored]
    counts = report.counts()
    if report.policy is not None:
        rules = ", ".join(f"{k}={v}" for k, v in report.policy.to_mapping().items())
        lines.append(f"{report.namespace}: {verb}hide {len(report.hidden)} "
                     f"({', '.join(f'{r} {counts[r]}' for r in REASONS)}) under {rules}")
    else:
        lines.append(f"{report.namespace}: {verb}restore {counts['restored']}")
    return "\n".join(lines)
