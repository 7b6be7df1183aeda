"""The partitioned scan: cells in front of the binary codes, kept current by writes, and the
store's ``partitioned`` / ``auto`` paths against exact search."""

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
from labile_lancedb import _partitions, _search
from labile_lancedb._cache import NodeTable
from labile_lancedb._partitions import Partitions, cell_count
from labile_lancedb._quantized import WIDEN, BinaryCodes
from labile_lancedb.config import LanceStoreConfig


def _latent(rng: np.random.Generator, n: int, dim: int) -> NDArray[np.float32]:
    """Unit vectors with low-dimensional structure (neighbours are meaningful)."""
    x = (rng.standard_normal((n, 8)) @ rng.standard_normal((8, dim))
         + 0.3 * rng.standard_normal((n, dim))).astype(np.float32)
    unit: NDArray[np.float32] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return unit


def _build(vecs: NDArray[np.float32], cells: int | None = None) -> Partitions:
    n, dim = vecs.shape
    codes = BinaryCodes.build(dim, n, n, lambda a, b: vecs[a:b].copy())
    embedded: NDArray[np.bool_] = np.asarray(vecs.any(axis=1))
    return Partitions.train(codes, n, embedded, lambda s: vecs[s].copy(),
                            lambda a, b: vecs[a:b].copy(), cells=cells)


def _check_cells(parts: Partitions, vecs: NDArray[np.float32]) -> None:
    """Every slot with a vector is in exactly one cell, its nearest centroid's, and its laid-out
    code (if laid out) is its current code."""
    n = len(vecs)
    members = np.concatenate([parts.members(c) for c in range(parts.cells)])
    assert sorted(members.tolist()) == np.flatnonzero(vecs.any(axis=1)).tolist()
    for slot in range(n):
        if not vecs[slot].any():
            assert parts.cell_of(slot) == -1
            continue
        assert parts.cell_of(slot) == int(np.argmax(parts.centroids @ vecs[slot]))
        laid = parts.laid_code(slot)
        if laid is not None:
            assert laid.tolist() == parts.codes.encode(vecs[slot].reshape(1, -1))[0].tolist()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 250), dim=st.integers(2, 70), writes=st.lists(
    st.tuples(st.integers(0, 300), st.sampled_from(["new", "zero", "near"])), max_size=60),
    seed=st.integers(0, 2**16))
def test_every_vector_is_in_exactly_its_nearest_cell_after_any_writes(
    n: int, dim: int, writes: list[tuple[int, str]], seed: int
) -> None:
    """Whatever sequence of writes follows training (new slots, vectors replaced by others or
    by nothing, enough of them to fold the tail into the layout): each slot with a vector
    belongs to exactly one cell, the one whose centroid is nearest its current vector, and
    a laid-out code is always the slot's current code."""
    rng = np.random.default_rng(seed)
    vecs = rvec(rng, n, dim)
    parts = _build(vecs)
    with patch.object(_partitions, "_TAIL_SHARE", 1):  # fold the tail often
        for slot, what in writes:
            if slot >= len(vecs):
                vecs = np.concatenate([vecs, np.zeros((slot + 1 - len(vecs), dim), np.float32)])
            vecs[slot] = (0.0 if what == "zero" else
                          rvec(rng, 1, dim)[0] if what == "new" else
                          vecs[(slot + 1) % len(vecs)])
            parts.codes.set(slot, vecs[slot])
            parts.set(slot, vecs[slot])
    _check_cells(parts, vecs)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 300), dim=st.integers(2, 70), count=st.integers(1, 40),
       keep=st.floats(0.0, 1.0), probes=st.integers(1, 40), seed=st.integers(0, 2**16),
       prefix=st.booleans())
def test_nearest_returns_candidates_in_the_probed_cells_or_widens_the_probe(
    n: int, dim: int, count: int, keep: float, probes: int, seed: int, prefix: bool
) -> None:
    """`Partitions.nearest` returns ascending, distinct candidate slots, exactly
    min(count, #candidates) of them (the probe doubles while the cells hold too few), with
    or without the prefix stage (``prefix`` makes it compare one word first, so codes of
    two words or more take that path)."""
    rng = np.random.default_rng(seed)
    vecs = rvec(rng, n, dim)
    parts = _build(vecs)
    q = rvec(rng, 1, dim)[0]
    mask = rng.random(n) < keep
    with (patch.object(_partitions, "PREFIX_WORDS", 1 if prefix else _partitions.PREFIX_WORDS),
          patch.object(_partitions, "PREFIX_KEEP", 2 if prefix else _partitions.PREFIX_KEEP)):
        got = parts.nearest(q, mask, count, probes)
        every = parts.nearest(q, None, count, parts.cells)
    assert np.all(np.diff(got) > 0) and mask[got].all()
    assert len(got) == min(count, int(mask.sum()))
    assert np.all(np.diff(every) > 0) and len(every) == min(count, n)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 400), dim=st.integers(2, 200), count=st.integers(1, 40),
       probes=st.integers(1, 40), seed=st.integers(0, 2**16), prefix=st.booleans(),
       cells=st.integers(1, 30), tail=st.integers(0, 40))
def test_reading_whole_runs_of_cells_selects_what_reading_positions_does(
    n: int, dim: int, count: int, probes: int, seed: int, prefix: bool, cells: int, tail: int
) -> None:
    """With no filter the probe reads the laid-out codes by slices of whole cells; an
    all-true filter takes the position-by-position path. Both must pick exactly the same
    slots (same distances, same tie order), tail nodes included."""
    rng = np.random.default_rng(seed)
    vecs = rvec(rng, n, dim)
    parts = _build(vecs, cells=cells)
    parts.codes.grow(n + tail)
    for slot, unit in enumerate(rvec(rng, tail, dim), start=n):  # written after the layout
        parts.codes.set(slot, unit)
        parts.set(slot, unit)
    q = rvec(rng, 1, dim)[0]
    everyone = np.ones(n + tail, bool)
    with (patch.object(_partitions, "PREFIX_WORDS", 1 if prefix else _partitions.PREFIX_WORDS),
          patch.object(_partitions, "PREFIX_KEEP", 2 if prefix else _partitions.PREFIX_KEEP)):
        by_runs = parts.nearest(q, None, count, probes)
        by_positions = parts.nearest(q, everyone, count, probes)
    assert by_runs.tolist() == by_positions.tolist()


def test_all_cells_probed_is_the_full_quantized_scan() -> None:
    """Reading every cell selects the same slots as the quantized scan over all codes (same
    Hamming set up to ties, then the same asymmetric step)."""
    rng = np.random.default_rng(5)
    vecs = _latent(rng, 2000, 48)
    parts = _build(vecs)
    everyone = np.ones(2000, bool)
    same = 0
    for q in vecs[rng.choice(2000, 30, replace=False)] + 0.05 * rvec(rng, 30, 48):
        full = parts.codes.nearest(q, everyone, 40)
        cells = parts.nearest(q, None, 40, parts.cells)
        same += len(set(full.tolist()) & set(cells.tolist()))
    assert same >= 0.97 * 30 * 40  # only ties at the Hamming cut-off may differ


def test_recall_grows_with_the_probed_share() -> None:
    """On structured data, reading a tenth of the cells already finds most true neighbours
    and a fifth nearly all, as many as reading every cell."""
    rng = np.random.default_rng(6)
    vecs = _latent(rng, 6000, 64)
    parts = _build(vecs)
    queries = vecs[rng.choice(6000, 40, replace=False)] + 0.05 * rvec(rng, 40, 64)

    def recall(share: float) -> float:
        probes = max(1, round(parts.cells * share))
        hits = 0
        for q in queries:
            truth = set(np.argsort(-(vecs @ q))[:10].tolist())
            slots = parts.nearest(q, None, 64, probes)
            best = slots[np.argsort(-(vecs[slots] @ q))[:10]]
            hits += len(truth & set(best.tolist()))
        return hits / (10 * len(queries))

    tenth, fifth, every = recall(0.1), recall(0.2), recall(1.0)
    assert 0.9 <= tenth < fifth and fifth >= 0.97 and every >= 0.97


def test_cells_are_about_sqrt_n_and_training_samples_a_bounded_share() -> None:
    assert cell_count(0) == 16 and cell_count(100) == 16
    assert cell_count(1_000_000) == 1000 and cell_count(250_000) == 500
    rng = np.random.default_rng(7)
    vecs = rvec(rng, 3000, 16)
    seen: list[int] = []

    def rows_at(slots: NDArray[np.intp]) -> NDArray[np.float32]:
        seen.append(len(slots))
        return vecs[slots].copy()

    codes = BinaryCodes.build(16, 3000, 3000, lambda a, b: vecs[a:b].copy())
    parts = Partitions.train(codes, 3000, np.ones(3000, bool), rows_at,
                             lambda a, b: vecs[a:b].copy(), cells=20)
    assert parts.cells == 20 and seen == [20 * _partitions.TRAIN_PER_CELL]


def test_writes_join_their_cell_at_once_and_rebuild_nothing_until_the_table_doubles() -> None:
    """1% new nodes: found by the next search, same codes and partitions; a move to another
    cell leaves the old one; doubling the table retrains."""
    rng = np.random.default_rng(8)
    dim = 32
    vecs = _latent(rng, 4000, dim)
    table = NodeTable(dim)
    for i in range(2000):
        table.put(node(f"n{i}", embedding=vecs[i]), i)
    codes, parts = table.codes(), table.partitions()
    centroids = parts.centroids
    for i in range(2000, 2020):  # 1% more
        table.put(node(f"n{i}", embedding=vecs[i]), i)
    assert table.codes() is codes and table.partitions() is parts and parts.tail_size == 20
    for i in range(2000, 2020):
        assert i in parts.nearest(vecs[i], None, 1, 1).tolist()
    far = -vecs[7]  # slot 7's vector flips: it leaves its cell for the nearest to -v
    old = parts.cell_of(7)
    table.put(node("n7", embedding=far), 7)
    new = parts.cell_of(7)
    assert new == int(np.argmax(parts.centroids @ (far / np.linalg.norm(far))))
    if new != old:
        assert 7 not in parts.members(old).tolist()
    assert 7 in parts.members(new).tolist()
    assert parts.nearest(far, None, 1, 1).tolist() == [7]
    for i in range(2020, 2600):  # past a quarter of the layout: folded in, not retrained
        table.put(node(f"n{i}", embedding=vecs[i]), i)
    assert table.partitions() is parts and parts.centroids is centroids
    assert parts.tail_size < 580
    for i in range(2600, 4000):
        table.put(node(f"n{i}", embedding=vecs[i]), i)
    assert table.codes() is not codes and table.partitions() is not parts


def test_a_node_without_a_vector_is_in_no_cell() -> None:
    rng = np.random.default_rng(9)
    vecs = rvec(rng, 200, 16)
    vecs[[3, 50]] = 0.0
    parts = _build(vecs)
    _check_cells(parts, vecs)
    assert parts.cell_of(3) == -1 and 3 not in parts.nearest(rng.random(16).astype(
        np.float32), None, 200, parts.cells).tolist()


def test_probe_count_scales_with_the_filter_and_auto_picks_by_size() -> None:
    assert _search.probe_count(1000, 0.2, 1000, 1000) == 200
    assert _search.probe_count(1000, 0.2, 500, 1000) == 400  # half the nodes pass: twice
    assert _search.probe_count(1000, 0.2, 10, 1000) == 1000  # never more than every cell
    assert _search.probe_count(10, 0.01, 10, 10) == 1
    assert _search.auto_path(20_000, 20_000, 20_000, 200_000) == "exact"
    assert _search.auto_path(100_000, 4096, 20_000, 200_000) == "exact"
    assert _search.auto_path(100_000, 5000, 20_000, 200_000) == "quantized"
    assert _search.auto_path(200_001, 200_001, 20_000, 200_000) == "partitioned"


def _ids(hits: list[Any]) -> list[str]:
    return [n.id for n, _ in hits]


def test_store_partitioned_search_matches_exact_with_exact_scores(tmp_path: Path) -> None:
    """Through the store, with and without a filter: the partitioned scan returns the exact
    top 10 for nearly every query, scores equal to the exact ones, filters respected; ``auto``
    takes it past ``partition_threshold``."""
    rng = np.random.default_rng(10)
    vecs = _latent(rng, 3000, 48)
    s = open_store(tmp_path / "m", dim=48, ann_threshold=1000, partition_threshold=2000)
    with s.batch("u"):
        s.upsert_nodes("u", [node(f"n{i}", embedding=v, kind="even" if i % 2 else "odd",
                                  visible=i % 7 != 0) for i, v in enumerate(vecs)])
    s.vector_search("u", vecs[0], 1)  # the first search past the threshold starts the training
    training = s._spaces.nodes("u").partitions_training
    assert training is not None and training.wait(60)
    calls: list[int] = []
    real = _search.partitioned_search

    def counting(*a: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*a, **kw)

    agree = 0
    with patch.object(_search, "partitioned_search", counting):
        for q in vecs[rng.choice(3000, 20, replace=False)] + 0.02 * rvec(rng, 20, 48):
            for where in (None, NodeFilter(kinds={"even"}, visible=True)):
                exact = s.vector_search("u", q, 10, where=where, mode="exact")
                auto = s.vector_search("u", q, 10, where=where)
                agree += _ids(auto) == _ids(exact)
                scores = dict((n.id, v) for n, v in exact)
                for n, v in auto:
                    assert n.id not in scores or v == pytest.approx(scores[n.id], abs=1e-5)
                    assert where is None or where.accepts(n)
    assert len(calls) == 40 and agree >= 36
    s.close()


def test_config_rejects_a_probe_share_outside_0_1() -> None:
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="partition_probe_share"):
            LanceStoreConfig(partition_probe_share=bad)
    assert LanceStoreConfig(partition_probe_share=1.0).partition_probe_share == 1.0


def test_widen_is_the_hamming_stage_factor() -> None:
    """The partitioned scan keeps `WIDEN` x count by Hamming distance before the asymmetric
    step, like the full scan (a regression guard on the shared constant)."""
    rng = np.random.default_rng(11)
    vecs = rvec(rng, 500, 16)
    parts = _build(vecs, cells=4)
    with patch.object(parts.codes, "best_asymmetric",
                      wraps=parts.codes.best_asymmetric) as step:
        parts.nearest(vecs[0], None, 10, 4)
    assert len(step.call_args.args[1]) == 10 * WIDEN


def test_rerank_count_grows_with_the_namespace_up_to_a_cap() -> None:
    assert _search.rerank_count(10, 1000, 40) == 400  # k * per_result
    assert _search.rerank_count(1, 1000, 40) == _search.MIN_RERANK
    assert _search.rerank_count(10, 60_000, 40) == 600  # 1% of the namespace
    assert _search.rerank_count(10, 1_000_000, 40) == _search.MAX_SHARE_RERANK == 1024
    assert _search.rerank_count(100, 1_000_000, 40) == 4000
    assert _search.rerank_count(10, 0, 40) == 400  # the partitioned scan's count
