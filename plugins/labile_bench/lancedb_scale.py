"""Scale benchmark of the LanceDB store (``labile bench scale --nodes N``).

Writes ``N`` synthetic, pre-embedded units into one namespace through the
store's own batch API (one observation, one node citing it and one edge per
unit, in batches of `CHUNK`), then measures every vector-search candidate of
`labile_bench.lancedb_candidates` side by side (the exact float scan, the
quantized scan, ``auto`` and LanceDB index variants: latency, recall@10 against
the exact scan, build time, memory, index size on disk), plus full-text search,
edge reads, ingest rate, peak RSS and on-disk size.

Vectors have latent structure, like real embeddings: a 48-d latent code pushed
through a fixed random projection to ``dim`` dimensions, plus isotropic noise,
normalised; queries are data points perturbed by noise, so their neighbours
are meaningful (on isotropic random vectors every method's recall collapses,
because all neighbours are nearly equidistant).
"""

from __future__ import annotations

import os
import time
from types import SimpleNamespace
from typing import Any, Final

import attrs
import numpy as np
from numpy.typing import NDArray

from labile.plugin import Edge, Node, Observation, edge_id, get_logger, utcnow
from labile_bench.lancedb_candidates import (
    CANDIDATES,
    Candidate,
    CandidateRow,
    format_table,
    measure_candidates,
    memory_mb,
)

log = get_logger(__name__)

#: Units per `LanceStore.batch` (one commit each).
CHUNK: Final = 10_000
LATENT: Final = 48
NAMESPACE: Final = "bench"
_WORDS: Final = ("coffee", "paris", "meeting", "project", "holiday", "doctor", "piano",
                 "garden", "budget", "train", "birthday", "recipe", "football", "novel",
                 "server", "deadline")


def _vectors(rng: np.random.Generator, proj: NDArray[np.float32], n: int,
             noise: float) -> NDArray[np.float32]:
    z = rng.standard_normal((n, proj.shape[0])).astype(np.float32)
    x = z @ proj + noise * rng.standard_normal((n, proj.shape[1])).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def _queries(picked: list[NDArray[np.float32]], seed: int) -> NDArray[np.float32]:
    """The query vectors: the picked data points, each perturbed by noise and normalised."""
    qrng = np.random.default_rng(seed + 1)
    queries: NDArray[np.float32] = np.stack(picked)
    queries = queries + (0.3 / np.sqrt(queries.shape[1])) * qrng.standard_normal(
        queries.shape).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return queries


def _peak_rss_mb() -> float:
    return memory_mb("VmHWM")


def _lat(row: CandidateRow | None) -> dict[str, float] | None:
    return None if row is None else {"p50_ms": row.p50_ms, "p95_ms": row.p95_ms}


def _pct(times: list[float]) -> dict[str, float]:
    ms = np.asarray(times) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3),
            "p95_ms": round(float(np.percentile(ms, 95)), 3)}


def _add_one_percent(store: Any, rng: np.random.Generator, proj: NDArray[np.float32],
                     noise: float, n_nodes: int, now: Any) -> dict[str, Any]:
    """Add 1% more nodes after the searches; are they found at once, with no rebuild?"""
    extra = max(1, n_nodes // 100)
    vecs = _vectors(rng, proj, extra, noise)
    table = store._spaces.nodes(NAMESPACE)
    before = table.codes()
    t0 = time.perf_counter()
    with store.batch(NAMESPACE):
        store.upsert_nodes(NAMESPACE, [
            Node(id=f"x{j}", kind="bench.unit", content=f"extra unit {j}", embedding=vecs[j],
                 created_at=now, updated_at=now) for j in range(extra)])
    add_s = time.perf_counter() - t0
    probes = range(0, extra, max(1, extra // 20))
    found = sum(store.vector_search(NAMESPACE, vecs[j], 1, mode="quantized")[0][0].id == f"x{j}"
                for j in probes)
    return {"added": extra, "add_s": round(add_s, 3), "found_at_once": f"{found}/{len(probes)}",
            "codes_rebuilt": table.codes() is not before}


def run_scale_bench(  # noqa: PLR0915
    n_nodes: int,
    *,
    dim: int = 384,
    n_queries: int = 200,
    seed: int = 0,
    path: str | None = None,
    progress: bool = True,
    candidates: tuple[Candidate, ...] = CANDIDATES,
    in_ram: bool = False,
) -> dict[str, Any]:
    """Ingest ``n_nodes`` synthetic units and measure the store; returns the figures.

    Args:
        n_nodes: Units to write (each: an observation, a node, an edge).
        dim: Vector dimension (384 is all-MiniLM-L6-v2's).
        n_queries: Queries per search path.
        seed: Seed of the data, the queries and the order.
        path: Store directory (must be new or hold a bench store of the same
            dim); ``None`` uses a temporary one deleted afterwards.
        progress: Log ingest progress (structlog, ``bench_progress`` events).
        candidates: The vector-search candidates to measure, the exact scan
            first (`labile_bench.lancedb_candidates.CANDIDATES` by default).
        in_ram: Measure only the in-memory candidates on a table filled
            directly, without LanceDB (`labile_bench.lancedb_in_ram`; its
            own result keys); ``path`` is then unused.

    Returns:
        A dict with ``nodes``, ``dim``, ``ingest`` (seconds, nodes/s),
        ``candidates`` (one `CandidateRow` dict per vector-search candidate:
        p50/p95 ms excluding query embedding, recall@10 against the exact
        scan, build seconds, RAM and index disk MB, process RSS) and
        ``table`` (the same as Markdown); ``exact``, ``ann`` and ``auto``
        (latency p50/p95 in ms of those candidates), ``recall_at_10`` and
        ``ann_build_s`` (of the store's IVF_RQ path, a full retrain at the
        final size), ``text`` (full-text search), ``edges_of`` (one node's
        edges, both directions), ``graph_build_s`` (igraph topology, first
        use), ``refresh`` (1% more nodes added afterwards: seconds, how many
        of a sample the quantized scan finds at once, whether its codes were
        rebuilt), ``optimize_s``, ``peak_rss_mb``,
        ``disk_mb`` (the directory, old versions kept by ``keep_versions_s``
        included), ``live_table_mb`` (the current versions' files) and the
        store's ``config``.
    """
    from labile_lancedb.config import LanceStoreConfig
    from labile_lancedb.store import LanceStore

    if n_nodes < 1:
        raise ValueError(f"n_nodes must be >= 1, got {n_nodes}")
    rng = np.random.default_rng(seed)
    proj = (rng.standard_normal((LATENT, dim)) / np.sqrt(LATENT)).astype(np.float32)
    noise = 0.35 / np.sqrt(dim)  # ~ a third of the signal's norm: clusters, not points
    query_rows = set(rng.choice(n_nodes, size=min(n_queries, n_nodes), replace=False).tolist())
    config = LanceStoreConfig(path=path or "memory://")
    if in_ram:
        from labile_bench.lancedb_in_ram import run_in_ram_scale

        return run_in_ram_scale(n_nodes, dim, sorted(query_rows), seed,
                                lambda count: _vectors(rng, proj, count, noise), _queries,
                                candidates, config, progress=progress, chunk=CHUNK)
    deps = SimpleNamespace(embedder=SimpleNamespace(name=f"bench-latent-{dim}", dim=dim))
    store = LanceStore(config, deps)
    picked: dict[int, NDArray[np.float32]] = {}
    now = utcnow()
    try:
        t_ingest = time.perf_counter()
        for start in range(0, n_nodes, CHUNK):
            stop = min(start + CHUNK, n_nodes)
            vecs = _vectors(rng, proj, stop - start, noise)
            for i in range(start, stop):
                if i in query_rows:
                    picked[i] = vecs[i - start].copy()
            words = rng.integers(0, len(_WORDS), size=(stop - start, 3))
            obs, nodes, edges = [], [], []
            for j, i in enumerate(range(start, stop)):
                text = f"unit {i} about {' '.join(_WORDS[w] for w in words[j])}"
                obs.append(Observation(id=f"o{i}", text=text, timestamp=now))
                nodes.append(Node(id=f"n{i}", kind="bench.unit", content=text, sources=(f"o{i}",),
                                  embedding=vecs[j], created_at=now, updated_at=now))
                if i > 0:
                    src = f"n{int(rng.integers(0, i))}"
                    edges.append(Edge(id=edge_id(src, "bench.rel", f"n{i}"), src=src,
                                      dst=f"n{i}", predicate="bench.rel", created_at=now,
                                      updated_at=now))
            with store.batch(NAMESPACE):
                store.add_observations(NAMESPACE, obs)
                store.upsert_nodes(NAMESPACE, nodes)
                store.upsert_edges(NAMESPACE, edges)
            if progress:
                elapsed = time.perf_counter() - t_ingest
                log.info("bench_progress", nodes=stop, of=n_nodes, s=round(elapsed, 1),
                         rate=round(stop / elapsed), rss_mb=round(_peak_rss_mb()))
        ingest_s = time.perf_counter() - t_ingest
        t0 = time.perf_counter()
        store.optimize()
        optimize_s = time.perf_counter() - t0
        qrng = np.random.default_rng(seed + 1)
        queries = _queries([picked[i] for i in sorted(picked)], seed)
        rows = []
        for row in measure_candidates(store, NAMESPACE, queries, candidates):
            log.info("bench_candidate", **attrs.asdict(row))
            rows.append(row)
        by_key = {c.key: r for c, r in zip(candidates, rows, strict=True)}
        exact, auto, ann = by_key["exact"], by_key.get("auto"), by_key.get("ivf_rq")
        text_t = []
        for j in range(min(n_queries, 50)):
            t = time.perf_counter()
            store.text_search(NAMESPACE, f"{_WORDS[j % 16]} {_WORDS[(j * 7) % 16]}", 10)
            text_t.append(time.perf_counter() - t)
        t0 = time.perf_counter()
        store.edges_of(NAMESPACE, ["n0"], direction="both")  # builds the igraph topology
        graph_build_s = time.perf_counter() - t0
        edge_t = []
        for i in qrng.choice(n_nodes, size=min(n_queries, n_nodes), replace=False).tolist():
            t = time.perf_counter()
            store.edges_of(NAMESPACE, [f"n{i}"], direction="both")
            edge_t.append(time.perf_counter() - t)
        refresh = _add_one_percent(store, rng, proj, noise, n_nodes, now)
        stats = store.stats()
        result: dict[str, Any] = {
            "nodes": n_nodes, "dim": dim, "queries": len(queries),
            "ingest": {"s": round(ingest_s, 2), "nodes_per_s": round(n_nodes / ingest_s)},
            "exact": _lat(exact), "ann": _lat(ann), "auto": _lat(auto),
            "text": _pct(text_t), "edges_of": _pct(edge_t),
            "graph_build_s": round(graph_build_s, 2),
            "recall_at_10": ann.recall_at_10 if ann else None,
            "ann_build_s": ann.build_s if ann else None, "optimize_s": round(optimize_s, 2),
            "candidates": [attrs.asdict(r) for r in rows], "refresh": refresh,
            "table": format_table(rows, exact.p50_ms),
            "peak_rss_mb": round(_peak_rss_mb()), "disk_mb": round(stats["disk_bytes"] / 2**20, 1),
            "live_table_mb": round(sum(t["bytes"] for t in stats["tables"].values()) / 2**20, 1),
            "fragments": stats["fragments"], "edges": stats["edges"],
            "config": {"nprobes": config.nprobes, "refine_factor": config.refine_factor,
                       "quantized_rerank": config.quantized_rerank,
                       "ann_partition_rows": config.ann_partition_rows,
                       "ann_threshold": config.ann_threshold,
                       "partition_threshold": config.partition_threshold,
                       "partition_probe_share": config.partition_probe_share},
            "cpus": os.cpu_count(),
        }
        log.info("bench_scale_done", **{k: v for k, v in result.items()
                                         if k not in ("config", "candidates", "table")})
        return result
    finally:
        store.close()
