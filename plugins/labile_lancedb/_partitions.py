"""Coarse partitions in front of the quantized scan: probe a share of a namespace, not all of it.

The quantized scan (`labile_lancedb._quantized`) computes a Hamming distance to
every node, which is linear in the namespace: at 1M nodes the distance pass
alone costs several milliseconds. `Partitions` splits the namespace's nodes
into cells by their nearest centroid (spherical k-means, trained on a sample)
and keeps a copy of the binary codes laid out cell by cell, so a query
computes distances only inside the cells whose centroids are nearest to it
(first over the leading `PREFIX_WORDS` words of each code, then over the full
code of the few nearest by those), and hands the Hamming-nearest to the same
asymmetric step and exact re-rank as the full scan.

Maintenance is incremental: a node written after training goes to its nearest
centroid before the next read (one product against the centroids for all the
writes since the last read) and is kept in a tail that queries read alongside
the laid-out cells, so it is searchable immediately. The tail is folded into
the layout (a sort, no training) once it holds a quarter of the laid-out
nodes; the centroids are retrained only when the owner rebuilds the codes,
i.e. when the namespace has doubled. A node whose vector changes to another
cell is masked out of its old cell and moves to the tail.

Nothing here does I/O or knows about nodes: it maps slots to cells.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Final

import numpy as np
from numpy.typing import NDArray

from labile_lancedb._quantized import WIDEN, BinaryCodes, smallest

__all__ = ["KMEANS_ITERATIONS", "TRAIN_PER_CELL", "Partitions", "cell_count", "train_cells"]

#: Spherical k-means rounds when the centroids are trained (later rounds move little).
KMEANS_ITERATIONS: Final = 6

#: Training sample size, per cell (k-means needs a few dozen points per centroid).
TRAIN_PER_CELL: Final = 32

#: Nodes assigned to cells per matrix product when the partitions are built.
_ASSIGN_CHUNK: Final = 8192

#: Writes waiting for their cell are assigned together once this many wait (or at the
#: next read): their unit vectors are held until then.
_PENDING_MAX: Final = 4096

#: The tail of nodes written since the last layout is folded in past this share of it.
_TAIL_SHARE: Final = 4

#: Words of the code compared first, over every candidate of the probed cells; only the
#: `PREFIX_KEEP` x wanted nearest by them get their full code compared. At 1M latent-
#: structured 384-d vectors with a quarter of the cells read, 3 words and 4x cost 4.7 ms
#: CPU per query at recall@10 0.962, against 6.5 ms and 0.975 comparing all 6 words
#: (2 words and 8x: 4.8 ms, 0.949).
PREFIX_WORDS: Final = 3
PREFIX_KEEP: Final = 4

#: Seed of the training sample and of the initial centroids (builds are reproducible).
_SEED: Final = 0


def cell_count(n: int) -> int:
    """Cells for ``n`` embedded nodes: about ``sqrt(n)``, at least 16.

    At the same probed share, finer cells keep more of the true neighbours
    (1M latent-structured vectors, a fifth of the cells read: recall@10 0.948
    with 1,000 cells, 0.919 with 500, 0.894 with 250); more than ``sqrt(n)``
    makes training (a product of every vector with every centroid) costly.
    """
    return max(16, round(math.sqrt(max(n, 1))))


class Partitions:
    """Cells of a namespace's slots by nearest centroid, with the codes laid out by cell.

    Args:
        codes: The namespace's binary codes (read for the layout and the tail).
        centroids: Unit centroids, ``cells x dim``.
        cell_of: The cell of every slot (``-1``: no embedding), by slot.
        n: Slots covered (``0..n-1``).
    """

    def __init__(self, codes: BinaryCodes, centroids: NDArray[np.float32],
                 cell_of: NDArray[np.int32], n: int) -> None:
        self.codes = codes
        self.centroids = centroids
        self.cells = len(centroids)
        self._cell_of = cell_of
        self._n = n
        self._pending: dict[int, NDArray[np.float32]] = {}
        self._layout()

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def train(cls, codes: BinaryCodes, n: int, embedded: NDArray[np.bool_],
              rows_at: Callable[[NDArray[np.intp]], NDArray[np.float32]],
              unit_rows: Callable[[int, int], NDArray[np.float32]],
              cells: int | None = None) -> Partitions:
        """Train centroids on a sample of the embedded slots ``0..n-1`` and assign every slot.

        ``rows_at(slots)`` returns the unit vectors of those slots (the
        sample); ``unit_rows(start, stop)`` those of a range (zero rows where
        there is no embedding), read in chunks for the assignment pass.
        """
        centroids, cell_of = train_cells(codes.dim, n, embedded, rows_at, unit_rows, cells)
        return cls(codes, centroids, cell_of, n)

    def _layout(self) -> None:
        """Lay every assigned slot out cell by cell (the tail becomes empty)."""
        cell_of = self._cell_of[: self._n]
        assigned = np.flatnonzero(cell_of >= 0)
        order = assigned[np.argsort(cell_of[assigned], kind="stable")]
        self._order: NDArray[np.intp] = order
        self._offsets = np.searchsorted(cell_of[order], np.arange(self.cells + 1))
        self._laid = np.ascontiguousarray(self.codes.columns(order))
        self._arange = np.arange(len(order))
        self._pos = np.full(len(self._cell_of), -1, np.int64)
        self._pos[order] = np.arange(len(order))
        self._dead = np.zeros(len(order), bool)
        self._any_dead = False
        self._tail: list[int] = []
        self._in_tail = np.zeros(len(self._cell_of), bool)

    # -- maintenance ------------------------------------------------------------------------
    def grow(self, capacity: int) -> None:
        """Make room for ``capacity`` slots."""
        if capacity > len(self._cell_of):
            extra = capacity - len(self._cell_of)
            self._cell_of = np.concatenate([self._cell_of, np.full(extra, -1, np.int32)])
            self._pos = np.concatenate([self._pos, np.full(extra, -1, np.int64)])
            self._in_tail = np.concatenate([self._in_tail, np.zeros(extra, bool)])

    def set(self, slot: int, unit: NDArray[np.float32]) -> None:
        """Place slot ``slot`` (``unit``: its unit vector, zeros if none; its code already set).

        The nearest centroid is found for a batch of such writes at once (one
        matrix product instead of one per node, which at 1,000 cells would
        cost more than the rest of a write): before the next read, or once
        `_PENDING_MAX` are waiting. So a written node is searchable at once.
        """
        self._pending[slot] = unit
        if len(self._pending) >= _PENDING_MAX:
            self._settle()

    def _settle(self) -> None:
        """Assign the pending writes to their cells."""
        if not self._pending:
            return
        slots = list(self._pending)
        cells = _nearest_cell(np.stack(list(self._pending.values())), self.centroids)
        self._pending = {}
        for slot, cell in zip(slots, cells.tolist(), strict=True):
            self._place(slot, cell)

    def _place(self, slot: int, cell: int) -> None:
        """Put ``slot`` in ``cell`` (``-1``: none).

        A new slot, or one whose vector moved to another cell, joins the tail
        (masked out of its old cell); one that stays in its cell has its
        laid-out code refreshed.
        """
        self.grow(slot + 1)
        self._n = max(self._n, slot + 1)
        pos = int(self._pos[slot])
        if pos >= 0:
            if cell == self._cell_of[slot]:
                self._laid[:, pos] = self.codes.columns(np.array([slot]))[:, 0]
                return
            self._dead[pos] = True
            self._any_dead = True
            self._pos[slot] = -1
        self._cell_of[slot] = cell
        if cell >= 0 and not self._in_tail[slot]:
            self._in_tail[slot] = True
            self._tail.append(slot)
            if len(self._tail) * _TAIL_SHARE > max(len(self._order), 1024):
                self._layout()

    def nbytes(self) -> int:
        """Bytes held (the laid-out codes and the slot maps)."""
        return int(self._laid.nbytes + self._order.nbytes + self._pos.nbytes
                   + self._cell_of.nbytes + self._dead.nbytes + self._in_tail.nbytes)

    def members(self, cell: int) -> NDArray[np.intp]:
        """The slots currently in ``cell`` (laid out or in the tail), ascending."""
        self._settle()
        positions = self._arange[self._offsets[cell]:self._offsets[cell + 1]]
        laid = self._order[positions[~self._dead[positions]]]
        tail = np.asarray(self._tail, np.intp)
        out: NDArray[np.intp] = np.sort(np.concatenate([laid, tail[self._cell_of[tail] == cell]]))
        return out

    def cell_of(self, slot: int) -> int:
        """The cell of ``slot`` (``-1``: none, it has no vector)."""
        self._settle()
        return int(self._cell_of[slot]) if slot < len(self._cell_of) else -1

    def laid_code(self, slot: int) -> NDArray[np.uint64] | None:
        """The code of ``slot`` as laid out by cell, or ``None`` when it is not laid out."""
        self._settle()
        pos = int(self._pos[slot]) if slot < len(self._pos) else -1
        return None if pos < 0 else self._laid[:, pos].copy()

    @property
    def tail_size(self) -> int:
        """Slots placed since the last layout."""
        self._settle()
        return len(self._tail)

    # -- search -----------------------------------------------------------------------------
    def nearest(self, q: NDArray[np.float32], candidates: NDArray[np.bool_] | None, count: int,
                probes: int) -> NDArray[np.intp]:
        """The ``count`` slots most likely nearest ``q`` among ``candidates`` in the probed cells.

        The ``probes`` cells whose centroids are nearest ``q`` are read (more,
        doubling, while they hold fewer than `WIDEN` x ``count`` candidates: a
        narrow filter); their `WIDEN` x ``count`` candidates nearest in Hamming
        distance (ties: layout order) are narrowed to ``count`` by
        `BinaryCodes.best_asymmetric`, as in `BinaryCodes.nearest`.
        ``candidates`` is a mask over slots, or ``None`` for every embedded
        slot (no mask to apply). Returns ascending slots.
        """
        self._settle()
        want = count * WIDEN
        scores = self.centroids @ q
        probes = max(1, min(probes, self.cells))
        while True:
            cells = (np.sort(np.argpartition(-scores, probes - 1)[:probes])
                     if probes < self.cells else np.arange(self.cells))
            probe = self._probe(cells, candidates)
            tail = self._tail_in(cells, candidates)
            if len(probe) + len(tail) >= want or probes >= self.cells:
                break
            probes *= 2
        qc = self.codes.encode(q.reshape(1, -1))[0]
        far = self.codes.words * 64 + 1
        prefix = min(PREFIX_WORDS, self.codes.words)
        if prefix < self.codes.words and len(probe) + len(tail) > PREFIX_KEEP * want:
            # First the leading words only, keeping PREFIX_KEEP x want; then the full
            # code of those few (a gather by slot), keeping want.
            first = self._slots(probe, tail, smallest(
                self._distances(probe, tail, qc, prefix), PREFIX_KEEP * want, far))
            slots = first[smallest(_hamming(self.codes.columns_ref(), first, qc), want, far)]
        else:
            slots = self._slots(probe, tail, smallest(
                self._distances(probe, tail, qc, self.codes.words), want, far))
        return self.codes.best_asymmetric(q, np.sort(slots), count)

    def _probe(self, cells: NDArray[np.intp],
               candidates: NDArray[np.bool_] | None) -> _Runs | NDArray[np.intp]:
        """The laid-out positions to read in ``cells``: whole runs of cells when nothing is
        masked (no filter, no moved node), else the surviving positions one by one."""
        if candidates is None and not self._any_dead:
            return _Runs.of(self._offsets, cells)
        positions = self._positions(cells)
        keep = ~self._dead[positions]
        if candidates is not None:
            keep &= candidates[self._order[positions]]
        out: NDArray[np.intp] = positions[keep]
        return out

    def _distances(self, probe: _Runs | NDArray[np.intp], tail: NDArray[np.intp],
                   qc: NDArray[np.uint64], words: int) -> NDArray[np.uint16]:
        """Hamming distances over the first ``words`` words: ``probe``, then ``tail``."""
        dist = (probe.hamming(self._laid, qc, words) if isinstance(probe, _Runs)
                else _hamming(self._laid[:words], probe, qc))
        if len(tail):
            dist = np.concatenate([dist, _hamming(self.codes.columns_ref()[:words], tail, qc)])
        return dist

    def _slots(self, probe: _Runs | NDArray[np.intp], tail: NDArray[np.intp],
               picked: NDArray[np.intp]) -> NDArray[np.intp]:
        """The slots at ascending indices ``picked`` into ``probe`` followed by ``tail``."""
        laid = picked[picked < len(probe)]
        positions = probe.positions(laid) if isinstance(probe, _Runs) else probe[laid]
        out: NDArray[np.intp] = np.concatenate([self._order[positions],
                                                tail[picked[len(laid):] - len(probe)]])
        return out

    def _positions(self, cells: NDArray[np.intp]) -> NDArray[np.intp]:
        """Layout positions of the ascending ``cells``, cell after cell."""
        starts = self._offsets[cells].tolist()
        stops = self._offsets[cells + 1].tolist()
        if not starts:
            return np.zeros(0, np.intp)
        # Slices of a shared arange, concatenated: ten times faster than building the
        # positions with np.repeat (one pass, no per-element arithmetic).
        out: NDArray[np.intp] = np.concatenate(
            [self._arange[a:b] for a, b in zip(starts, stops, strict=True)])
        return out

    def _tail_in(self, cells: NDArray[np.intp],
                 candidates: NDArray[np.bool_] | None) -> NDArray[np.intp]:
        """Tail slots that are candidates and sit in one of ``cells``."""
        if not self._tail:
            return np.zeros(0, np.intp)
        tail = np.asarray(self._tail, np.intp)
        probed = np.zeros(self.cells + 1, bool)  # index -1 (moved out of every cell) stays False
        probed[cells] = True
        cell = self._cell_of[tail]
        keep = probed[cell] if candidates is None else probed[cell] & candidates[tail]
        out: NDArray[np.intp] = tail[keep]
        return out


class _Runs:
    """Contiguous ranges of layout positions, read in order: the probed cells, with
    neighbouring cells merged into one range.

    Reading codes through slices of the cell-ordered layout instead of gathering
    them by position (`np.take` over an index array as long as the probe) builds
    no index array: at 1M nodes with a quarter of the cells probed the three-word
    prefix pass costs 0.65x as much (3.1 against 4.7 ms in a microbenchmark), the
    whole `Partitions.nearest` about 0.8x.
    """

    def __init__(self, starts: NDArray[np.intp], stops: NDArray[np.intp]) -> None:
        self.starts = starts
        self.stops = stops
        self._before = np.concatenate([[0], np.cumsum(stops - starts)])  # positions before range i

    @classmethod
    def of(cls, offsets: NDArray[np.intp], cells: NDArray[np.intp]) -> _Runs:
        """The ranges of the ascending ``cells`` given the layout's cell ``offsets``."""
        starts, stops = offsets[cells], offsets[cells + 1]
        if not len(cells):
            return cls(np.zeros(0, np.intp), np.zeros(0, np.intp))
        # a cell that starts where the previous one stops continues its range
        new = np.concatenate([[True], starts[1:] != stops[:-1]])
        ends = np.concatenate([new[1:], [True]])
        return cls(starts[new].astype(np.intp), stops[ends].astype(np.intp))

    def __len__(self) -> int:
        return int(self._before[-1])

    def hamming(self, laid: NDArray[np.uint64], qc: NDArray[np.uint64],
                words: int) -> NDArray[np.uint16]:
        """Hamming distance of ``qc`` over the first ``words`` words, position by position."""
        bounds = list(zip(self.starts.tolist(), self.stops.tolist(), strict=True))
        return _count_differing_bits(
            (np.concatenate([laid[j, a:b] for a, b in bounds]) if bounds
             else np.zeros(0, np.uint64) for j in range(words)), qc, len(self))

    def positions(self, picked: NDArray[np.intp]) -> NDArray[np.intp]:
        """The layout positions at ascending indices ``picked`` into the ranges."""
        at = np.searchsorted(self._before, picked, side="right") - 1
        out: NDArray[np.intp] = self.starts[at] + (picked - self._before[at])
        return out


def train_cells(dim: int, n: int, embedded: NDArray[np.bool_],
                rows_at: Callable[[NDArray[np.intp]], NDArray[np.float32]],
                unit_rows: Callable[[int, int], NDArray[np.float32]],
                cells: int | None = None) -> tuple[NDArray[np.float32], NDArray[np.int32]]:
    """The costly part of `Partitions.train`: centroids and every slot's cell, no layout.

    It reads vectors only through ``rows_at`` / ``unit_rows`` and touches no
    shared state, so a background thread can run it while writes go on (the
    owner re-places the slots written meanwhile when it builds the
    `Partitions`). Returns ``(centroids, cell_of)``.
    """
    embedded_slots = np.flatnonzero(embedded[:n])
    count = cells if cells is not None else cell_count(len(embedded_slots))
    count = max(1, min(count, len(embedded_slots)))
    rng = np.random.default_rng(_SEED)
    take = min(len(embedded_slots), TRAIN_PER_CELL * count)
    sample = rows_at(np.sort(rng.choice(embedded_slots, take, replace=False)))
    centroids = _kmeans(sample, count, rng) if len(sample) else np.zeros((1, dim), np.float32)
    cell_of = np.full(max(n, 1), -1, np.int32)
    for start in range(0, n, _ASSIGN_CHUNK):
        stop = min(start + _ASSIGN_CHUNK, n)
        cell_of[start:stop] = _nearest_cell(unit_rows(start, stop), centroids)
    return centroids, cell_of


def _hamming(columns: NDArray[np.uint64], index: NDArray[np.intp],
             qc: NDArray[np.uint64]) -> NDArray[np.uint16]:
    """Hamming distance of ``qc`` to the codes at ``index`` of column-major ``columns``."""
    word = np.empty(len(index), np.uint64)  # one buffer, refilled word after word
    return _count_differing_bits((np.take(columns[j], index, out=word)
                                  for j in range(columns.shape[0])), qc, len(index))


def _count_differing_bits(words: Iterable[NDArray[np.uint64]], qc: NDArray[np.uint64],
                          n: int) -> NDArray[np.uint16]:
    """Sum over the code words of the bits where the ``j``-th of ``words`` (``n`` codes'
    word ``j``, overwritten here) differs from ``qc[j]``."""
    acc = np.zeros(n, np.uint16)
    bits = np.empty(n, np.uint8)
    for j, word in enumerate(words):
        np.bitwise_xor(word, qc[j], out=word)
        np.bitwise_count(word, out=bits)
        np.add(acc, bits, out=acc)
    return acc


def _nearest_cell(rows: NDArray[np.float32], centroids: NDArray[np.float32]) -> NDArray[np.int32]:
    """The nearest centroid (by dot product) of each row; ``-1`` for zero rows."""
    cells: NDArray[np.int32] = np.argmax(rows @ centroids.T, axis=1).astype(np.int32)
    cells[~rows.any(axis=1)] = -1
    return cells


def _kmeans(sample: NDArray[np.float32], count: int,
            rng: np.random.Generator) -> NDArray[np.float32]:
    """Spherical k-means: ``count`` unit centroids of the unit rows ``sample``.

    Starts from distinct sample points; a centroid left without points is
    re-seeded from a random sample point, so every cell stays in use.
    """
    centroids = sample[rng.choice(len(sample), count, replace=False)].copy()
    for _ in range(KMEANS_ITERATIONS):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        order = np.argsort(nearest, kind="stable")
        sizes = np.bincount(nearest, minlength=count)
        sums = np.zeros_like(centroids)
        used = sizes > 0
        # one reduceat over the sample sorted by cell: the sum of each used cell's rows
        starts = (np.cumsum(sizes) - sizes)[used]
        sums[used] = np.add.reduceat(sample[order], starts, axis=0)
        empty = ~used
        sums[empty] = sample[rng.choice(len(sample), int(empty.sum()))]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids = (sums / np.clip(norms, 1e-12, None)).astype(np.float32)
    return centroids
