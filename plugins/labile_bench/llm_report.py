"""The text table of a real-model run (`labile_bench.llm_run`), presets side by side."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["format_llm_table"]

Cell = Callable[[Mapping[str, Any]], Any]


def _get(entry: Mapping[str, Any], *path: str, default: Any = None) -> Any:
    value: Any = entry
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return default
        value = value[key]
    return value


def _replies(entry: Mapping[str, Any]) -> str:
    counts: dict[str, int] = {}
    for outcomes in entry.get("replies", {}).values():
        for outcome, n in outcomes.items():
            key = "rejected" if outcome.startswith("rejected") else outcome
            counts[key] = counts.get(key, 0) + n
    return "/".join(str(counts.get(k, 0)) for k in ("valid", "repaired", "rejected"))


def _rejections(entry: Mapping[str, Any]) -> str:
    counts: dict[str, int] = {}
    for outcomes in entry.get("replies", {}).values():
        for outcome, n in outcomes.items():
            if outcome.startswith("rejected:"):
                reason = outcome.split(":", 1)[1]
                counts[reason] = counts.get(reason, 0) + n
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"


def _top(counts: Mapping[str, int] | None, n: int = 4) -> str:
    if not counts:
        return "-"
    items = sorted(counts.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k.rsplit('.', 1)[-1]} {v}" for k, v in items[:n])


def _executed(entry: Mapping[str, Any]) -> str:
    counts: dict[str, int] = {}
    for run in _get(entry, "consolidation", "runs", default=[]):
        for key, n in run["counts"].items():
            if key.endswith(".executed") and n:
                counts[key.split(".")[0]] = counts.get(key.split(".")[0], 0) + n
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"


def _diagnosis(counts: Mapping[str, int] | None) -> str:
    """``asked/skipped`` of All-Mem's LLM diagnoser (``-`` without one)."""
    if not counts:
        return "-"
    skipped = sum(n for k, n in counts.items() if k.startswith("skipped:"))
    return f"{counts.get('asked', 0)}/{skipped}"


def _stage(pass_name: str, stage: str, field: str) -> Cell:
    return lambda e: _get(e, "questions", pass_name, "stages", stage, "per_row", field)


def _rows() -> list[tuple[str, Cell]]:
    on, off = "reconsolidation_on", "reconsolidation_off"
    return [
        ("turns", lambda e: e["turns"]),
        ("ingest calls/turn", lambda e: _get(e, "ingest", "per_turn", "calls")),
        ("ingest prompt tok/turn", lambda e: _get(e, "ingest", "per_turn", "prompt_tokens")),
        ("ingest compl. tok/turn",
         lambda e: _get(e, "ingest", "per_turn", "completion_tokens")),
        ("ingest wall s/turn", lambda e: _get(e, "ingest", "wall_s_per_turn")),
        ("consol. calls/turn", lambda e: _get(e, "consolidation", "per_turn_amortised",
                                              "calls")),
        ("consol. prompt tok/turn", lambda e: _get(e, "consolidation", "per_turn_amortised",
                                                   "prompt_tokens")),
        ("replies v/r/rej", _replies),
        ("rejected because", _rejections),
        ("refused by caller", lambda e: ", ".join(
            f"{k} {v}" for k, v in e.get("caller_rejections", {}).items() if v) or "-"),
        ("node kinds", lambda e: _top(_get(e, "produced", "node_kinds"))),
        ("visible kinds", lambda e: _top(_get(e, "produced", "visible_kinds"))),
        ("predicates", lambda e: _top(_get(e, "produced", "predicates"))),
        ("ATC executed", _executed),
        ("diagnosis asked/skipped", lambda e: _diagnosis(_get(e, "consolidation", "diagnosis"))),
        ("questions", lambda e: _get(e, "questions", off, "n")),
        ("R@5 recon. off", lambda e: _get(e, "questions", off, "retrieval", "R@5")),
        ("R@5 recon. on", lambda e: _get(e, "questions", on, "retrieval", "R@5")),
        ("search calls/q", _stage(off, "search", "calls")),
        ("search prompt tok/q", _stage(off, "search", "prompt_tokens")),
        ("answer prompt tok/q", _stage(on, "answer", "prompt_tokens")),
        ("feedback calls/q", _stage(on, "feedback", "calls")),
        ("feedback prompt tok/q", _stage(on, "feedback", "prompt_tokens")),
        ("judge prompt tok/q", _stage(on, "judge", "prompt_tokens")),
        ("QA judge acc. %", lambda e: _get(e, "questions", on, "qa", "accuracy")),
        ("QA F1 %", lambda e: _get(e, "questions", on, "qa", "f1")),
    ]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return str(value)


def format_llm_table(summary: Mapping[str, Any]) -> str:
    """One line per figure, one column per preset (``-``: not measured)."""
    presets: Mapping[str, Mapping[str, Any]] = summary["presets"]
    names = list(presets)
    cells = [[_cell(fn(presets[n])) for n in names] for _, fn in _rows()]
    width = max([14, *(len(n) + 2 for n in names), *(len(c) + 2 for row in cells for c in row)])
    header = f"{'':<24}" + "".join(f"{n:>{width}}" for n in names)
    lines = [header, "-" * len(header)]
    for (label, _), row in zip(_rows(), cells, strict=True):
        lines.append(f"{label:<24}" + "".join(f"{c:>{width}}" for c in row))
    return "\n".join(lines)
