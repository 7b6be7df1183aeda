"""The quantized scan: binary codes, their Hamming pre-selection, incremental refresh, and
the store's ``quantized`` / ``auto`` paths against exact search."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lancedb_helpers import node, open_store, rvec
from numpy.typing import NDArray

from labile._model import NodeFilter
from labile_lancedb import _quantized, _search
from labile_lancedb._cache import NodeTable
from labile_lancedb._quantized import BinaryCodes
from labile_lancedb.store import LanceStore


def _latent(rng: np.random.Generator, n: int, dim: int) -> NDArray[np.float32]:
    """Unit vectors with low-dimensional structure (neighbours are meaningful)."""
    x = (rng.standard_normal((n, 8)) @ rng.standard_normal((8, dim))
         + 0.3 * rng.standard_normal((n, dim))).astype(np.float32)
    unit: NDArray[np.float32] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return unit


def _codes_of(vecs: NDArray[np.float32]) -> BinaryCodes:
    n, dim = vecs.shape
    return BinaryCodes.build(dim, n, n, lambda a, b: vecs[a:b].copy())


def _hamming(codes: BinaryCodes, a: NDArray[np.float32], b: NDArray[np.float32]) -> int:
    ca, cb = codes.encode(a.reshape(1, -1))[0], codes.encode(b.reshape(1, -1))[0]
    return int(np.bitwise_count(ca ^ cb).sum())


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 300), dim=st.integers(1, 150), count=st.integers(1, 80),
       keep=st.floats(0.0, 1.0), seed=st.integers(0, 2**16), small=st.booleans())
def test_nearest_is_the_hamming_top_count_among_the_candidates(
    n: int, dim: int, count: int, keep: float, seed: int, small: bool
) -> None:
    """`BinaryCodes.hamming_nearest` returns exactly min(count, #candidates) ascending slots, all of
    them candidates, and no candidate left out is closer in Hamming distance than one
    taken (ties at the cut go to the lower slots); `distances` equals popcount(XOR).
    ``small`` shrinks the distance loop's blocks and the size from which the selection
    narrows by a sample, so both paths of large namespaces run here too."""
    rng = np.random.default_rng(seed)
    vecs = rvec(rng, n, dim)
    codes = _codes_of(vecs)
    q = rvec(rng, 1, dim)[0]
    mask = rng.random(n) < keep
    with (patch.object(_quantized, "_BLOCK", 7 if small else _quantized._BLOCK),
          patch.object(_quantized, "_SAMPLE_FROM", 1 if small else _quantized._SAMPLE_FROM),
          patch.object(_quantized, "_SAMPLE_STEP", 3 if small else _quantized._SAMPLE_STEP)):
        got = codes.hamming_nearest(q, mask, count)
        dist = codes.distances(q, n)
    assert [int(d) for d in dist[:5]] == [_hamming(codes, q, v) for v in vecs[:5]]
    assert len(got) == min(count, int(mask.sum()))
    assert np.all(np.diff(got) > 0) and mask[got].all()
    left = np.setdiff1d(np.flatnonzero(mask), got)
    if len(got) and len(left):
        worst_taken = int(dist[got].max())
        assert int(dist[left].min()) >= worst_taken
        # among equals at the cut, the taken ones come first by slot
        tied_left = left[dist[left] == worst_taken]
        tied_taken = got[dist[got] == worst_taken]
        if len(tied_left):
            assert tied_taken.max() < tied_left.min()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 200), dim=st.integers(1, 130), count=st.integers(1, 40),
       keep=st.floats(0.0, 1.0), seed=st.integers(0, 2**16))
def test_nearest_is_the_asymmetric_best_of_the_widened_hamming_set(
    n: int, dim: int, count: int, keep: float, seed: int
) -> None:
    """`BinaryCodes.nearest` returns min(count, #candidates) ascending candidate slots: the
    ``count`` best by `asymmetric_scores` among the ``WIDEN * count`` Hamming-nearest, and
    the asymmetric score of a slot is its code's bits (0/1, in dimension order) dotted
    with ``q - mean``."""
    rng = np.random.default_rng(seed)
    vecs = rvec(rng, n, dim)
    codes = _codes_of(vecs)
    q = rvec(rng, 1, dim)[0]
    mask = rng.random(n) < keep
    got = codes.nearest(q, mask, count)
    wide = codes.hamming_nearest(q, mask, count * _quantized.WIDEN)
    assert len(got) == min(count, int(mask.sum()))
    assert np.all(np.diff(got) > 0) and set(got.tolist()) <= set(wide.tolist())
    expected = ((vecs[wide] - codes.mean) > 0).astype(np.float32) @ (q - codes.mean)
    np.testing.assert_allclose(codes.asymmetric_scores(q, wide), expected, rtol=1e-5,
                               atol=1e-5)
    left = np.setdiff1d(wide, got)
    if len(got) and len(left):
        assert expected[np.isin(wide, got)].min() >= expected[np.isin(wide, left)].max() - 1e-5


def test_a_vector_is_nearest_to_itself_and_padding_bits_never_count() -> None:
    rng = np.random.default_rng(1)
    vecs = rvec(rng, 50, 70)  # 70 bits: two words, 58 bits of padding
    codes = BinaryCodes(70, np.zeros(70, np.float32), 10)  # centred on 0: -v flips every bit
    for i, v in enumerate(vecs):
        codes.set(i, v)  # grows past the initial 10 slots
    assert codes.words == 2
    for i in (0, 17, 49):
        assert codes.distances(vecs[i], 50)[i] == 0
        assert codes.distances(-vecs[i], 50)[i] == 70


def test_a_mean_of_the_wrong_shape_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"mean must have shape \(8,\), got \(4,\)"):
        BinaryCodes(8, np.zeros(4, np.float32), 10)


def test_codes_follow_writes_and_rebuild_only_when_the_table_doubles() -> None:
    """New and updated nodes are encoded on `put` (searchable at once); adding 1% keeps
    the built codes, doubling the table re-centres them."""
    rng = np.random.default_rng(2)
    dim = 32
    table = NodeTable(dim)
    vecs = _latent(rng, 2000, dim)
    for i in range(1000):
        table.put(node(f"n{i}", embedding=vecs[i]), i)
    built = table.codes()
    assert built.built_rows == 1000
    for i in range(1000, 1010):  # 1% more
        table.put(node(f"n{i}", embedding=vecs[i]), i)
    assert table.codes() is built and built.built_rows == 1000
    fresh = table.codes().nearest(vecs[1005], table.has_emb[:1010], 1)
    assert fresh.tolist() == [1005]  # the new node is found without a rebuild
    table.put(node("n3", embedding=vecs[1500]), 3)  # an update re-encodes the slot
    assert table.codes().distances(vecs[1500], 1010)[3] == 0
    for i in range(1010, 2000):
        table.put(node(f"n{i}", embedding=vecs[i]), i)
    assert table.codes() is not built and table.codes().built_rows == 2000


def _ids(hits: list[Any]) -> list[tuple[str, float]]:
    return [(n.id, round(v, 5)) for n, v in hits]


def _store_with(tmp_path: Path, vecs: NDArray[np.float32], **kw: Any) -> LanceStore:
    s = open_store(tmp_path / "m", dim=vecs.shape[1], **kw)
    with s.batch("u"):
        s.upsert_nodes("u", [node(f"n{i}", embedding=v, kind="even" if i % 2 else "odd",
                                  visible=i % 7 != 0) for i, v in enumerate(vecs)])
    return s


def test_quantized_search_matches_exact_with_exact_scores(tmp_path: Path) -> None:
    """With latent-structured vectors and 256+ candidates re-ranked out of 3,000, the
    quantized scan returns the exact top 10, and its scores are exact cosines."""
    rng = np.random.default_rng(3)
    vecs = _latent(rng, 3000, 48)
    s = _store_with(tmp_path, vecs)
    queries = vecs[rng.choice(3000, 20, replace=False)] + 0.02 * rvec(rng, 20, 48)
    agree = 0
    for q in queries:
        for where in (None, NodeFilter(kinds={"even"}, visible=True)):
            exact = s.vector_search("u", q, 10, where=where, mode="exact")
            quant = s.vector_search("u", q, 10, where=where, mode="quantized")
            agree += [n.id for n, _ in quant] == [n.id for n, _ in exact]
            scores = dict((n.id, v) for n, v in exact)
            for n, v in quant:
                if n.id in scores:
                    assert v == pytest.approx(scores[n.id], abs=1e-5)
                if where is not None:
                    assert where.accepts(n)
    assert agree >= 38  # of 40
    s.close()


def test_auto_is_exact_up_to_the_threshold_and_quantized_past_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(4)
    vecs = _latent(rng, 600, 32)
    calls: list[int] = []
    real = _search.quantized_search

    def counting(*a: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(_search, "quantized_search", counting)
    small = _store_with(tmp_path, vecs, ann_threshold=600)
    q = vecs[5]
    assert _ids(small.vector_search("u", q, 10)) == _ids(small.vector_search("u", q, 10,
                                                                              mode="exact"))
    assert calls == [] and small._spaces.nodes("u")._codes is None  # nothing built
    small.close()
    big = open_store(tmp_path / "m", dim=32, ann_threshold=599)
    hits = big.vector_search("u", q, 10)
    assert calls == [1] and hits[0][0].id == "n5"
    big.upsert_nodes("u", [node("new", embedding=-q)])  # searchable by the scan at once
    assert big.vector_search("u", -q, 1)[0][0].id == "new" and calls == [1, 1]
    # a filter that leaves few candidates is answered exactly
    few = NodeFilter(ids={"n1", "n2", "n3"})
    assert (_ids(big.vector_search("u", q, 2, where=few))
            == _ids(big.vector_search("u", q, 2, where=few, mode="exact")))
    assert calls == [1, 1]
    big.close()
