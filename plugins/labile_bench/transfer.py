"""How much can feedback on earlier questions help later ones? (``labile bench transfer``)

Reconsolidation changes memory after a retrieval has been used, so it can
only pay off on a *later* query. This module measures, from a per-question
log of ``labile bench locomo --log-dir``, how much a later question could
gain at most from what earlier questions taught, before anyone builds (or
tunes) a reconsolidator against a benchmark.

For every question q, in the order asked, it collects the turns that
feedback on earlier questions of the same conversation could carry over to
q (*carried* turns), under one feedback model and one link rule:

Feedback models (what an earlier question's feedback marks as useful):
    ``self-top1`` / ``self-top3``: the system's own top 1 / 3 retrieved turns,
        all an offline system knows about its retrieval;
    ``oracle``: the gold turns it retrieved within its top 10, what a perfect
        answerer would cite. This is an *upper bound for analysis*: gold is
        read here only to measure, never fed back to a memory.
Link rules (which earlier questions are deemed related to q):
    ``similar>=θ``: the cosine of the two questions' vectors is at least θ;
    ``shared``: a turn the earlier feedback marked is among q's own top 5
        (the association a co-use edge would follow).

A carried turn helps only if it is gold for q and not already in q's top 5.
The report gives, per (feedback, link) pair, how many carried turns are new
to q's top 5, how many of those are gold (their *precision*), and how many
questions gain at least one gold turn; next to the base precision of q's own
turns at ranks 1–5 and 6–10. Promoting carried turns can raise R@5 only where
their precision beats the ranks 1–5 rate, and R@10 only where it beats the
ranks 6–10 rate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

#: Feedback models, in report order.
FEEDBACKS = ("self-top1", "self-top3", "oracle")
#: Question-similarity thresholds of the ``similar>=θ`` link rules.
THRESHOLDS = (0.6, 0.7, 0.8)
OWN_K = 5
RECALL_K = 10


@attrs.frozen(kw_only=True)
class TransferRow:
    """One (feedback model, link rule) pair of the report."""

    feedback: str
    link: str
    carried: int
    carried_gold: int
    questions_gaining: int

    @property
    def precision(self) -> float:
        """Share of carried turns (new to q's top 5) that are gold for q."""
        return self.carried_gold / self.carried if self.carried else 0.0


@attrs.frozen(kw_only=True)
class TransferReport:
    """The transfer ceiling of one per-question log."""

    questions: int
    base_precision_top5: float
    base_precision_6_10: float
    rows: tuple[TransferRow, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "questions": self.questions,
            "base_precision": {"ranks_1_5": round(self.base_precision_top5, 4),
                               "ranks_6_10": round(self.base_precision_6_10, 4)},
            "rows": [{"feedback": r.feedback, "link": r.link, "carried": r.carried,
                      "carried_gold": r.carried_gold, "precision": round(r.precision, 4),
                      "questions_gaining": r.questions_gaining} for r in self.rows],
        }


def _marked(row: Mapping[str, Any], feedback: str) -> set[str]:
    retrieved = list(row["retrieved_turns"])
    if feedback == "self-top1":
        return set(retrieved[:1])
    if feedback == "self-top3":
        return set(retrieved[:3])
    return set(retrieved[:RECALL_K]) & set(row["gold"])  # oracle


def _base_precision(rows: Sequence[Mapping[str, Any]], lo: int, hi: int) -> float:
    n = gold = 0
    for row in rows:
        g = set(row["gold"])
        for turn in list(row["retrieved_turns"])[lo:hi]:
            n += 1
            gold += turn in g
    return gold / n if n else 0.0


def analyse_transfer(
    rows: Sequence[Mapping[str, Any]],
    vectors: np.ndarray,
    *,
    thresholds: Iterable[float] = THRESHOLDS,
    feedbacks: Iterable[str] = FEEDBACKS,
) -> TransferReport:
    """The transfer ceiling of a per-question log.

    Args:
        rows: Log rows in the order the questions were asked, each with
            ``sample_id``, ``gold`` and ``retrieved_turns`` (ranked turn ids).
        vectors: One question vector per row (any embedder); rows are
            normalised here.
        thresholds: θ of the ``similar>=θ`` link rules.
        feedbacks: Feedback models to report (see the module docstring).

    Raises:
        ValueError: ``vectors`` does not have one row per log row, a row lacks
            a field, or an unknown feedback model is named.
    """
    if len(vectors) != len(rows):
        raise ValueError(f"{len(vectors)} question vectors for {len(rows)} log rows")
    for i, row in enumerate(rows):
        missing = [k for k in ("sample_id", "gold", "retrieved_turns") if k not in row]
        if missing:
            raise ValueError(f"log row {i} lacks {', '.join(missing)}")
    feedbacks = tuple(feedbacks)
    unknown = [fb for fb in feedbacks if fb not in FEEDBACKS]
    if unknown:
        raise ValueError(f"unknown feedback model {unknown[0]!r} "
                         f"(use one of {', '.join(FEEDBACKS)})")
    raw = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    v = raw / np.where(norms > 0, norms, 1.0)
    by_conv: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_conv[str(row["sample_id"])].append(i)
    links: list[tuple[str, float | None]] = [(f"similar>={t:g}", float(t)) for t in thresholds]
    links.append(("shared", None))
    out = []
    for fb in feedbacks:
        marked = [_marked(row, fb) for row in rows]
        for link, theta in links:
            carried = carried_gold = gaining = 0
            for idx in by_conv.values():
                for pos, i in enumerate(idx):
                    own = set(list(rows[i]["retrieved_turns"])[:OWN_K])
                    cand: set[str] = set()
                    for j in idx[:pos]:
                        if theta is None:
                            related = bool(marked[j] & own)
                        else:
                            related = float(v[i] @ v[j]) >= theta
                        if related:
                            cand |= marked[j]
                    new = cand - own
                    hits = len(new & set(rows[i]["gold"]))
                    carried += len(new)
                    carried_gold += hits
                    gaining += hits > 0
            out.append(TransferRow(feedback=fb, link=link, carried=carried,
                                   carried_gold=carried_gold, questions_gaining=gaining))
    return TransferReport(
        questions=len(rows),
        base_precision_top5=_base_precision(rows, 0, OWN_K),
        base_precision_6_10=_base_precision(rows, OWN_K, RECALL_K),
        rows=tuple(out),
    )


def format_transfer(report: TransferReport) -> str:
    """A text table of ``report``."""
    lines = [
        f"{report.questions} questions; base precision of own turns: "
        f"ranks 1-5 {report.base_precision_top5:.3f}, ranks 6-10 {report.base_precision_6_10:.3f}",
        f"{'feedback':<10} {'link':<14} {'carried':>8} {'gold':>6} {'precision':>9} {'gaining':>8}",
    ]
    for r in report.rows:
        lines.append(f"{r.feedback:<10} {r.link:<14} {r.carried:>8} {r.carried_gold:>6} "
                     f"{r.precision:>9.3f} {r.questions_gaining:>8}")
    return "\n".join(lines)
