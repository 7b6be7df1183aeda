"""Summing LLM usage across meters: what the answerer and the benchmarks report per question."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from labile.plugin import UsageMeter

__all__ = ["usage_delta", "usage_meters"]


def usage_meters(objs: Iterable[Any]) -> list[UsageMeter]:
    """The distinct `UsageMeter` instances among ``objs`` (others are ignored)."""
    out: list[UsageMeter] = []
    for obj in objs:
        if isinstance(obj, UsageMeter) and all(obj is not m for m in out):
            out.append(obj)
    return out


def usage_delta(
    before: Sequence[dict[str, dict[str, Any]]], after: Sequence[dict[str, dict[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """Per-operation difference of meter snapshots, summed over meters (``total`` recomputed).

    Args:
        before: `UsageMeter.snapshot` of each meter before the work.
        after: Snapshots of the same meters, in the same order, after it.

    Returns:
        ``{operation: {calls, failures, prompt_tokens, ...}, "total": {...}}``
        holding only operations that changed.
    """
    out: dict[str, dict[str, Any]] = {}
    for b, a in zip(before, after, strict=True):
        for op, figures in a.items():
            if op == "total":
                continue
            old = b.get(op, {})
            diff = {key: value - old.get(key, 0) for key, value in figures.items()}
            if any(diff.values()):
                slot = out.setdefault(op, dict.fromkeys(diff, 0))
                for key, value in diff.items():
                    slot[key] = slot.get(key, 0) + value
    total: dict[str, Any] = {}
    for figures in out.values():
        for key, value in figures.items():
            total[key] = total.get(key, 0) + value
    out["total"] = total or attrs.asdict(UsageMeter().totals())
    return out
