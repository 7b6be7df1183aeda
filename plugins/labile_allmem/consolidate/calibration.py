"""Calibrated confidences of the offline diagnoser.

The gate θ = 0.9 is only meaningful on probabilities: "accept when at least
90 % of such proposals are right". The offline rules say *which kind* of
evidence a proposal rests on (a near-duplicate, a restatement, a plan
followed by its report, a split at an announced change of topic …), and
hand judgements say how often proposals of each kind are right. A
proposal's confidence is therefore the posterior mean of its kind's
precision under a uniform prior, ``(correct + 1) / (judged + 2)``, counted
over the judged offline proposals of LoCoMo dev conversations stored as ids,
kind and verdict in ``tests/allmem/judged/atc.jsonl`` (a test recounts them
and checks `JUDGED`; another checks the estimate on conversations held out
of the count).

Why kinds and not a curve over the raw strength: a logistic curve of the raw
strength, fitted per operator on the same judgements, never reaches 0.9
(the raw strength ranks restatements weakly and splits and updates not at
all; docs/allmem.md), while the kinds separate: near-duplicates are right
far more often than restatements. Under the uniform prior a kind needs at
least eight judged proposals, all right, before its confidence reaches 0.9:
the gate admits nothing on thin evidence. The raw strength still orders
proposals of one kind.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = ["JUDGED", "calibrated", "count_judged"]

#: (op, kind) -> (correct, judged): the judged offline proposals of each kind
#: (``tests/allmem/judged/atc.jsonl``: 176 judgements on the seven dev conversations).
JUDGED: Final[dict[tuple[str, str], tuple[int, int]]] = {
    ("merge", "near-duplicate"): (5, 5),
    ("merge", "repeated ritual"): (55, 55),
    ("merge", "restatement"): (24, 50),
    ("split", "marked topic change"): (3, 4),
    ("split", "topic segments"): (5, 23),
    ("update", "dated plan realised"): (3, 3),
    ("update", "new value"): (0, 5),
    ("update", "plan realised"): (2, 10),
    ("update", "stated change"): (0, 2),
}


def calibrated(op: str, kind: str, judged: Mapping[tuple[str, str], tuple[int, int]] = JUDGED
               ) -> float:
    """The probability that a proposal of ``op`` resting on evidence of ``kind`` is right.

    Args:
        op: ``split`` / ``merge`` / ``update``.
        kind: The rule's kind (e.g. ``near-duplicate``; see `labile_allmem.
            consolidate.relate` and `labile_allmem.consolidate.segment`).
        judged: Judgement counts per ``(op, kind)`` (default: `JUDGED`).

    Returns:
        ``(correct + 1) / (judged + 2)``; 0.5 for a kind never judged.
    """
    correct, total = judged.get((op, kind), (0, 0))
    return (correct + 1) / (total + 2)


def count_judged(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], tuple[int, int]]:
    """Judgement counts per ``(op, kind)`` of judged rows (``op``, ``kind``, ``verdict``);
    rows without a kind (no longer proposed by the rules) are not counted."""
    total: Counter[tuple[str, str]] = Counter()
    correct: Counter[tuple[str, str]] = Counter()
    for row in rows:
        if not row.get("kind"):
            continue
        key = (str(row["op"]), str(row["kind"]))
        total[key] += 1
        correct[key] += row["verdict"] == "correct"
    return {key: (correct[key], total[key]) for key in sorted(total)}
