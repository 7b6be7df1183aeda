"""Training a namespace's partitions in a background thread.

The first search of a namespace past ``partition_threshold`` nodes needs the
cells of `labile_lancedb._partitions`: k-means on a sample and a pass that
assigns every node to its nearest centroid, about 13 s of CPU at 1M nodes.
Done inline, that search (and every read queued behind the store's lock)
would wait for it. `CellTraining` runs that costly part on a private snapshot
of the namespace's vectors in a daemon thread, while the searches go on with
the quantized scan (exact scores, slower); writes made meanwhile are noted,
and the owner re-places them when it lays the trained cells out, so nothing
written during training is missed.

The thread reads only its snapshot (the records list copied at the start, the
embedding arrays themselves never change in place) and shares nothing else
with the owner but the `dirty` list, which only the owner's thread appends to
and reads after `done` is set. numpy releases the GIL in its matrix
products, so on a machine with a spare core the training costs the searches
little.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from labile.plugin import Node, get_logger
from labile_lancedb._partitions import Partitions, train_cells
from labile_lancedb._quantized import BinaryCodes

__all__ = ["CellTraining"]

log = get_logger(__name__)


class CellTraining:
    """One background training of cells for ``codes``, over slots ``0..len(records)-1``.

    Args:
        codes: The binary codes the partitions will sit in front of (the owner
            discards the result if its codes were rebuilt meanwhile).
        records: The namespace's node records by slot, as at the start (the
            list is copied: the owner keeps appending to its own).
        embedded: Which of those slots have an embedding (copied).
        dim: The vectors' dimension.
        unit: A record's unit vector (zeros without an embedding), the owner's own
            normalisation, so cells and codes see the same vectors.
    """

    def __init__(self, codes: BinaryCodes, records: Sequence[Node],
                 embedded: NDArray[np.bool_], dim: int,
                 unit: Callable[[Node], NDArray[np.float32]]) -> None:
        self.codes = codes
        self.n = len(records)
        self.dirty: list[int] = []
        self.done = threading.Event()
        self.error: BaseException | None = None
        self._records = list(records)
        self._embedded = embedded[: self.n].copy()
        self._dim = dim
        self._unit = unit
        self._centroids: NDArray[np.float32] | None = None
        self._cell_of: NDArray[np.int32] | None = None
        self._thread = threading.Thread(target=self._run, name="labile-cells", daemon=True)

    def start(self) -> CellTraining:
        """Start the thread; returns ``self``."""
        log.info("partitions_training_started", nodes=self.n)
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the training has finished (or failed); ``False`` on timeout."""
        return self.done.wait(timeout)

    def _rows(self, slots: Sequence[int]) -> NDArray[np.float32]:
        rows = np.zeros((len(slots), self._dim), np.float32)
        for j, i in enumerate(slots):
            rows[j] = self._unit(self._records[i])
        return rows

    def _run(self) -> None:
        try:
            self._centroids, self._cell_of = train_cells(
                self._dim, self.n, self._embedded,
                lambda slots: self._rows(slots.tolist()),
                lambda start, stop: self._rows(range(start, stop)))
            log.info("partitions_training_done", nodes=self.n)
        except Exception as exc:  # reported to the owner, who falls back to the quantized scan
            self.error = exc
            log.warning("partitions_training_failed", nodes=self.n, error=repr(exc))
        finally:
            self._records = []  # the snapshot's references go with the thread
            self.done.set()

    def partitions(self, capacity: int, unit_of: dict[int, NDArray[np.float32]]) -> Partitions:
        """The trained cells laid out, with the slots written since the start re-placed.

        Called by the owner once `done` is set and `error` is ``None``;
        ``unit_of`` maps each dirty slot to its current unit vector (zeros:
        no embedding). ``capacity`` is the owner's slot capacity.
        """
        assert self._centroids is not None and self._cell_of is not None
        parts = Partitions(self.codes, self._centroids, self._cell_of, self.n)
        parts.grow(capacity)
        for slot, unit in unit_of.items():
            parts.set(slot, unit)
        return parts
