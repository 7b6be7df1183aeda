"""Accounting of LLM usage per operation (extract, plan, answer, judge …).

The pipeline's `UsageMeter` is a kernel service (`labile.plugin.CoreDeps.usage`);
helpers that compare or sum meters live in `labile_llm.usage`.
"""

from __future__ import annotations

import threading
from typing import Any

import attrs


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
