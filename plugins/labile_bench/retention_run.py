"""``--retain`` of ``bench change`` and ``bench locomo``: the same presets with a
retention policy applied after ingestion, before the questions.

Each preset given runs twice in the one process: as is, and as ``PRESET+retain``
with the policy applied to every conversation's namespace at the time its
questions are asked (``now``). Use is what reconsolidation has recorded by then:
nothing, in a fresh benchmark store, so the ``unused_days`` rule hides every old
memory; the figures say what decay costs or earns on questions asked afterwards.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final

from labile import LabileError, Memory
from labile_retention import REASONS, RetentionPolicy, apply_retention

SUFFIX: Final = "+retain"


def add_retain_option(p: argparse.ArgumentParser) -> None:
    """``--retain RULE=DAYS ...``."""
    p.add_argument("--retain", nargs="+", metavar="RULE=DAYS", default=None,
                   help="also run every preset as PRESET+retain, with this retention policy "
                        "applied before the questions (rules: unused_days, superseded_days, "
                        "small_talk_days; default: off)")


def parse_retain(values: Iterable[str] | None) -> RetentionPolicy | None:
    """The policy of ``--retain`` values (``None`` when not given).

    Raises:
        LabileError: a value is not ``RULE=DAYS`` or names an unknown rule.
    """
    if values is None:
        return None
    table: dict[str, int] = {}
    for value in values:
        rule, sep, days = value.partition("=")
        if not sep or not days.strip().isdigit():
            raise LabileError(f"--retain takes RULE=DAYS (e.g. superseded_days=90), got {value!r}")
        table[rule.strip()] = int(days)
    return RetentionPolicy.from_mapping(table)


def retain_all(memory: Memory, policy: RetentionPolicy,
               now_of: Mapping[str, datetime]) -> dict[str, Any]:
    """Apply ``policy`` to each namespace of ``now_of`` at its time; the summed counts."""
    counts = dict.fromkeys(REASONS, 0)
    for namespace, now in now_of.items():
        report = apply_retention(memory, namespace, policy, now=now)
        for reason in REASONS:
            counts[reason] += report.counts()[reason]
    return {"policy": policy.to_mapping(), "hidden": counts}


def variants(presets: Iterable[str], policy: RetentionPolicy | None
             ) -> list[tuple[str, str, RetentionPolicy | None]]:
    """(name in the summary, preset, policy) for each run: every preset as is, then
    with the policy."""
    runs: list[tuple[str, str, RetentionPolicy | None]] = []
    for preset in presets:
        runs.append((preset, preset, None))
        if policy is not None:
            runs.append((preset + SUFFIX, preset, policy))
    return runs
