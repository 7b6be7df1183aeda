"""Many-workers benchmark of the LanceDB store (``labile bench workers``).

N worker processes (spawned, never forked) share one store, each with its own
namespace, as N servers or ingest workers of one deployment would. Each runs
the same workload in two phases, all workers at once in each phase:

1. **Ingest**: ``batches`` batches of ``batch_units`` units (one observation,
   one node citing it, one edge to the previous node), one commit per batch.
2. **Search**: ``queries`` reads of its namespace, each a vector search plus
   an ``edges_of`` of the hits (the shape of a seeder plus an expander), every
   one preceded by the store's check for other processes' commits.

It also times that check alone (``freshness_ms``: the cost each read pays to
notice other workers' commits; nothing changed meanwhile, so it is the pure
check) and the reload a worker does when it notices one (``reload_ms``).

The same workload runs for 1, 2 and 4 workers against each location given:
a local directory and an object store (``--uri s3://…``, or a moto S3 server
on loopback that the bench starts itself with ``--moto``). The table reports
throughputs and ratios against one worker on the local directory of the same
run, since absolute figures depend on the machine and its load.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import tempfile
import time
from types import SimpleNamespace
from typing import Any, Final

import numpy as np

from labile.plugin import Edge, Node, Observation, edge_id, utcnow

__all__ = ["format_table", "run_workers_bench"]

DIM: Final = 64


def _store(uri: str, options: dict[str, str], env: dict[str, str]) -> Any:
    from labile_lancedb.config import LanceStoreConfig
    from labile_lancedb.store import LanceStore

    config = LanceStoreConfig(path=uri, storage_options=options, storage_options_env=env,
                              lock_timeout_s=600.0)
    return LanceStore(config, SimpleNamespace(embedder=SimpleNamespace(name="bench",
                                                                       dim=DIM)))


def _worker(job: dict[str, Any]) -> dict[str, Any]:
    """One worker: ingest, wait for the others, search; returns its timings."""
    barrier_dir, index = job["barrier"], job["index"]
    store = _store(job["uri"], job["options"], job["env"])
    ns = f"w{index}"
    rng = np.random.default_rng(index)
    units, per = job["batches"] * job["batch_units"], job["batch_units"]
    vecs = rng.standard_normal((units, DIM)).astype(np.float32)
    _arrive(barrier_dir, "start", index, job["workers"])
    t0 = time.perf_counter()
    for b in range(job["batches"]):
        with store.batch(ns):
            ids = [f"u{b * per + j}" for j in range(per)]
            store.add_observations(ns, [Observation(id=i, text=f"unit {i}", timestamp=utcnow())
                                        for i in ids])
            store.upsert_nodes(ns, [Node(id=f"n{i}", kind="fact", content=f"fact {i}",
                                         sources=(i,), embedding=vecs[b * per + j])
                                    for j, i in enumerate(ids)])
            store.upsert_edges(ns, [Edge(id=edge_id(f"n{ids[j - 1]}", "next", f"n{i}"),
                                         src=f"n{ids[j - 1]}", dst=f"n{i}", predicate="next")
                                    for j, i in enumerate(ids) if j])
    ingest_s = time.perf_counter() - t0
    _arrive(barrier_dir, "search", index, job["workers"])
    lat = []
    t1 = time.perf_counter()
    for q in range(job["queries"]):
        t = time.perf_counter()
        hits = store.vector_search(ns, vecs[q % units], 10)
        store.edges_of(ns, [n.id for n, _ in hits])
        lat.append((time.perf_counter() - t) * 1000)
    search_s = time.perf_counter() - t1
    engine = store._engine
    checks = []
    for _ in range(job["queries"]):
        t = time.perf_counter()
        with engine.lock:
            engine.sync_external()
        checks.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter()
    with engine.lock:
        engine._reload(engine.tables.meta_version)
        engine.spaces.forget([ns])  # as when another worker committed to this namespace
        store.count_nodes(ns)
    reload_ms = (time.perf_counter() - t) * 1000
    store.close()
    return {"units": units, "ingest_s": ingest_s, "queries": job["queries"],
            "search_s": search_s, "lat_ms": lat, "freshness_ms": statistics.median(checks),
            "reload_ms": reload_ms}


def _arrive(barrier_dir: str, phase: str, index: int, workers: int) -> None:
    """A file barrier across processes: wait until every worker reached ``phase``."""
    open(os.path.join(barrier_dir, f"{phase}-{index}"), "w").close()
    while sum(f.startswith(f"{phase}-") for f in os.listdir(barrier_dir)) < workers:
        time.sleep(0.005)


def _run(uri: str, options: dict[str, str], env: dict[str, str], workers: int,
         batches: int, batch_units: int, queries: int) -> dict[str, Any]:
    _store(uri, options, env).close()  # create the store before the workers race
    with tempfile.TemporaryDirectory(prefix="labile-bench-") as barrier:
        jobs = [{"uri": uri, "options": options, "env": env, "index": i, "workers": workers,
                 "batches": batches, "batch_units": batch_units, "queries": queries,
                 "barrier": barrier} for i in range(workers)]
        with mp.get_context("spawn").Pool(workers) as pool:
            results = pool.map(_worker, jobs)
    lat = sorted(x for r in results for x in r["lat_ms"])
    return {
        "workers": workers,
        "ingest_units_per_s": sum(r["units"] for r in results)
        / max(r["ingest_s"] for r in results),
        "search_qps": sum(r["queries"] for r in results) / max(r["search_s"] for r in results),
        "query_p50_ms": lat[len(lat) // 2],
        "query_p95_ms": lat[min(len(lat) - 1, int(len(lat) * 0.95))],
        "freshness_ms": statistics.median(r["freshness_ms"] for r in results),
        "reload_ms": statistics.median(r["reload_ms"] for r in results),
    }


def run_workers_bench(locations: dict[str, tuple[str, dict[str, str], dict[str, str]]], *,
                      workers: tuple[int, ...] = (1, 2, 4), batches: int = 20,
                      batch_units: int = 10, queries: int = 200) -> list[dict[str, Any]]:
    """Run the workload for each location (label → uri, options, env) and worker count.

    Each run gets a fresh store (a new subdirectory or prefix). Rows carry
    ``ingest_x`` / ``search_x``: throughput relative to the first row (one worker
    on the first location).
    """
    rows: list[dict[str, Any]] = []
    for label, (base, options, env) in locations.items():
        for n in workers:
            uri = f"{base.rstrip('/')}/run-{n}-{int(time.time() * 1000)}"
            row = _run(uri, options, env, n, batches, batch_units, queries)
            row["location"] = label
            rows.append(row)
    base_row = rows[0]
    for row in rows:
        row["ingest_x"] = row["ingest_units_per_s"] / base_row["ingest_units_per_s"]
        row["search_x"] = row["search_qps"] / base_row["search_qps"]
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    head = ("| location | workers | ingest units/s | ingest × | search q/s | search × | "
            "p50 ms | p95 ms | freshness check ms | reload ms |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n")
    return head + "".join(
        f"| {r['location']} | {r['workers']} | {r['ingest_units_per_s']:.0f} | "
        f"{r['ingest_x']:.2f} | {r['search_qps']:.0f} | {r['search_x']:.2f} | "
        f"{r['query_p50_ms']:.2f} | {r['query_p95_ms']:.2f} | {r['freshness_ms']:.3f} | "
        f"{r['reload_ms']:.1f} |\n" for r in rows)
