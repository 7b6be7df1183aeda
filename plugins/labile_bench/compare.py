"""Question-by-question comparison of two per-question logs (``labile bench compare``).

Two presets with the same mean can differ on many questions; a mean that
moves by a few tenths can be one question. For each metric this module
counts the questions where log B scores higher or lower than log A, gives the
two-sided sign-test p-value of that split (ties dropped), and lists the
questions that moved, so an ablation can be read where it wins and loses. It
also counts the questions whose ranked turn list changed at all, metrics
aside: a refactoring that must not change behaviour shows 0 there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs


@attrs.frozen(kw_only=True)
class MetricDiff:
    """How one metric moved from log A to log B."""

    metric: str
    mean_a: float
    mean_b: float
    better: int
    worse: int

    @property
    def p_value(self) -> float:
        """Two-sided exact sign test of better vs worse (1.0 when nothing moved)."""
        return sign_test(self.better, self.worse)


@attrs.frozen(kw_only=True)
class Comparison:
    """The comparison of two logs over the questions both contain."""

    questions: int
    metrics: tuple[MetricDiff, ...]
    moved: tuple[dict[str, Any], ...]
    ranked_changed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "questions": self.questions,
            "metrics": [{"metric": m.metric, "mean_a": round(m.mean_a, 4),
                         "mean_b": round(m.mean_b, 4), "better": m.better, "worse": m.worse,
                         "p_value": round(m.p_value, 4)} for m in self.metrics],
            "moved": list(self.moved),
            "ranked_changed": self.ranked_changed,
        }


def sign_test(better: int, worse: int) -> float:
    """Two-sided exact binomial sign-test p-value for ``better`` vs ``worse``."""
    n = better + worse
    if n == 0:
        return 1.0
    k = min(better, worse)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return min(1.0, 2.0 * tail)


def _key(row: Mapping[str, Any]) -> tuple[str, str]:
    return str(row.get("sample_id", "")), str(row.get("index", row.get("question", "")))


def compare_logs(
    rows_a: Sequence[Mapping[str, Any]], rows_b: Sequence[Mapping[str, Any]],
    *, focus: str = "recall@5",
) -> Comparison:
    """Compare two per-question logs of ``labile bench locomo --log-dir``.

    Questions are matched by conversation and question index; those in only
    one log are left out. ``moved`` lists the questions whose ``focus``
    metric changed, with both values; ``ranked_changed`` counts those whose
    ``retrieved_turns`` differ (a reordering counts, whatever the metrics say).

    Raises:
        ValueError: no question is in both logs, a row lacks ``metrics``, or
            ``focus`` is not one of the logs' metrics.
    """
    by_a = {_key(r): r for r in rows_a}
    pairs = [(by_a[_key(r)], r) for r in rows_b if _key(r) in by_a]
    if not pairs:
        raise ValueError("the two logs have no question in common")
    for a, b in pairs:
        if "metrics" not in a or "metrics" not in b:
            raise ValueError(f"question {_key(a)} has no metrics")
    names = [m for m in pairs[0][0]["metrics"] if m in pairs[0][1]["metrics"]]
    if focus not in names:
        raise ValueError(f"unknown metric {focus!r} (the logs have {', '.join(names)})")
    diffs = []
    for name in names:
        va = [float(a["metrics"][name]) for a, _ in pairs]
        vb = [float(b["metrics"][name]) for _, b in pairs]
        diffs.append(MetricDiff(
            metric=name, mean_a=sum(va) / len(va), mean_b=sum(vb) / len(vb),
            better=sum(y > x for x, y in zip(va, vb, strict=True)),
            worse=sum(y < x for x, y in zip(va, vb, strict=True)),
        ))
    moved = tuple(
        {"sample_id": a.get("sample_id"), "index": a.get("index"),
         "category": a.get("category"), "question": a.get("question"),
         focus: [a["metrics"][focus], b["metrics"][focus]]}
        for a, b in pairs
        if focus in a["metrics"] and a["metrics"][focus] != b["metrics"].get(focus)
    )
    ranked_changed = sum(a.get("retrieved_turns") != b.get("retrieved_turns") for a, b in pairs)
    return Comparison(questions=len(pairs), metrics=tuple(diffs), moved=moved,
                      ranked_changed=ranked_changed)


def format_comparison(cmp: Comparison, label_a: str = "A", label_b: str = "B") -> str:
    """A text table: per metric, both means (in %), better / worse counts and p."""
    lines = [f"{cmp.questions} questions in both logs; B = {label_b} against A = {label_a}",
             f"{'metric':<10} {'A':>6} {'B':>6} {'B better':>9} {'B worse':>8} {'p':>7}"]
    for m in cmp.metrics:
        lines.append(f"{m.metric:<10} {100 * m.mean_a:>6.1f} {100 * m.mean_b:>6.1f} "
                     f"{m.better:>9} {m.worse:>8} {m.p_value:>7.3f}")
    lines.append(f"ranked lists changed: {cmp.ranked_changed} of {cmp.questions}")
    return "\n".join(lines)
