"""Counting what a model did inside one step of a benchmark run, and adding it up.

`UsageWindow` takes the usage meter's and the reply tally's figures before
and after a step; the difference is that step's calls, tokens and reply
outcomes by operation. `per_turn` and `stage_totals` sum such windows over a
run. Every figure is an integer count except the times.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

from labile.plugin import UsageMeter

__all__ = ["COUNTED", "UsageWindow", "add_usage", "per_turn", "stage_totals"]

#: The usage fields a window keeps (cost is 0 for local models; latency is wall time).
COUNTED: Final = ("calls", "failures", "prompt_tokens", "completion_tokens")


def add_usage(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """``a + b`` for nested dicts of numbers (missing keys count as 0)."""
    out: dict[str, Any] = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in a.items()}
    for key, value in b.items():
        if isinstance(value, Mapping):
            out[key] = add_usage(out.get(key, {}), value)
        else:
            out[key] = out.get(key, 0) + value
    return out


def _delta(after: Mapping[str, Mapping[str, Any]], before: Mapping[str, Mapping[str, Any]],
           fields: Collection[str] | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for op, values in after.items():
        if op == "total":
            continue
        prev = before.get(op, {})
        diff = {k: v - prev.get(k, 0) for k, v in values.items()
                if (fields is None or k in fields) and v - prev.get(k, 0)}
        if diff:
            out[op] = diff
    return out


class UsageWindow:
    """``with UsageWindow(meter, llm) as w: …``: the step's usage, replies and wall time.

    After the block: ``w.usage`` is ``{operation: {calls, failures,
    prompt_tokens, completion_tokens}}`` (operations that ran only),
    ``w.replies`` is ``{operation: {outcome: n}}`` from ``llm.replies`` when
    the client keeps a tally (``{}`` otherwise), ``w.wall_s`` the seconds.
    """

    def __init__(self, meter: UsageMeter, llm: Any) -> None:
        self._meter = meter
        self._tally = getattr(llm, "replies", None)
        self.usage: dict[str, dict[str, Any]] = {}
        self.replies: dict[str, dict[str, Any]] = {}
        self.wall_s = 0.0

    def _replies(self) -> dict[str, dict[str, int]]:
        return self._tally.snapshot() if self._tally is not None else {}

    def __enter__(self) -> UsageWindow:
        self._usage0 = self._meter.snapshot()
        self._replies0 = self._replies()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall_s = time.perf_counter() - self._t0
        self.usage = _delta(self._meter.snapshot(), self._usage0, COUNTED)
        self.replies = _delta(self._replies(), self._replies0, None)


def _pick(usage: Mapping[str, Any], include: Collection[str] | None,
          exclude: Collection[str]) -> dict[str, Any]:
    return {op: v for op, v in usage.items()
            if op not in exclude and (include is None or op in include)}


def per_turn(
    rows: Sequence[Mapping[str, Any]],
    *,
    include: Collection[str] | None = None,
    exclude: Collection[str] = (),
) -> dict[str, Any]:
    """Totals and per-turn means of ingest rows, over the operations kept.

    Args:
        rows: Rows with ``usage`` and ``replies`` by operation, ``wall_s``, ``cpu_s``,
            and ``turns`` (how many turns the row's ``add`` held; 1 when absent).
        include: Only these operations (``None``: all).
        exclude: Never these operations.

    Returns:
        ``{"total": {calls, failures, prompt_tokens, completion_tokens},
        "per_turn": the same divided by the number of turns, "by_operation":
        totals per operation, "replies": outcome counts summed over the
        operations, "wall_s_per_turn", "cpu_s_per_turn", "wall_s_max" (of one
        row), "turns"}``.
    """
    by_op: dict[str, Any] = {}
    replies: dict[str, Any] = {}
    for row in rows:
        by_op = add_usage(by_op, _pick(row["usage"], include, exclude))
        for counts in _pick(row.get("replies", {}), include, exclude).values():
            replies = add_usage(replies, counts)
    total = add_usage({k: 0 for k in COUNTED}, {})
    for values in by_op.values():
        total = add_usage(total, values)
    turns = sum(int(r.get("turns", 1)) for r in rows)
    n = max(turns, 1)
    walls = [float(r.get("wall_s", 0.0)) for r in rows]
    return {
        "total": total,
        "per_turn": {k: round(v / n, 2) for k, v in total.items()},
        "by_operation": dict(sorted(by_op.items())),
        "replies": dict(sorted(replies.items())),
        "wall_s_per_turn": round(sum(walls) / n, 2),
        "cpu_s_per_turn": round(sum(float(r.get("cpu_s", 0.0)) for r in rows) / n, 2),
        "wall_s_max": round(max(walls, default=0.0), 2),
        "turns": turns,
    }


def stage_totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per stage (``search``, ``answer``, ``feedback``, ``judge``…): totals and per-row means.

    Each row's ``usage`` maps a stage to ``{operation: counts}``; the result
    maps a stage to its summed ``calls``, ``prompt_tokens`` and
    ``completion_tokens`` and to ``per_row`` means of them.
    """
    stages: dict[str, Any] = {}
    for row in rows:
        for stage, ops in row["usage"].items():
            for values in ops.values():
                stages = add_usage(stages, {stage: values})
    n = max(len(rows), 1)
    for values in stages.values():
        values["per_row"] = {k: round(values.get(k, 0) / n, 1)
                             for k in ("calls", "prompt_tokens", "completion_tokens")}
    return stages
