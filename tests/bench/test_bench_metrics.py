"""Tests for labile_bench.metrics: hand-computed values and properties."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labile_bench.metrics import (
    RetrievalScorer,
    bleu1,
    hit_at_k,
    mean_metrics,
    ndcg_at_k,
    normalize_answer,
    percentile,
    recall_at_k,
    rouge_l,
    token_f1,
    turns_from_ranked_sources,
)

PROPS = settings(database=None, deadline=None, max_examples=200)
L3 = math.log2(3)
L5 = math.log2(5)

# ---------------------------------------------------------------------------
# turns_from_ranked_sources
# ---------------------------------------------------------------------------


def test_turns_from_ranked_sources_dedups_in_rank_order() -> None:
    ranked = [["D1:1", "D1:2"], ["D1:2", "D1:3"], [], ["D1:1", "D2:1", "D2:1"]]
    assert turns_from_ranked_sources(ranked) == ["D1:1", "D1:2", "D1:3", "D2:1"]


def test_turns_from_ranked_sources_keeps_source_order_within_node() -> None:
    assert turns_from_ranked_sources([["D3:2", "D1:1"], ["D2:5"]]) == ["D3:2", "D1:1", "D2:5"]
    assert turns_from_ranked_sources([]) == []


def test_turns_from_ranked_sources_rejects_bare_strings() -> None:
    with pytest.raises(TypeError):
        turns_from_ranked_sources(["D1:1"])


@PROPS
@given(st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=5), max_size=6))
def test_turns_from_ranked_sources_properties(ranked: list[list[str]]) -> None:
    """Expanding ranked nodes gives each turn once, in order of first appearance."""
    out = turns_from_ranked_sources(ranked)
    assert len(out) == len(set(out))
    assert set(out) == {t for node in ranked for t in node}
    flat = [t for node in ranked for t in node]
    assert out == sorted(set(flat), key=flat.index)


# ---------------------------------------------------------------------------
# Retrieval metrics, hand-computed
# ---------------------------------------------------------------------------

RANKED = ["a", "b", "c", "d"]
GOLD = {"b", "d"}


def test_recall_hand_computed() -> None:
    assert recall_at_k(RANKED, GOLD, 1) == 0.0
    assert recall_at_k(RANKED, GOLD, 2) == 0.5
    assert recall_at_k(RANKED, GOLD, 3) == 0.5
    assert recall_at_k(RANKED, GOLD, 4) == 1.0
    assert recall_at_k(RANKED, GOLD, 100) == 1.0
    assert recall_at_k(["a"], {"a", "z"}, 5) == 0.5


def test_ndcg_hand_computed() -> None:
    assert ndcg_at_k(RANKED, GOLD, 1) == 0.0
    assert ndcg_at_k(RANKED, GOLD, 2) == pytest.approx((1 / L3) / (1 + 1 / L3), abs=1e-12)
    assert ndcg_at_k(RANKED, GOLD, 4) == pytest.approx((1 / L3 + 1 / L5) / (1 + 1 / L3))
    # ideal DCG uses min(|gold|, k) positions
    assert ndcg_at_k(["a", "b", "c"], {"a", "b", "c"}, 2) == 1.0
    assert ndcg_at_k(["x", "a"], {"a"}, 2) == pytest.approx(1 / L3)
    assert ndcg_at_k(["a"], {"a", "z"}, 5) == pytest.approx(1 / (1 + 1 / L3))


def test_hit_hand_computed() -> None:
    assert hit_at_k(RANKED, GOLD, 1) == 0.0
    assert hit_at_k(RANKED, GOLD, 2) == 1.0
    assert hit_at_k([], GOLD, 3) == 0.0


def test_duplicates_in_ranking_count_once() -> None:
    ranked = ["b", "b", "d"]
    assert recall_at_k(ranked, GOLD, 2) == 0.5
    assert ndcg_at_k(ranked, GOLD, 2) == pytest.approx(1 / (1 + 1 / L3))
    assert ndcg_at_k(["b", "b"], {"b"}, 2) == 1.0


@pytest.mark.parametrize("fn", [recall_at_k, ndcg_at_k, hit_at_k])
def test_empty_gold_and_bad_k_raise(fn: object) -> None:
    assert callable(fn)
    with pytest.raises(ValueError, match="empty"):
        fn(RANKED, set(), 3)
    with pytest.raises(ValueError, match="k must be"):
        fn(RANKED, GOLD, 0)
    with pytest.raises(TypeError):
        fn(RANKED, "b", 1)


# ---------------------------------------------------------------------------
# Retrieval metrics, properties
# ---------------------------------------------------------------------------

IDS = st.sampled_from([f"D{s}:{t}" for s in range(1, 4) for t in range(1, 5)])
RANKINGS = st.lists(IDS, max_size=15)
GOLDS = st.sets(IDS, min_size=1, max_size=6)


@PROPS
@given(RANKINGS, GOLDS, st.integers(1, 20))
def test_metrics_in_unit_interval(ranked: list[str], gold: set[str], k: int) -> None:
    """Recall, NDCG and Hit lie in [0, 1], with NDCG <= Hit >= Recall."""
    for fn in (recall_at_k, ndcg_at_k, hit_at_k):
        assert 0.0 <= fn(ranked, gold, k) <= 1.0
    assert hit_at_k(ranked, gold, k) >= recall_at_k(ranked, gold, k)
    assert ndcg_at_k(ranked, gold, k) <= hit_at_k(ranked, gold, k)


@PROPS
@given(RANKINGS, GOLDS)
def test_recall_and_hit_monotone_in_k(ranked: list[str], gold: set[str]) -> None:
    """Recall@k and Hit@k never fall as k grows."""
    recalls = [recall_at_k(ranked, gold, k) for k in range(1, 20)]
    hits = [hit_at_k(ranked, gold, k) for k in range(1, 20)]
    assert recalls == sorted(recalls)
    assert hits == sorted(hits)


@PROPS
@given(GOLDS, st.lists(IDS, max_size=5), st.integers(1, 20), st.randoms(use_true_random=False))
def test_perfect_ranking_scores_one(
    gold: set[str], tail: list[str], k: int, rnd: random.Random
) -> None:
    """Gold turns first, in any order, score NDCG 1, Hit 1 and the largest recall k allows."""
    order = sorted(gold)
    rnd.shuffle(order)
    ranked = order + [t for t in tail if t not in gold]
    assert ndcg_at_k(ranked, gold, k) == pytest.approx(1.0)
    assert hit_at_k(ranked, gold, k) == 1.0
    assert recall_at_k(ranked, gold, len(gold)) == 1.0
    assert recall_at_k(ranked, gold, k) == pytest.approx(min(k, len(gold)) / len(gold))


# ---------------------------------------------------------------------------
# RetrievalScorer
# ---------------------------------------------------------------------------


def test_scorer_per_category_and_overall() -> None:
    s = RetrievalScorer(ks=(2, 1))
    assert s.ks == (1, 2)
    row = s.add(RANKED, GOLD, category=1)
    assert row == {
        "recall@1": 0.0,
        "recall@2": 0.5,
        "ndcg@1": 0.0,
        "ndcg@2": pytest.approx((1 / L3) / (1 + 1 / L3)),
        "hit@1": 0.0,
        "hit@2": 1.0,
    }
    s.add(["x", "y"], {"x", "q", "r"}, category=1)
    s.add(["a"], {"a"}, category=10)
    s.add(["y"], {"a"}, category=2)
    assert len(s) == 4
    means = s.means()
    assert list(means) == ["1", "2", "10", "overall"]
    assert means["1"]["n"] == 2
    assert means["1"]["recall@2"] == pytest.approx(100 * (0.5 + 1 / 3) / 2)
    assert means["10"] == {
        "n": 1,
        "recall@1": 100.0,
        "recall@2": 100.0,
        "ndcg@1": 100.0,
        "ndcg@2": 100.0,
        "hit@1": 100.0,
        "hit@2": 100.0,
    }
    assert means["overall"]["n"] == 4
    assert means["overall"]["recall@1"] == pytest.approx(100 * (0 + 1 / 3 + 1 + 0) / 4)
    report = s.report()
    assert report["1"]["recall@2"] == 41.7  # 41.666... rounded
    assert report["overall"]["recall@1"] == 33.3
    assert report["overall"]["n"] == 4
    table = s.to_markdown()
    header = "| group | n | recall@1 | recall@2 | ndcg@1 | ndcg@2 | hit@1 | hit@2 |"
    assert table.splitlines()[0] == header
    assert "| overall | 4 | 33.3 |" in table


def test_scorer_rejects_empty_gold_without_recording() -> None:
    s = RetrievalScorer(ks=(5,))
    with pytest.raises(ValueError):
        s.add(["a"], [], category=1)
    assert len(s) == 0
    assert s.means() == {"overall": {"n": 0}}


@pytest.mark.parametrize("ks", [(), (0,), (3, -1)])
def test_scorer_rejects_bad_ks(ks: tuple[int, ...]) -> None:
    with pytest.raises(ValueError):
        RetrievalScorer(ks=ks)


def test_mean_metrics() -> None:
    assert mean_metrics([]) == {}
    assert mean_metrics([{"f1": 0.5, "b": 1.0}, {"f1": 0.0, "b": 0.0}]) == {"f1": 0.25, "b": 0.5}


# ---------------------------------------------------------------------------
# QA metrics
# ---------------------------------------------------------------------------


def test_normalize_answer() -> None:
    assert normalize_answer("The Cat, sat on a MAT!") == "cat sat on mat"
    assert normalize_answer("  An   apple\tand\nthe  theory ") == "apple and theory"
    assert normalize_answer("7 May 2023") == "7 may 2023"
    assert normalize_answer("J.K. Rowling's") == "jk rowlings"
    assert normalize_answer("...") == ""


def test_token_f1_known_pairs() -> None:
    assert token_f1("the cat sat", "a cat sat down") == pytest.approx(0.8)
    assert token_f1("Paris", "paris.") == 1.0
    assert token_f1("blue", "red") == 0.0
    # multiset intersection: pred [x, x, y], gold [x, y, y] -> common 2
    assert token_f1("x x y", "x y y") == pytest.approx(2 / 3)
    assert token_f1("", "") == 1.0
    assert token_f1("the", "") == 1.0  # both normalise to no tokens
    assert token_f1("", "cat") == 0.0


def test_bleu1_known_pairs() -> None:
    assert bleu1("cat sat", "cat sat down") == pytest.approx(math.exp(-0.5))
    assert bleu1("cat cat cat", "cat sat") == pytest.approx(1 / 3)  # clipped, no penalty
    assert bleu1("cat sat down", "cat sat down") == 1.0
    assert bleu1("x y", "x y") == 1.0  # equal length: BP = exp(0) = 1
    assert bleu1("dog", "cat") == 0.0
    assert bleu1("", "cat") == 0.0
    assert bleu1("", "") == 1.0


def test_rouge_l_known_pairs() -> None:
    assert rouge_l("x y z w", "x z w q") == pytest.approx(0.75)
    assert rouge_l("one two three", "three two one") == pytest.approx(1 / 3)
    # LCS 2 of pred 2 / gold 4: P = 1, R = 0.5
    assert rouge_l("x w", "x y z w") == pytest.approx(2 / 3)
    assert rouge_l("The sunset.", "sunset") == 1.0
    assert rouge_l("dog", "cat") == 0.0
    assert rouge_l("", "") == 1.0
    assert rouge_l("cat", "") == 0.0


TEXTS = st.lists(
    st.sampled_from(["a", "b", "c", "cat", " ", ".", ",", "!", "the", "an", "A", "The"]),
    max_size=20,
).map(" ".join)


@PROPS
@given(TEXTS, TEXTS)
def test_qa_metrics_in_unit_interval(pred: str, gold: str) -> None:
    """Token F1, BLEU-1 and ROUGE-L lie in [0, 1]; F1 and ROUGE-L are symmetric."""
    for fn in (token_f1, bleu1, rouge_l):
        assert 0.0 <= fn(pred, gold) <= 1.0 + 1e-12
    assert token_f1(pred, gold) == pytest.approx(token_f1(gold, pred))
    assert rouge_l(pred, gold) == pytest.approx(rouge_l(gold, pred))


@PROPS
@given(TEXTS)
def test_qa_metrics_identity(text: str) -> None:
    """An answer equal to the gold scores 1 on every QA metric; normalisation is idempotent."""
    for fn in (token_f1, bleu1, rouge_l):
        assert fn(text, text) == pytest.approx(1.0)
    assert normalize_answer(normalize_answer(text)) == normalize_answer(text)


# ---------------------------------------------------------------------------
# percentile
# ---------------------------------------------------------------------------


def test_percentile_hand_computed() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10.0], 95) == 10.0
    assert percentile([3, 1, 2], 0) == 1.0
    assert percentile([3, 1, 2], 100) == 3.0
    assert percentile(iter([0, 10]), 95) == pytest.approx(9.5)
    with pytest.raises(ValueError):
        percentile([], 50)
    for bad in (-1, 101, float("nan")):
        with pytest.raises(ValueError):
            percentile([1, 2], bad)


@PROPS
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=30),
    st.floats(0, 100),
)
def test_percentile_matches_numpy(values: list[float], p: float) -> None:
    """The percentile helper agrees with numpy's linear interpolation."""
    assert percentile(values, p) == pytest.approx(float(np.percentile(values, p)), abs=1e-6)
