"""Retrieval and QA metrics for the benchmarks (the LoCoMo protocol of `labile_bench.locomo_run`).

Everything here is a pure function of its arguments, except
:class:`RetrievalScorer`, which only accumulates values.

Retrieval metrics are *turn-level*: the ranked nodes a memory returns are
expanded into a ranked list of distinct turns with
:func:`turns_from_ranked_sources`, and the first ``k`` of those turns are
scored against the gold evidence with binary relevance:

* ``Recall@k = |top_k ∩ gold| / |gold|``
* ``Hit@k = 1`` if ``top_k ∩ gold`` is non-empty, else ``0``
* ``NDCG@k = DCG@k / IDCG@k`` with
  ``DCG@k = Σ_{i=1..k} rel_i / log2(i + 1)`` (``rel_i`` is 1 when the turn at
  1-based rank ``i`` is gold and has not appeared at an earlier rank, else 0)
  and ``IDCG@k = Σ_{i=1..min(|gold|, k)} 1 / log2(i + 1)``.

An empty gold set makes every retrieval metric undefined: the functions raise
:class:`ValueError` and callers exclude such questions (they are counted by the
loaders).

QA metrics are computed on answers normalised with :func:`normalize_answer`
(the SQuAD normalisation) and split on whitespace; see each function for the
exact definition. No stemming is applied.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence

__all__ = [
    "RetrievalScorer",
    "bleu1",
    "hit_at_k",
    "mean_metrics",
    "ndcg_at_k",
    "normalize_answer",
    "percentile",
    "recall_at_k",
    "rouge_l",
    "session_hit_at_k",
    "session_ndcg_at_k",
    "session_recall_at_k",
    "token_f1",
    "turns_from_ranked_sources",
]


# ---------------------------------------------------------------------------
# Retrieval
# ---------------------------------------------------------------------------


def turns_from_ranked_sources(ranked: Sequence[Sequence[str]]) -> list[str]:
    """Expand ranked nodes into a ranked list of distinct turns.

    Each retrieved node is given as its ``sources`` list (turn ids, in order).
    Nodes are visited in rank order and each contributes its sources in order;
    a turn id already listed (by an earlier node, or earlier in the same node)
    is skipped, so the result has no duplicates and keeps first-seen order.

    Args:
        ranked: The retrieved nodes, best first, each as its list of turn ids.

    Returns:
        The distinct turn ids in rank order.
    """
    seen: set[str] = set()
    out: list[str] = []
    for sources in ranked:
        if isinstance(sources, str):
            raise TypeError("each ranked node must be a sequence of turn ids, not a str")
        for turn in sources:
            if turn not in seen:
                seen.add(turn)
                out.append(turn)
    return out


def _check(gold: Collection[str], k: int) -> frozenset[str]:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    if isinstance(gold, str):
        raise TypeError("gold must be a collection of ids, not a str")
    gold_set = frozenset(gold)
    if not gold_set:
        raise ValueError("gold evidence is empty: the metric is undefined")
    return gold_set


def _hits(ranked: Sequence[str], gold: frozenset[str], k: int) -> list[int]:
    """1-based ranks (within the first ``k``) of the first occurrence of each gold id."""
    seen: set[str] = set()
    ranks: list[int] = []
    for rank, item in enumerate(ranked[:k], start=1):
        if item in gold and item not in seen:
            seen.add(item)
            ranks.append(rank)
    return ranks


def recall_at_k(ranked_turns: Sequence[str], gold: Collection[str], k: int) -> float:
    """Fraction of the gold ids found among the first ``k`` ranked ids.

    Args:
        ranked_turns: Retrieved ids, best first (duplicates count once).
        gold: The relevant ids (a set; duplicates are ignored).
        k: Cut-off, a positive int. Fewer than ``k`` ranked ids is fine.

    Returns:
        ``|top_k ∩ gold| / |gold|``, in ``[0, 1]``.

    Raises:
        ValueError: If ``gold`` is empty or ``k < 1``.
    """
    gold_set = _check(gold, k)
    return len(_hits(ranked_turns, gold_set, k)) / len(gold_set)


def hit_at_k(ranked_turns: Sequence[str], gold: Collection[str], k: int) -> float:
    """Whether any gold id is among the first ``k`` ranked ids.

    Args:
        ranked_turns: Retrieved ids, best first.
        gold: The relevant ids.
        k: Cut-off, a positive int.

    Returns:
        ``1.0`` if ``top_k ∩ gold`` is non-empty, else ``0.0``.

    Raises:
        ValueError: If ``gold`` is empty or ``k < 1``.
    """
    gold_set = _check(gold, k)
    return 1.0 if _hits(ranked_turns, gold_set, k) else 0.0


def ndcg_at_k(ranked_turns: Sequence[str], gold: Collection[str], k: int) -> float:
    """Normalised discounted cumulative gain at ``k`` with binary relevance.

    ``DCG@k = Σ rel_i / log2(i + 1)`` over 1-based ranks ``i ≤ k`` (a repeated
    id gains nothing after its first occurrence), divided by the ideal
    ``IDCG@k = Σ_{i=1..min(|gold|, k)} 1 / log2(i + 1)``.

    Args:
        ranked_turns: Retrieved ids, best first.
        gold: The relevant ids.
        k: Cut-off, a positive int.

    Returns:
        NDCG@k in ``[0, 1]``.

    Raises:
        ValueError: If ``gold`` is empty or ``k < 1``.
    """
    gold_set = _check(gold, k)
    dcg = sum(1.0 / math.log2(rank + 1) for rank in _hits(ranked_turns, gold_set, k))
    idcg = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold_set), k) + 1))
    return min(1.0, dcg / idcg)


_METRICS = (("recall", recall_at_k), ("ndcg", ndcg_at_k), ("hit", hit_at_k))


class RetrievalScorer:
    """Accumulates per-question retrieval metrics and reports means per category.

    For every ``k`` in ``ks`` the scorer records ``recall@k``, ``ndcg@k`` and
    ``hit@k`` of each question. :meth:`means` returns unrounded means in
    percent; :meth:`report` rounds them to one decimal. Both are keyed by the
    category (as a string, in numeric order when categories are ints) plus
    ``"overall"`` (mean over all questions, not over categories), and each
    entry carries ``n``, the number of questions it averages.

    Example:
        >>> s = RetrievalScorer(ks=(1, 2))
        >>> _ = s.add(["a", "b"], {"b"}, category=1)
        >>> s.report()["overall"]["recall@2"]
        100.0
    """

    def __init__(self, ks: Sequence[int] = (1, 5, 10)) -> None:
        """Create an empty scorer.

        Args:
            ks: The cut-offs to score, each a positive int (deduplicated, sorted).

        Raises:
            ValueError: If ``ks`` is empty or holds a non-positive value.
        """
        if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
            raise ValueError(f"ks must be non-empty positive ints, got {ks!r}")
        self.ks: tuple[int, ...] = tuple(sorted(set(ks)))
        self.metric_names: tuple[str, ...] = tuple(
            f"{name}@{k}" for name, _ in _METRICS for k in self.ks
        )
        self._rows: list[tuple[int | str, dict[str, float]]] = []

    def __len__(self) -> int:
        """Number of questions added so far."""
        return len(self._rows)

    def add(
        self, ranked_turns: Sequence[str], gold: Collection[str], *, category: int | str
    ) -> dict[str, float]:
        """Score one question and record it.

        Args:
            ranked_turns: Distinct retrieved turn ids, best first (see
                :func:`turns_from_ranked_sources`).
            gold: The question's (cleaned, non-empty) evidence turn ids.
            category: The question's category (e.g. LoCoMo 1..4).

        Returns:
            The question's metrics as fractions in ``[0, 1]``, keyed like
            ``"recall@5"``.

        Raises:
            ValueError: If ``gold`` is empty (nothing is recorded then).
        """
        row = {f"{name}@{k}": fn(ranked_turns, gold, k) for name, fn in _METRICS for k in self.ks}
        self._rows.append((category, row))
        return dict(row)

    def _groups(self) -> dict[str, list[dict[str, float]]]:
        cats = {c for c, _ in self._rows}
        if all(isinstance(c, int) for c in cats):
            order = [str(c) for c in sorted(cats, key=int)]
        else:
            order = sorted(str(c) for c in cats)
        groups: dict[str, list[dict[str, float]]] = {key: [] for key in order}
        for cat, row in self._rows:
            groups[str(cat)].append(row)
        groups["overall"] = [row for _, row in self._rows]
        return groups

    def means(self) -> dict[str, dict[str, float]]:
        """Unrounded means in percent, per category and overall.

        Returns:
            ``{group: {"n": n, "recall@k": mean%, ...}}``; ``"overall"`` is
            always present (with ``n == 0`` and no metric keys when empty).
        """
        out: dict[str, dict[str, float]] = {}
        for key, rows in self._groups().items():
            entry: dict[str, float] = {"n": len(rows)}
            if rows:
                for name in self.metric_names:
                    entry[name] = 100.0 * math.fsum(r[name] for r in rows) / len(rows)
            out[key] = entry
        return out

    def report(self) -> dict[str, dict[str, float]]:
        """Like :meth:`means`, with the percentages rounded to one decimal.

        Returns:
            ``{group: {"n": n, "recall@k": rounded mean%, ...}}``.
        """
        return {
            key: {name: (value if name == "n" else round(value, 1)) for name, value in e.items()}
            for key, e in self.means().items()
        }

    def to_markdown(self) -> str:
        """Render :meth:`report` as a Markdown table (one row per group).

        Returns:
            The table text, without a trailing newline.
        """
        header = ["group", "n", *self.metric_names]
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for key, entry in self.report().items():
            cells = [key, str(int(entry["n"]))]
            cells += [f"{entry[m]:.1f}" if m in entry else "-" for m in self.metric_names]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# QA
# ---------------------------------------------------------------------------

_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD answer normalisation.

    In this order: lowercase; delete every ASCII punctuation character
    (``string.punctuation``); replace the whole words ``a``, ``an``, ``the``
    by a space; collapse runs of whitespace into single spaces and strip.

    Args:
        text: Any answer text.

    Returns:
        The normalised text (possibly empty).
    """
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _tokens(text: str) -> list[str]:
    return normalize_answer(text).split()


def _empty_case(pred: list[str], gold: list[str]) -> float | None:
    if not pred or not gold:
        return 1.0 if pred == gold else 0.0
    return None


def token_f1(pred: str, gold: str) -> float:
    """SQuAD token F1 on normalised whitespace tokens.

    ``common`` is the multiset intersection of the prediction and gold tokens;
    ``P = |common| / |pred|``, ``R = |common| / |gold|``, ``F1 = 2PR / (P + R)``
    (0 when ``common`` is empty). If either side has no tokens, the score is
    1.0 when both are empty and 0.0 otherwise.

    Args:
        pred: Predicted answer.
        gold: Reference answer.

    Returns:
        F1 in ``[0, 1]``.
    """
    p, g = _tokens(pred), _tokens(gold)
    special = _empty_case(p, g)
    if special is not None:
        return special
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def bleu1(pred: str, gold: str) -> float:
    """Sentence BLEU-1 (single reference) on normalised whitespace tokens.

    ``p1 = Σ_w min(count_pred(w), count_gold(w)) / |pred|`` (clipped unigram
    precision); brevity penalty ``BP = 1`` if ``|pred| > |gold|`` else
    ``exp(1 - |gold| / |pred|)``; ``BLEU-1 = BP · p1``. No smoothing. If either
    side has no tokens, the score is 1.0 when both are empty and 0.0 otherwise.

    Args:
        pred: Predicted answer (candidate).
        gold: Reference answer.

    Returns:
        BLEU-1 in ``[0, 1]``.
    """
    p, g = _tokens(pred), _tokens(gold)
    special = _empty_case(p, g)
    if special is not None:
        return special
    clipped = sum((Counter(p) & Counter(g)).values())
    precision = clipped / len(p)
    bp = 1.0 if len(p) > len(g) else math.exp(1.0 - len(g) / len(p))
    return bp * precision


def _lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(pred: str, gold: str) -> float:
    """ROUGE-L F-measure (beta = 1) on normalised whitespace tokens.

    With ``L`` the length of the longest common subsequence of the token
    lists, ``P = L / |pred|``, ``R = L / |gold|`` and
    ``F = (1 + β²)PR / (R + β²P) = 2PR / (P + R)`` (0 when ``L = 0``). If either
    side has no tokens, the score is 1.0 when both are empty and 0.0 otherwise.

    Args:
        pred: Predicted answer.
        gold: Reference answer.

    Returns:
        ROUGE-L F1 in ``[0, 1]``.
    """
    p, g = _tokens(pred), _tokens(gold)
    special = _empty_case(p, g)
    if special is not None:
        return special
    lcs = _lcs_length(p, g)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(p), lcs / len(g)
    return 2 * precision * recall / (precision + recall)


# ---------------------------------------------------------------------------
# Latency helper
# ---------------------------------------------------------------------------


def percentile(values: Iterable[float], p: float) -> float:
    """The ``p``-th percentile with linear interpolation (numpy's default).

    The values are sorted; with ``n`` values the fractional rank is
    ``h = (n - 1) · p / 100`` and the result is
    ``v[⌊h⌋] + (h - ⌊h⌋) · (v[⌊h⌋ + 1] - v[⌊h⌋])``.

    Args:
        values: The sample (any finite numbers; consumed once).
        p: Percentile in ``[0, 100]``.

    Returns:
        The interpolated percentile.

    Raises:
        ValueError: If ``values`` is empty or ``p`` is outside ``[0, 100]``.
    """
    data = sorted(float(v) for v in values)
    if not data:
        raise ValueError("percentile of an empty sample")
    if not 0.0 <= p <= 100.0:  # also rejects NaN
        raise ValueError(f"p must be in [0, 100], got {p!r}")
    h = (len(data) - 1) * p / 100.0
    lo = math.floor(h)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (h - lo) * (data[hi] - data[lo])


def mean_metrics(rows: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Mean of each key over dict rows (keys of the first row; unrounded).

    Args:
        rows: Per-question metric dicts sharing the same keys.

    Returns:
        ``{key: mean}``; empty when there are no rows.
    """
    materialised = list(rows)
    if not materialised:
        return {}
    return {
        key: math.fsum(r[key] for r in materialised) / len(materialised) for key in materialised[0]
    }


# -- session-level (LongMemEval: evidence is whole sessions) ------------------------


def _distinct(ranked_session_ids: Sequence[str]) -> list[str]:
    if isinstance(ranked_session_ids, str):
        raise TypeError("ranked_session_ids must be a sequence of ids, not a str")
    return turns_from_ranked_sources([[sid] for sid in ranked_session_ids])


def session_recall_at_k(
    ranked_session_ids: Sequence[str], gold_ids: Collection[str], k: int
) -> float:
    """Recall@k over distinct sessions.

    Args:
        ranked_session_ids: Retrieved session ids, best first; repeats are
            collapsed to their first occurrence before cutting at ``k``.
        gold_ids: ``answer_session_ids``.
        k: Cut-off, a positive int.

    Returns:
        ``|top_k ∩ gold| / |gold|`` in ``[0, 1]``.

    Raises:
        ValueError: If ``gold_ids`` is empty or ``k < 1``.
    """
    return recall_at_k(_distinct(ranked_session_ids), gold_ids, k)


def session_ndcg_at_k(
    ranked_session_ids: Sequence[str], gold_ids: Collection[str], k: int
) -> float:
    """NDCG@k (binary relevance) over distinct sessions.

    Args:
        ranked_session_ids: Retrieved session ids, best first; repeats are
            collapsed to their first occurrence before cutting at ``k``.
        gold_ids: ``answer_session_ids``.
        k: Cut-off, a positive int.

    Returns:
        NDCG@k in ``[0, 1]``.

    Raises:
        ValueError: If ``gold_ids`` is empty or ``k < 1``.
    """
    return ndcg_at_k(_distinct(ranked_session_ids), gold_ids, k)


def session_hit_at_k(ranked_session_ids: Sequence[str], gold_ids: Collection[str], k: int) -> float:
    """Hit@k over distinct sessions.

    Args:
        ranked_session_ids: Retrieved session ids, best first.
        gold_ids: ``answer_session_ids``.
        k: Cut-off, a positive int.

    Returns:
        1.0 if a gold session is among the first ``k`` distinct ones, else 0.0.

    Raises:
        ValueError: If ``gold_ids`` is empty or ``k < 1``.
    """
    return hit_at_k(_distinct(ranked_session_ids), gold_ids, k)
