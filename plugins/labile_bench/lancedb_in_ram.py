"""``labile bench scale --in-ram``: the in-memory vector-search paths without LanceDB.

At 1M nodes the store-backed benchmark spends most of its time ingesting into
LanceDB (an hour on a loaded 2-core machine) before any search is measured.
The vector-search candidates that run in memory (the exact scan, the quantized
scan, the partitioned scan and ``auto``) do not read LanceDB at all: they read
the namespace's `labile_lancedb._cache.NodeTable`. This mode fills such a table
directly with the same generated vectors and measures those candidates through
the same search function the store calls (`labile_lancedb._search.vector_search`),
so their rows are the store's figures minus the store's lock and LanceDB
freshness check. LanceDB index candidates are skipped (they need the table on
disk); a store-backed run at a smaller size covers them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Final, cast

import attrs
import numpy as np
from numpy.typing import NDArray

from labile.plugin import Node, NodeFilter, Scored, get_logger, utcnow
from labile_bench.lancedb_candidates import Candidate, format_table, measure_candidates, memory_mb
from labile_lancedb._cache import NodeTable
from labile_lancedb._search import SearchMode, vector_search

if TYPE_CHECKING:
    from labile_lancedb._tables import LanceTables

__all__ = ["NAMESPACE", "InRamStore", "fill_table", "run_in_ram_scale"]

#: The one namespace of the in-RAM table.
NAMESPACE: Final = "bench"

log = get_logger(__name__)


class InRamStore:
    """The slice of `LanceStore` that `measure_candidates` uses, over one in-memory table.

    Args:
        namespace: The only namespace.
        table: Its nodes.
        config: A `LanceStoreConfig` (its thresholds pick ``auto``'s path).
    """

    def __init__(self, namespace: str, table: NodeTable, config: Any) -> None:
        self.namespace = namespace
        self.path = "(in RAM)"
        self._table = table
        self._tables = SimpleNamespace(config=config, has_ann_index=lambda: False)
        self._spaces = SimpleNamespace(nodes=self._nodes)

    def _nodes(self, namespace: str) -> NodeTable:
        if namespace != self.namespace:
            raise KeyError(f"namespace {namespace!r}: this in-RAM store holds only "
                           f"{self.namespace!r}")
        return self._table

    def vector_search(self, namespace: str, vector: NDArray[np.float32], k: int, *,
                      where: NodeFilter | None = None, mode: SearchMode = "auto") -> list[Scored]:
        """As `LanceStore.vector_search` (the store's search function on the same table)."""
        q = np.asarray(vector, np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        # The in-memory paths read only ``config`` and ``has_ann_index`` of the tables.
        tables = cast("LanceTables", self._tables)
        return vector_search(tables, namespace, self._nodes(namespace), q, k, where, mode,
                             flush=lambda: None)


def fill_table(vectors_of: Callable[[int], NDArray[np.float32]], n_nodes: int, dim: int,
               chunk: int, progress: bool) -> NodeTable:
    """A `NodeTable` of ``n_nodes`` nodes whose embeddings come from ``vectors_of(count)``,
    called once per ``chunk`` nodes (each node's embedding is a view of its chunk)."""
    table = NodeTable(dim)
    now = utcnow()
    t0 = time.perf_counter()
    nodes: list[Node] = []
    for start in range(0, n_nodes, chunk):
        stop = min(start + chunk, n_nodes)
        vecs = vectors_of(stop - start)
        nodes.extend(Node(id=f"n{i}", kind="bench.unit", embedding=vecs[i - start],
                          created_at=now, updated_at=now) for i in range(start, stop))
        if progress:
            log.info("bench_progress", nodes=stop, of=n_nodes,
                     s=round(time.perf_counter() - t0, 1), rss_mb=round(memory_mb("VmHWM")))
    null = np.iinfo(np.int64).min
    times = np.full(n_nodes, null, np.int64)
    table.load(nodes, list(range(n_nodes)), times, times, null)
    return table


def run_in_ram_scale(n_nodes: int, dim: int, query_rows: list[int], seed: int,
                     vectors_of: Callable[[int], NDArray[np.float32]],
                     make_queries: Callable[[list[NDArray[np.float32]], int], NDArray[np.float32]],
                     candidates: tuple[Candidate, ...], config: Any, *, progress: bool,
                     chunk: int) -> dict[str, Any]:
    """Fill a table with ``n_nodes`` generated vectors and measure the in-memory candidates.

    Returns ``nodes``, ``dim``, ``queries``, ``mode`` (``"in-ram"``),
    ``fill_s``, ``candidates`` (one `CandidateRow` dict each), ``skipped``
    (the LanceDB candidates left out), ``table`` (Markdown), ``refresh`` (1%
    more nodes put afterwards: seconds, how many of a sample the
    partitioned scan finds at once, whether the codes or the partitions were
    rebuilt), ``peak_rss_mb`` and the thresholds of ``config``.
    """
    t0 = time.perf_counter()
    table = fill_table(vectors_of, n_nodes, dim, chunk, progress)
    fill_s = time.perf_counter() - t0
    picked = [table.records[i].embedding for i in query_rows]
    queries = make_queries([v for v in picked if v is not None], seed)
    store = InRamStore(NAMESPACE, table, config)
    kept = tuple(c for c in candidates if c.index is None and c.mode != "ann")
    rows = []
    for row in measure_candidates(store, NAMESPACE, queries, kept):
        log.info("bench_candidate", **attrs.asdict(row))
        rows.append(row)
    refresh = _add_one_percent(store, table, vectors_of)
    result: dict[str, Any] = {
        "nodes": n_nodes, "dim": dim, "queries": len(queries), "mode": "in-ram",
        "fill_s": round(fill_s, 1), "candidates": [attrs.asdict(r) for r in rows],
        "skipped": [c.key for c in candidates if c not in kept],
        "table": format_table(rows, rows[0].p50_ms), "refresh": refresh,
        "peak_rss_mb": round(memory_mb("VmHWM")),
        "config": {"ann_threshold": config.ann_threshold,
                   "partition_threshold": config.partition_threshold,
                   "partition_probe_share": config.partition_probe_share,
                   "quantized_rerank": config.quantized_rerank},
    }
    log.info("bench_scale_done", **{k: v for k, v in result.items()
                                     if k not in ("candidates", "table")})
    return result


def _add_one_percent(store: InRamStore, table: NodeTable,
                     vectors_of: Callable[[int], NDArray[np.float32]]) -> dict[str, Any]:
    """Put 1% more nodes: found at once by the partitioned scan, with nothing rebuilt?"""
    n = len(table)
    extra = max(1, n // 100)
    codes, parts = table.codes(), table.partitions()
    vecs = vectors_of(extra)
    now = utcnow()
    t0 = time.perf_counter()
    for j in range(extra):
        table.put(Node(id=f"x{j}", kind="bench.unit", embedding=vecs[j], created_at=now,
                       updated_at=now), n + j)
    add_s = time.perf_counter() - t0
    probes = range(0, extra, max(1, extra // 20))
    found = sum(store.vector_search(NAMESPACE, vecs[j], 1, mode="partitioned")[0][0].id == f"x{j}"
                for j in probes)
    return {"added": extra, "add_s": round(add_s, 3), "found_at_once": f"{found}/{len(probes)}",
            "codes_rebuilt": table.codes() is not codes,
            "partitions_rebuilt": table.partitions() is not parts}
