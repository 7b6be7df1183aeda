"""Reciprocal-rank fusion."""

from __future__ import annotations

import pytest

from labile._fusion import rrf


def test_rrf_sums_weighted_reciprocal_ranks() -> None:
    fused = rrf([(["a", "b"], 1.0), (["b", "c"], 2.0)], k=60)
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 2 / 61)
    assert fused["c"] == pytest.approx(2 / 62)
    assert list(fused) == ["a", "b", "c"]  # first-seen order, for stable tie-breaking
