"""Scale benchmark of the LanceDB store (``labile bench scale --nodes N``).

Writes ``N`` synthetic, pre-embedded units into one namespace through the
store's own batch API (one observation, one node citing it and one edge per
unit, in batches of `CHUNK`), then measures retrieval: exact search over the
in-memory matrix, approximate search through the IVF_RQ index, recall@10 of
the latter against the former, plus ingest rate, index build time, peak RSS and
on-disk size.

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

import numpy as np
import structlog
from numpy.typing import NDArray

from labile.plugin import Edge, Node, Observation, edge_id, utcnow

log = structlog.get_logger(__name__)

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


def _peak_rss_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _pct(times: list[float]) -> dict[str, float]:
    ms = np.asarray(times) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3),
            "p95_ms": round(float(np.percentile(ms, 95)), 3)}


def run_scale_bench(
    n_nodes: int,
    *,
    dim: int = 384,
    n_queries: int = 200,
    seed: int = 0,
    path: str | None = None,
    progress: bool = True,
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

    Returns:
        A dict with ``nodes``, ``dim``, ``ingest`` (seconds, nodes/s),
        ``exact`` and ``ann`` (latency p50/p95 in ms), ``recall_at_10`` (of
        the ANN path against exact), ``auto`` (latency of what
        `LanceStore.vector_search` picks by default), ``text`` (full-text
        search), ``edges_of`` (one node's edges, both directions),
        ``graph_build_s`` (igraph topology, first use), ``ann_build_s`` (a full
        retrain at the final size), ``optimize_s``, ``peak_rss_mb``,
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
    config = LanceStoreConfig(path=path or "memory://")
    deps = SimpleNamespace(embedder=SimpleNamespace(name=f"bench-latent-{dim}", dim=dim))
    store = LanceStore(config, deps)
    query_rows = set(rng.choice(n_nodes, size=min(n_queries, n_nodes), replace=False).tolist())
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
        ann_build_s = store.build_ann_index()

        qrng = np.random.default_rng(seed + 1)
        queries = np.stack([picked[i] for i in sorted(picked)])
        queries = queries + (0.3 / np.sqrt(dim)) * qrng.standard_normal(queries.shape).astype(
            np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)

        def timed(mode: str) -> tuple[list[float], list[list[str]]]:
            times, ids = [], []
            store.vector_search(NAMESPACE, queries[0], 10, mode=mode)  # type: ignore[arg-type]
            for q in queries:
                t = time.perf_counter()
                hits = store.vector_search(NAMESPACE, q, 10, mode=mode)  # type: ignore[arg-type]
                times.append(time.perf_counter() - t)
                ids.append([n.id for n, _ in hits])
            return times, ids

        exact_t, truth = timed("exact")
        ann_t, approx = timed("ann")
        auto_t, _ = timed("auto")
        recall = float(np.mean([len(set(a) & set(t)) / max(len(t), 1)
                                for a, t in zip(approx, truth, strict=True)]))
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
        stats = store.stats()
        result: dict[str, Any] = {
            "nodes": n_nodes, "dim": dim, "queries": len(queries),
            "ingest": {"s": round(ingest_s, 2), "nodes_per_s": round(n_nodes / ingest_s)},
            "exact": _pct(exact_t), "ann": _pct(ann_t), "auto": _pct(auto_t),
            "text": _pct(text_t), "edges_of": _pct(edge_t),
            "graph_build_s": round(graph_build_s, 2), "recall_at_10": round(recall, 4),
            "ann_build_s": round(ann_build_s, 2), "optimize_s": round(optimize_s, 2),
            "peak_rss_mb": round(_peak_rss_mb()), "disk_mb": round(stats["disk_bytes"] / 2**20, 1),
            "live_table_mb": round(sum(t["bytes"] for t in stats["tables"].values()) / 2**20, 1),
            "fragments": stats["fragments"], "edges": stats["edges"],
            "config": {"nprobes": config.nprobes, "refine_factor": config.refine_factor,
                       "ann_partition_rows": config.ann_partition_rows,
                       "ann_threshold": config.ann_threshold},
            "cpus": os.cpu_count(),
        }
        log.info("bench_scale_done", **{k: v for k, v in result.items() if k != "config"})
        return result
    finally:
        store.close()
