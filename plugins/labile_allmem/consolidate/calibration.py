"""Calibrated confidences of the offline diagnoser.

The offline rules produce a raw strength per proposal (`labile_allmem.
consolidate.relate`, `labile_allmem.consolidate.segment`). A raw strength is
not a probability, and the gate θ = 0.9 is only meaningful on probabilities:
"accept when at least 90 % of such proposals are right". Each operator
therefore maps its raw strength through a logistic curve
``p = 1 / (1 + exp(-(slope * raw + intercept)))`` whose two parameters were
fitted (maximum likelihood) to hand judgements of offline proposals on the
LoCoMo dev split; the judged operations are stored as ids and verdicts in
``tests/allmem/judged/`` and a slow test re-measures their precision.
"""

from __future__ import annotations

import math
from typing import Final

__all__ = ["CALIBRATION", "calibrated"]

#: The curve fitted (L2 = 0.01, Newton) to the 16 judged proposals of
#: ``tests/allmem/judged/atc.jsonl`` (LoCoMo conv-26: 13 Merges, 2 Updates,
#: 1 Split; 9 correct). Split and Update have too few judgements for a curve
#: of their own, so the three share the pooled one: p >= 0.9 needs a raw
#: strength of 0.837.
_POOLED: Final = (11.745, -7.628)

#: op -> (slope, intercept) of the logistic map raw strength -> probability.
CALIBRATION: Final[dict[str, tuple[float, float]]] = {
    "split": _POOLED,
    "merge": _POOLED,
    "update": _POOLED,
}


def calibrated(op: str, raw: float) -> float:
    """The calibrated probability that a proposal of ``op`` with strength ``raw`` is right."""
    slope, intercept = CALIBRATION[op]
    z = slope * raw + intercept
    return 1.0 / (1.0 + math.exp(-z)) if z >= -50 else 0.0
