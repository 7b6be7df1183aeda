"""Accounting of LLM usage per operation (extract, plan, answer, judge …), and a token estimate."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

import attrs


def estimate_tokens(text: str) -> int:
    """An offline token estimate (about 4 characters per token, words at least).

    What usage figures and context budgets fall back to when no tokenizer of
    the model is at hand.
    """
    return max(len(text.split()), (len(text) + 3) // 4) if text else 0


@attrs.define
class OperationUsage:
    """Totals for one operation."""

    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    cache_hits: int = 0


class UsageMeter:
    """Thread-safe counters of LLM calls, tokens, cost and latency per operation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ops: dict[str, OperationUsage] = {}

    def record(
        self,
        operation: str,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost_usd: float = 0.0,
        latency_ms: float = 0.0,
        failed: bool = False,
        cache_hit: bool = False,
    ) -> None:
        """Add one call's figures to ``operation``'s totals."""
        with self._lock:
            op = self._ops.setdefault(operation, OperationUsage())
            op.calls += 1
            op.failures += int(failed)
            op.cache_hits += int(cache_hit)
            op.prompt_tokens += prompt_tokens
            op.completion_tokens += completion_tokens
            op.cost_usd += cost_usd
            op.latency_ms += latency_ms

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """A copy of the totals, by operation, plus ``"total"``."""
        with self._lock:
            out = {name: attrs.asdict(op) for name, op in sorted(self._ops.items())}
        total = OperationUsage()
        for op in out.values():
            for key, value in op.items():
                setattr(total, key, getattr(total, key) + value)
        out["total"] = attrs.asdict(total)
        return out

    def totals(self) -> OperationUsage:
        """The sum over all operations."""
        snap = self.snapshot()["total"]
        return OperationUsage(**snap)


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
    out["total"] = total or attrs.asdict(OperationUsage())
    return out
