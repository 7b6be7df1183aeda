"""Keeping a store fast: compaction and the ANN vector index.

Small appends fragment LanceDB tables (one fragment per commit) and slow its
queries several-fold, so the store compacts every ``optimize_every`` commits.
The IVF_RQ index on ``nodes.embedding`` is trained once the table reaches
``ann_threshold`` rows and retrained from scratch whenever it has grown by
``ann_retrain_growth`` since; in between, compaction folds new rows into it.
Both hold the store exclusively (no batch in flight): they commit new table
versions and move every namespace's pin.
"""

from __future__ import annotations

import time

from labile.plugin import get_logger
from labile_lancedb._lock import WriterLock
from labile_lancedb._tables import LanceTables

__all__ = ["ann_index_due", "compact", "train_ann_index"]

log = get_logger(__name__)


def compact(tables: LanceTables, lock: WriterLock) -> None:
    """Compact every table, drop old versions and fold new rows into the indexes."""
    t0 = time.perf_counter()
    with lock.holding():
        tables.optimize()
    log.debug("lancedb_optimized", path=str(tables.path),
              ms=round((time.perf_counter() - t0) * 1000, 1))


def ann_index_due(tables: LanceTables) -> bool:
    """Whether the vector index should be (re)trained now."""
    rows: int = tables.handles["nodes"].count_rows()
    if rows < tables.config.ann_threshold:
        return False
    return (not tables.has_ann_index()
            or rows >= tables.config.ann_retrain_growth * tables.ann_trained_rows)


def train_ann_index(tables: LanceTables, lock: WriterLock) -> float:
    """(Re)train the IVF_RQ cosine index over every row of ``nodes``; returns seconds.

    Partitions: ``rows / ann_partition_rows``. The trained row count goes to
    ``meta``, so every process knows when the next retraining is due.
    """
    from lancedb.index import IvfRq

    nodes = tables.handles["nodes"]
    rows: int = nodes.count_rows()
    if rows == 0:
        return 0.0
    parts = max(1, rows // tables.config.ann_partition_rows)
    t0 = time.perf_counter()
    with lock.holding(), tables.writing():
        nodes.create_index("embedding", config=IvfRq(distance_type="cosine",
                                                     num_partitions=parts), replace=True)
        tables.ann_trained_rows = rows
        tables.meta_put({"ann_trained_rows": str(rows)})
    tables.ann_index_built()
    secs = time.perf_counter() - t0
    log.info("lancedb_ann_index_built", rows=rows, partitions=parts, s=round(secs, 2))
    return secs
