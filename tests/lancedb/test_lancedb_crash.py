"""Crash safety of the LanceDB store under a real ``kill -9``.

A child process (plain `subprocess`, never fork) ingests batches in a loop —
observations, one node per observation citing it, a summary node citing all of
them, edges between them and to earlier nodes, sometimes a full-text search in
the middle of the batch (which pushes the batch to disk early), with
``optimize`` and ANN index builds on a tight schedule — and is killed with
SIGKILL at a random moment. After each kill the store must open and satisfy:

* no commit intent is left behind (recovery ran);
* every stored batch is complete: all 4 observations, their nodes, the summary,
  the edges joining them;
* every node's sources exist in the observation log; every edge's ends exist;
* no primary key appears twice in any table;
* full-text search still works (a restore can drop the FTS index).

The child then resumes where the stored data ends, and is killed again.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import pytest

from labile_lancedb.config import LanceStoreConfig
from labile_lancedb.store import LanceStore

ROOT = Path(__file__).resolve().parents[2]
NAMESPACES = ("a", "b'c")
DIM = 16

CHILD = r'''
import logging, random, sys
import numpy as np
logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
from datetime import UTC, datetime
from types import SimpleNamespace as N
from labile._model import Edge, Node, Observation, edge_id
from labile_lancedb.config import LanceStoreConfig
from labile_lancedb.store import LanceStore

path, seed, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng, nrng = random.Random(seed), np.random.default_rng(seed)
store = LanceStore(LanceStoreConfig(path=path, optimize_every=3, ann_threshold=120,
                                    ann_partition_rows=64), N(embedder=N(name="crash", dim=dim)))
namespaces = ["a", "b'c"]
b = 0
for ns in namespaces:
    for o in store.iter_observations(ns):
        b = max(b, int(o.id.split("-")[0][1:]) + 1)
sys.stdout.write(f"ready {b}\n")  # the handshake with the parent, not a log
sys.stdout.flush()
while True:
    ns = rng.choice(namespaces)
    ids = [f"b{b}-{j}" for j in range(4)]
    with store.batch(ns):
        store.add_observations(ns, [
            Observation(id=i, text=f"batch {b} turn {j} coffee", timestamp=datetime.now(UTC))
            for j, i in enumerate(ids)])
        nodes = [Node(id=f"n-{i}", kind="turn", content=f"turn {i} coffee", sources=(i,),
                      embedding=nrng.standard_normal(dim).astype(np.float32)) for i in ids]
        summary = Node(id=f"s-b{b}", kind="summary", content=f"summary {b}", sources=tuple(ids))
        store.upsert_nodes(ns, [*nodes, summary])
        if rng.random() < 0.5:
            store.text_search(ns, "coffee", 3)
        edges = [Edge(id=edge_id(n.id, "part_of", summary.id), src=n.id, dst=summary.id,
                      predicate="part_of") for n in nodes]
        for near, _ in store.vector_search(ns, nodes[0].embedding, 3):
            if near.id != summary.id:
                edges.append(Edge(id=edge_id(summary.id, "near", near.id), src=summary.id,
                                  dst=near.id, predicate="near", weight=rng.random()))
        store.upsert_edges(ns, edges)
    b += 1
'''


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        str(ROOT / p) for p in ("core", "plugins", "contrib")))


def _intent_left(path: Path) -> bool:
    import lancedb

    meta = lancedb.connect(str(path)).open_table("meta").to_arrow().to_pylist()
    return any((r["key"] == "intent" and r["value"])
               or (r["key"].startswith("ns:") and '"intent": {' in r["value"]) for r in meta)


def _verify(path: Path) -> int:
    """Check every invariant; returns how many batches are stored."""
    store = LanceStore(LanceStoreConfig(path=str(path)),
                       SimpleNamespace(embedder=SimpleNamespace(name="crash", dim=DIM)))
    try:
        assert store._meta_read().get("intent", "") == ""
        assert store._open_intents() == {}
        batches = 0
        for ns in NAMESPACES:
            obs_ids = {o.id for o in store.iter_observations(ns)}
            by_batch: dict[str, set[str]] = defaultdict(set)
            for oid in obs_ids:
                by_batch[oid.split("-")[0]].add(oid)
            nodes = {n.id: n for n in store.iter_nodes(ns)}
            edges = {e.id for e in store.iter_edges(ns)}
            for b, members in by_batch.items():
                assert len(members) == 4, (ns, b, members)  # observations: all or nothing
                assert f"s-{b}" in nodes, (ns, b)
                assert all(f"n-{o}" in nodes for o in members), (ns, b)
                assert all(f"n-{o}|part_of|s-{b}" in edges for o in members), (ns, b)
            for n in nodes.values():
                assert set(n.sources) <= obs_ids, (ns, n.id, n.sources)
            for e in store.iter_edges(ns):
                assert e.src in nodes and e.dst in nodes, (ns, e.id)
            if nodes:
                assert store.text_search(ns, "coffee", 3)
            batches += len(by_batch)
        for name in ("observations", "nodes", "edges"):
            keys = store._tables[name].search().select(["key"]).limit(None).to_arrow()
            assert keys.num_rows == len(set(keys.column("key").to_pylist())), name
        return batches
    finally:
        store.close()


def _crash_loop(path: Path, kills: int, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    recovered = 0
    batches = 0
    for i in range(kills):
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), str(seed * 1000 + i), str(DIM)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        if not ready.startswith("ready"):
            proc.kill()
            _, err = proc.communicate()
            pytest.fail(f"child did not start: {ready!r} {err}")
        time.sleep(rng.uniform(0.1, 1.2))
        if proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"child died on its own (rc {proc.returncode}): {err}")
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        recovered += _intent_left(path)
        batches = _verify(path)
    return batches, recovered


def test_kill_9_during_ingest_leaves_a_consistent_store(tmp_path: Path) -> None:
    batches, _ = _crash_loop(tmp_path / "m", kills=3, seed=1)
    assert batches > 0


@pytest.mark.slow
def test_kill_9_many_times(tmp_path: Path) -> None:
    batches, recovered = _crash_loop(tmp_path / "m", kills=14, seed=2)
    assert batches > 20
    assert recovered >= 1  # at least one kill hit an open transaction and was undone
