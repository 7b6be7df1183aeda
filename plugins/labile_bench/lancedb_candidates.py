"""The vector-search candidates that ``labile bench scale`` measures side by side.

Each candidate is prepared once (its build is timed: the float matrix, the
binary codes, or a LanceDB index) and then answers the same queries; the
runner reports latency, recall@10 against the exact scan, build time, the
memory the candidate holds, its on-disk index size and the process RSS.

The in-memory candidates and ``auto`` go through `LanceStore.vector_search`
(lock, filter, copies of the records included), exactly as callers see them.
The LanceDB index variants differ in training and query parameters the store
does not expose (``ef``, per-query ``nprobes``), so they query the table
directly; the store's own IVF_RQ path (``ivf_rq (store)``) shows the small
wrapping overhead on top of a raw query.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import attrs
import numpy as np
from numpy.typing import NDArray

__all__ = ["CANDIDATES", "Candidate", "CandidateRow", "format_table", "measure_candidates",
           "memory_mb", "pick_candidates"]

#: Queries answered before timing starts (first-use costs are the build's, not a query's).
_WARMUP: Final = 2


@attrs.frozen
class Candidate:
    """One way to answer a top-10 vector query.

    Attributes:
        key: A short name for ``labile bench scale --candidates``.
        name: The row label.
        mode: The store's search mode, or ``None`` for a raw LanceDB query.
        index: ``(kind, options)`` of the LanceDB index to build first (kind:
            ``"ivf_rq"`` or ``"ivf_hnsw_sq"``; options: ``partitions_per``
            rows per partition, plus the index's training options), or ``None``.
        query: Query options of a raw LanceDB query (``nprobes``,
            ``refine_factor``, ``ef``).
    """

    key: str
    name: str
    mode: str | None
    index: tuple[str, dict[str, int]] | None = None
    query: dict[str, int] = attrs.field(factory=dict)


#: Every candidate, in report order. The HNSW graph builds in minutes on two
#: cores at 100k rows, so its row is the slowest part of a run.
CANDIDATES: Final = (
    Candidate("exact", "exact (float scan)", "exact"),
    Candidate("quantized", "quantized (1-bit + re-rank)", "quantized"),
    Candidate("partitioned", "partitioned (cells + 1-bit + re-rank)", "partitioned"),
    Candidate("auto", "auto", "auto"),
    Candidate("ivf_rq", "ivf_rq (store)", "ann", ("ivf_rq", {"partitions_per": 0})),
    Candidate("ivf_rq_np40", "ivf_rq p=n/4096 np=40 rf=10", None, ("ivf_rq", {"partitions_per": 0}),
              {"nprobes": 40, "refine_factor": 10}),
    Candidate("ivf_rq_p1024", "ivf_rq p=n/1024 np=16 rf=10", None,
              ("ivf_rq", {"partitions_per": 1024}),
              {"nprobes": 16, "refine_factor": 10}),
    Candidate("ivf_rq_p1024_np32", "ivf_rq p=n/1024 np=32 rf=20", None,
              ("ivf_rq", {"partitions_per": 1024}),
              {"nprobes": 32, "refine_factor": 20}),
    Candidate("hnsw_sq", "ivf_hnsw_sq m=16 efc=150 ef=100", None,
              ("ivf_hnsw_sq", {"partitions_per": 50_000, "m": 16, "ef_construction": 150}),
              {"nprobes": 4, "ef": 100, "refine_factor": 1}),
)


def pick_candidates(keys: str | None) -> tuple[Candidate, ...]:
    """The candidates named by comma-separated ``keys`` (all when ``None``), exact first.

    Raises:
        ValueError: an unknown key (the message lists the known ones).
    """
    if keys is None:
        return CANDIDATES
    by_key = {c.key: c for c in CANDIDATES}
    wanted = [k.strip() for k in keys.split(",") if k.strip()]
    unknown = [k for k in wanted if k not in by_key]
    if unknown:
        raise ValueError(f"unknown candidate(s) {', '.join(unknown)}; "
                         f"known: {', '.join(by_key)}")
    return tuple(c for c in CANDIDATES if c.key == "exact" or c.key in wanted)


@attrs.frozen
class CandidateRow:
    """The figures of one candidate (times in ms, sizes in MB).

    ``cpu_p50_ms`` is the median process CPU time per query (every thread
    counted). On a shared machine wall-clock percentiles mostly measure the
    scheduler, and favour multi-threaded paths that grab more time slices;
    CPU time is the cost that survives the load.
    """

    name: str
    p50_ms: float
    p95_ms: float
    cpu_p50_ms: float
    recall_at_10: float
    build_s: float
    mem_mb: float
    index_disk_mb: float
    rss_mb: float


def memory_mb(field: str = "VmRSS") -> float:
    """A memory figure of this process from ``/proc/self/status`` in MB (``VmRSS``: now,
    ``VmHWM``: peak); NaN where there is no such file."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _dir_mb(path: Path, since: float) -> float:
    """MB of the files under ``path`` modified at or after ``since`` (a new index's)."""
    if not path.is_dir():
        return 0.0
    total = sum(f.stat().st_size for f in path.rglob("*")
                if f.is_file() and f.stat().st_mtime >= since)
    return round(total / 2**20, 2)


def _build_index(store: Any, kind: str, options: dict[str, int]) -> float:
    """Build (replace) the vector index on ``nodes.embedding``; returns seconds."""
    from lancedb.index import IvfHnswSq, IvfRq

    tbl = store._lance.handles["nodes"]
    rows: int = tbl.count_rows()
    per = options.get("partitions_per") or store._lance.config.ann_partition_rows
    parts = max(1, rows // per)
    config: IvfRq | IvfHnswSq
    if kind == "ivf_rq":
        config = IvfRq(distance_type="cosine", num_partitions=parts)
    else:
        config = IvfHnswSq(distance_type="cosine", num_partitions=parts,
                           m=options.get("m", 20),
                           ef_construction=options.get("ef_construction", 300))
    t0 = time.perf_counter()
    tbl.create_index("embedding", config=config, replace=True)
    return time.perf_counter() - t0


def _raw_query(store: Any, options: dict[str, int]) -> Callable[[NDArray[np.float32]], list[str]]:
    tbl = store._lance.handles["nodes"]

    def query(q: NDArray[np.float32]) -> list[str]:
        b = tbl.search(q, vector_column_name="embedding").distance_type("cosine")
        if "nprobes" in options:
            b = b.minimum_nprobes(options["nprobes"]).maximum_nprobes(0)
        if "refine_factor" in options:
            b = b.refine_factor(options["refine_factor"])
        if "ef" in options:
            b = b.ef(options["ef"])
        res = b.select(["id", "_distance"]).limit(10).to_arrow()
        return [str(x) for x in res.column("id").to_pylist()]

    return query


def _store_query(store: Any, namespace: str,
                 mode: str) -> Callable[[NDArray[np.float32]], list[str]]:
    def query(q: NDArray[np.float32]) -> list[str]:
        return [n.id for n, _ in store.vector_search(namespace, q, 10, mode=mode)]

    return query


def _time(query: Callable[[NDArray[np.float32]], list[str]],
          queries: NDArray[np.float32]) -> tuple[list[float], list[float], list[list[str]]]:
    """Wall-clock and process CPU seconds per query, and the ids each returned."""
    for q in queries[:_WARMUP]:
        query(q)
    times, cpu, ids = [], [], []
    for q in queries:
        c = time.process_time()
        t = time.perf_counter()
        ids.append(query(q))
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return times, cpu, ids


def measure_candidates(store: Any, namespace: str, queries: NDArray[np.float32],
                       candidates: tuple[Candidate, ...] = CANDIDATES) -> Iterator[CandidateRow]:
    """Measure each candidate in turn; the first must be the exact scan (the truth).

    ``store`` is a `LanceStore` holding ``namespace``'s vectors (the benchmark's
    own store: the LanceDB variants replace its vector index).
    """
    truth: list[list[str]] | None = None
    index_dir = Path(store.path) / "nodes.lance" / "_indices"
    for cand in candidates:
        build_s, disk_mb, mem_mb = 0.0, 0.0, 0.0
        table = store._spaces.nodes(namespace)
        if cand.index is not None:
            since = time.time() - 1
            build_s = _build_index(store, *cand.index)
            store._lance.ann_index_built()
            disk_mb = _dir_mb(index_dir, since)
        elif cand.mode == "exact":  # the matrix is the exact scan's structure
            table.drop_matrix()
            t0 = time.perf_counter()
            table.matrix()
            build_s = time.perf_counter() - t0
        elif cand.mode == "quantized":
            t0 = time.perf_counter()
            table.codes()
            build_s = time.perf_counter() - t0
        elif cand.mode == "partitioned":  # the codes are the quantized row's build
            table.codes()
            table.drop_partitions()
            t0 = time.perf_counter()
            table.partitions()
            build_s = time.perf_counter() - t0
        query = (_store_query(store, namespace, cand.mode) if cand.mode is not None
                 else _raw_query(store, cand.query))
        times, cpu, ids = _time(query, queries)
        if cand.mode == "exact":
            mem_mb = table.matrix().nbytes / 2**20
        elif cand.mode == "quantized":
            mem_mb = table.codes().nbytes() / 2**20
        elif cand.mode == "partitioned":  # its own layout on top of the codes
            mem_mb = (table.codes().nbytes() + table.partitions().nbytes()) / 2**20
        if truth is None:
            if cand.mode != "exact":
                raise ValueError("the first candidate must be the exact scan")
            truth = ids
        recall = float(np.mean([len(set(a) & set(t)) / max(len(t), 1)
                                for a, t in zip(ids, truth, strict=True)]))
        ms = np.asarray(times) * 1000
        yield CandidateRow(cand.name, round(float(np.percentile(ms, 50)), 3),
                           round(float(np.percentile(ms, 95)), 3),
                           round(float(np.median(cpu)) * 1000, 3), round(recall, 4),
                           round(build_s, 2), round(mem_mb, 2), disk_mb, round(memory_mb()))


def format_table(rows: list[CandidateRow], exact_p50: float) -> str:
    """The rows as a Markdown table, with each p50 as a ratio of the exact scan's."""
    head = ("| candidate | p50 ms | p95 ms | × exact | CPU p50 ms | recall@10 | build s "
            "| RAM MB | index disk MB | RSS MB |")
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        ratio = r.p50_ms / exact_p50 if exact_p50 > 0 else float("nan")
        lines.append(f"| {r.name} | {r.p50_ms:.3f} | {r.p95_ms:.3f} | {ratio:.2f} "
                     f"| {r.cpu_p50_ms:.3f} | {r.recall_at_10:.3f} | {r.build_s:.2f} "
                     f"| {r.mem_mb:.2f} | {r.index_disk_mb:.1f} | {r.rss_mb:.0f} |")
    return "\n".join(lines)
