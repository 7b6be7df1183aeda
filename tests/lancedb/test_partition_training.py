"""Background training of the partitions: ``auto`` never waits for the cells, nothing written
meanwhile is lost, a failed training falls back and retries, and ``partitions()`` reuses a
training in flight instead of starting a second one."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lancedb_helpers import node, open_store
from numpy.typing import NDArray

from labile_lancedb import _search, _training
from labile_lancedb._cache import NodeTable


def _latent(rng: np.random.Generator, n: int, dim: int) -> NDArray[np.float32]:
    x = (rng.standard_normal((n, 8)) @ rng.standard_normal((8, dim))
         + 0.3 * rng.standard_normal((n, dim))).astype(np.float32)
    unit: NDArray[np.float32] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return unit


class _Gate:
    """Holds every training thread at its start until `open` (and counts the trainings)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail: bool = False) -> None:
        self.event = threading.Event()
        self.calls = 0
        self.fail = fail
        real = _training.train_cells

        def gated(*a: Any, **kw: Any) -> Any:
            self.calls += 1
            assert self.event.wait(30)
            if self.fail:
                raise RuntimeError("training broke")
            return real(*a, **kw)

        monkeypatch.setattr(_training, "train_cells", gated)

    def open(self) -> None:
        self.event.set()


def _table(vecs: NDArray[np.float32], n: int) -> NodeTable:
    table = NodeTable(vecs.shape[1])
    for i in range(n):
        table.put(node(f"n{i}", embedding=vecs[i]), i)
    return table


def test_writes_during_training_are_in_their_nearest_cell_once_it_is_laid_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    vecs = _latent(rng, 1400, 24)
    table = _table(vecs, 1000)
    gate = _Gate(monkeypatch)
    assert table.partitions_if_ready() is None  # training started, nothing to wait for
    training = table.partitions_training
    assert training is not None and not training.done.is_set()
    for i in range(1000, 1200):  # new nodes while the thread trains
        table.put(node(f"n{i}", embedding=vecs[i]), i)
    moved = -vecs[5]
    table.put(node("n5", embedding=moved), 5)  # an old node whose vector changes
    table.put(node("n6", embedding=None), 6)  # ... and one that loses its vector
    assert table.partitions_if_ready() is None  # still training: no waiting
    gate.open()
    assert training.wait(30)
    parts = table.partitions_if_ready()
    assert parts is not None and parts.codes is table.codes() and gate.calls == 1
    assert table.partitions_training is None
    current = vecs[:1200].copy()
    current[5], current[6] = moved, 0.0
    for slot in range(1200):
        if not current[slot].any():
            assert parts.cell_of(slot) == -1
            continue
        unit = current[slot] / np.linalg.norm(current[slot])
        assert parts.cell_of(slot) == int(np.argmax(parts.centroids @ unit)), slot
    members = np.concatenate([parts.members(c) for c in range(parts.cells)])
    assert sorted(members.tolist()) == [i for i in range(1200) if i != 6]
    assert parts.nearest(moved / np.linalg.norm(moved), None, 1, 1).tolist() == [5]
    assert table.partitions() is parts  # the synchronous path finds them current


def test_a_failed_training_falls_back_and_is_started_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    table = _table(_latent(rng, 600, 16), 600)
    gate = _Gate(monkeypatch, fail=True)
    gate.open()
    assert table.partitions_if_ready() is None
    first = table.partitions_training
    assert first is not None and first.wait(30) and first.error is not None
    assert table.partitions_if_ready() is None  # the failure is noted, a new training starts
    second = table.partitions_training
    assert second is not None and second is not first and second.wait(30)
    gate.fail = False
    assert table.partitions_if_ready() is None and gate.calls == 3
    third = table.partitions_training
    assert third is not None and third.wait(30) and third.error is None
    assert table.partitions_if_ready() is not None


def test_the_synchronous_path_waits_for_a_training_in_flight_instead_of_training_twice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    table = _table(_latent(rng, 800, 16), 800)
    gate = _Gate(monkeypatch)
    assert table.partitions_if_ready() is None
    threading.Timer(0.2, gate.open).start()
    parts = table.partitions()
    assert gate.calls == 1 and table.partitions_if_ready() is parts


def test_auto_answers_with_the_quantized_scan_until_the_cells_are_ready(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the store: past ``partition_threshold`` the first ``auto`` searches do not wait
    (the quantized scan's results, exact scores), then the partitioned scan takes over."""
    rng = np.random.default_rng(4)
    vecs = _latent(rng, 1500, 32)
    s = open_store(tmp_path / "m", dim=32, ann_threshold=500, partition_threshold=1000)
    with s.batch("u"):
        s.upsert_nodes("u", [node(f"n{i}", embedding=v) for i, v in enumerate(vecs)])
    gate = _Gate(monkeypatch)
    used: list[str] = []
    for name in ("quantized_search", "partitioned_search"):
        real = getattr(_search, name)

        def spy(*a: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            used.append(_name)
            return _real(*a, **kw)

        monkeypatch.setattr(_search, name, spy)
    queries = vecs[:5] + 0.01 * rng.standard_normal((5, 32)).astype(np.float32)
    before = [s.vector_search("u", q, 5) for q in queries]
    assert used == ["quantized_search"] * 5
    for q, hits in zip(queries, before, strict=True):
        exact = dict((n.id, v) for n, v in s.vector_search("u", q, 50, mode="exact"))
        assert all(v == pytest.approx(exact[n.id], abs=1e-5) for n, v in hits)
    gate.open()
    training = s._spaces.nodes("u").partitions_training
    assert training is not None and training.wait(30)
    used.clear()
    after = [s.vector_search("u", q, 5) for q in queries]
    assert used == ["partitioned_search"] * 5 and gate.calls == 1
    assert sum([n.id for n, _ in a] == [n.id for n, _ in b]
               for a, b in zip(before, after, strict=True)) >= 4
    s.close()
