"""Metrics of the benchmark of change: turn-level recall per kind, and stale-first.

The retrieval metrics are those of `labile_bench.metrics` (Recall@k, NDCG@k,
Hit@k on the ranked distinct turns). This module adds the one that says
whether a memory answers with an old value:

* ``stale_first@k = 1`` when, among the first ``k`` ranked turns, a turn
  holding a superseded value (``stale``) comes before the first gold turn, or
  a stale turn is there and no gold turn is; else ``0``. It is defined for
  questions about the current value (those with stale turns).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from labile_bench.metrics import RetrievalScorer

__all__ = ["ChangeScorer", "stale_first"]


def stale_first(ranked_turns: Sequence[str], gold: Collection[str],
                stale: Collection[str], k: int) -> float:
    """Whether a stale turn outranks every gold turn within the first ``k``.

    Args:
        ranked_turns: Distinct retrieved turn ids, best first.
        gold: The turns holding the current value (non-empty).
        stale: The turns holding values it superseded (non-empty).
        k: Cut-off, a positive int.

    Returns:
        ``1.0`` if a stale turn is in the first ``k`` and ranks above the first
        gold turn there (or no gold turn is there), else ``0.0``.

    Raises:
        ValueError: ``gold`` or ``stale`` is empty, they overlap, or ``k < 1``.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    gold_set, stale_set = frozenset(gold), frozenset(stale)
    if not gold_set or not stale_set:
        raise ValueError("stale-first needs both gold and stale turns")
    if gold_set & stale_set:
        raise ValueError(f"turns {sorted(gold_set & stale_set)} are both gold and stale")
    for turn in ranked_turns[:k]:
        if turn in gold_set:
            return 0.0
        if turn in stale_set:
            return 1.0
    return 0.0


class ChangeScorer:
    """Accumulates per-question metrics by kind; stale-first on current questions.

    Wraps a `RetrievalScorer` (kinds as categories) and adds ``stale_first@k``
    at the largest ``k`` for questions given stale turns.
    """

    def __init__(self, ks: Sequence[int] = (1, 5)) -> None:
        """Score at each of ``ks`` (positive ints); stale-first at the largest."""
        self.retrieval = RetrievalScorer(ks=ks)
        self.k_stale = max(self.retrieval.ks)
        self._stale: dict[str, list[float]] = {}

    def add(self, ranked_turns: Sequence[str], gold: Collection[str],
            stale: Collection[str], *, kind: str) -> dict[str, float]:
        """Score one question; the returned row has ``stale_first@k`` when ``stale``.

        Raises:
            ValueError: ``gold`` is empty, or overlaps ``stale`` (nothing is recorded).
        """
        # stale-first first: it checks gold against stale before anything is recorded
        value = stale_first(ranked_turns, gold, stale, self.k_stale) if stale else None
        row = self.retrieval.add(ranked_turns, gold, category=kind)
        if value is not None:
            self._stale.setdefault(kind, []).append(value)
            row[f"stale_first@{self.k_stale}"] = value
        return row

    def means(self) -> dict[str, dict[str, float]]:
        """Means in percent per kind and ``overall`` (see `RetrievalScorer.means`),
        with ``stale_first@k`` and its count ``n_stale`` where stale turns were given."""
        out = self.retrieval.means()
        name = f"stale_first@{self.k_stale}"
        every = [v for values in self._stale.values() for v in values]
        for kind, values in [*self._stale.items(), ("overall", every)]:
            if values:
                out[kind][name] = 100.0 * math.fsum(values) / len(values)
                out[kind]["n_stale"] = len(values)
        return out
