"""Writer processes on one ``s3://`` store (moto on loopback): the leases at work.

* Two processes writing the same ids to one namespace end with exact counts.
* Two processes writing to different namespaces write at the same time: some
  of their batches (each holding its namespace's lease, its rows already in
  LanceDB under an intent) overlap in time, on ``s3://`` and on a local directory.
* ``kill -9`` of a writer at random moments: every acknowledged batch is
  present, a reader opening right after the kill (the dead writer's lease still
  looks held) sees only whole batches, and the next writer takes the stale lease
  once it expires and undoes the dead writer's half batch.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from objectstore_helpers import S3Server, child_env, deps, open_s3_store

from labile_lancedb.config import LanceStoreConfig
from labile_lancedb.store import LanceStore
from store_checks import raw_namespace_rows

DIM = 16
#: The crash trials' lease: short, so a killed writer's lease expires quickly.
TTL_S = 2.0
#: The racing writers' lease: long enough that a heartbeat delayed by a loaded machine
#: never lets the other writer take over from a live one.
RACE_TTL_S = 20.0

#: Writes batches of 4 observations, one node each, a summary node and edges, in
#: namespace ``ns``; ids come from ``ids`` (a range) in chunks, skipping stored ones.
#: Prints ``ready`` once open and ``acked <batch> <t> <t0> <t1>`` after each commit
#: returns, where ``[t0, t1]`` is a span inside the batch (its lock held throughout):
#: with ``hold_s`` > 0 the batch writes its rows out to LanceDB (a full-text search
#: flushes the buffer under the intent) and holds for ``hold_s`` before committing.
#: A local ``path`` (no storage options) works the same.
CHILD = r'''
import json, sys, time
import numpy as np
from datetime import UTC, datetime
from types import SimpleNamespace as N
from labile._model import Edge, Node, Observation, edge_id
from labile_lancedb.config import LanceStoreConfig
from labile_lancedb.store import LanceStore

uri, opts, ns = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
lo, hi, seed = (int(a) for a in sys.argv[4:7])
env = ({"aws_access_key_id": "LABILE_TEST_S3_KEY",
        "aws_secret_access_key": "LABILE_TEST_S3_SECRET"} if opts else {})
hold = float(sys.argv[9]) if len(sys.argv) > 9 else 0.0
store = LanceStore(LanceStoreConfig(path=uri, storage_options=opts, storage_options_env=env,
                                    lease_ttl_s=float(sys.argv[7]), lock_timeout_s=120,
                                    optimize_every=4),
                   N(embedder=N(name="test-emb", dim=16)))
rng = np.random.default_rng(seed)
print("ready", flush=True)
go = sys.argv[8]
while go != "-" and not __import__("os").path.exists(go):
    time.sleep(0.01)
for b in range(lo, hi):
    ids = [f"b{b}-{j}" for j in range(4)]
    with store.batch(ns):
        t0 = time.time()
        new = [i for i in ids if i not in store.existing_observation_ids(ns, ids)]
        if new:
            store.add_observations(ns, [Observation(id=i, text=f"batch {b} turn {i} coffee",
                                                    timestamp=datetime.now(UTC)) for i in new])
            nodes = [Node(id=f"n-{i}", kind="turn", content=f"turn {i} coffee", sources=(i,),
                          embedding=rng.standard_normal(16).astype(np.float32)) for i in new]
            summary = Node(id=f"s-b{b}", kind="summary", content=f"summary {b}",
                           sources=tuple(new))
            store.upsert_nodes(ns, [*nodes, summary])
            store.upsert_edges(ns, [Edge(id=edge_id(n.id, "part_of", summary.id), src=n.id,
                                         dst=summary.id, predicate="part_of") for n in nodes])
        if hold:
            store.text_search(ns, "coffee", 1)  # writes the buffer out, under the intent
            time.sleep(hold)
        t1 = time.time()
    print("acked", b, time.time(), t0, t1, flush=True)
store.close()
'''


def _spawn(server: S3Server | None, uri: str, ns: str, lo: int, hi: int, seed: int,
           go: str = "-", ttl_s: float = RACE_TTL_S,
           hold_s: float = 0.0) -> subprocess.Popen[str]:
    """A writer child (``server=None``: ``uri`` is a local directory); with ``go``, it
    starts writing once that file exists."""
    opts = server.options() if server is not None else {}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, uri, json.dumps(opts), ns, str(lo), str(hi),
         str(seed), str(ttl_s), go, str(hold_s)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())


def _acks(out: str) -> list[tuple[int, float]]:
    return [(int(p[1]), float(p[2])) for p in (ln.split() for ln in out.splitlines())
            if p and p[0] == "acked"]


def _held(out: str) -> list[tuple[float, float]]:
    """The ``[t0, t1]`` spans inside each batch (its lock held throughout)."""
    return [(float(p[3]), float(p[4])) for p in (ln.split() for ln in out.splitlines())
            if p and p[0] == "acked"]


def _race_namespaces(server: S3Server | None, uri: str, tmp_path: Path, batches: int,
                     hold_s: float) -> list[list[tuple[float, float]]]:
    """Two writers, of namespaces ``a`` and ``b``, started together; their held spans."""
    go = tmp_path / "go"
    procs = [_spawn(server, uri, ns, 0, batches, seed, str(go), hold_s=hold_s)
             for ns, seed in (("a", 1), ("b", 2))]
    for p in procs:
        assert p.stdout is not None
        line = p.stdout.readline()
        assert line.startswith("ready"), (line, p.stderr.read() if p.stderr else "")
    go.touch()
    spans = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        spans.append(_held(out))
    assert [len(s) for s in spans] == [batches, batches]
    return spans


def _overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    """The longest time both writers were inside a batch at once (0: never)."""
    return max((min(a1, b1) - max(a0, b0) for a0, a1 in a for b0, b1 in b), default=0.0)


def _verify(server: S3Server, uri: str, namespaces: tuple[str, ...]) -> dict[str, set[str]]:
    """Open a store and check that every stored batch is whole; returns batches by ns
    (and, under ``""``, ``{"intent"}`` if a dead writer's intent was still there)."""
    store = open_s3_store(server, uri, lease_ttl_s=TTL_S)
    try:
        intent = store._open_intents()
        found: dict[str, set[str]] = {"": {"intent"} if intent else set()}
        for ns in namespaces:
            obs_ids = {o.id for o in store.iter_observations(ns)}
            by_batch: dict[str, set[str]] = defaultdict(set)
            for oid in obs_ids:
                by_batch[oid.split("-")[0]].add(oid)
            nodes = {n.id for n in store.iter_nodes(ns)}
            edges = {e.id for e in store.iter_edges(ns)}
            for b, members in by_batch.items():
                assert len(members) == 4, (ns, b, members)
                assert f"s-{b}" in nodes, (ns, b)
                assert all(f"n-{o}" in nodes for o in members), (ns, b)
                assert all(f"n-{o}|part_of|s-{b}" in edges for o in members), (ns, b)
            assert len(nodes) == 5 * len(by_batch), ns  # no node without its batch
            assert len(edges) == 4 * len(by_batch), ns
            found[ns] = set(by_batch)
        for name in ("observations", "nodes", "edges"):
            keys = store._tables[name].search().select(["key"]).limit(None).to_arrow()
            assert keys.num_rows == len(set(keys.column("key").to_pylist())), name
        return found
    finally:
        store.close()


def test_two_writers_of_the_same_ids_end_with_exact_counts(s3_server: S3Server, s3_uri: str,
                                                           tmp_path: Path) -> None:
    open_s3_store(s3_server, s3_uri).close()  # create the store before the race
    go = tmp_path / "go"
    procs = [_spawn(s3_server, s3_uri, "conv", 0, 4, seed, str(go)) for seed in (1, 2)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().startswith("ready")
    go.touch()
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
    found = _verify(s3_server, s3_uri, ("conv",))
    assert found["conv"] == {f"b{b}" for b in range(4)}


def test_writers_of_different_namespaces_both_progress(s3_server: S3Server, s3_uri: str,
                                                       tmp_path: Path) -> None:
    """Each batch writes its rows to LanceDB under its intent, then holds its lease for
    a while: with one lease per namespace the two writers' batches overlap in time (with
    one store-wide lease, as before, their spans could never intersect)."""
    open_s3_store(s3_server, s3_uri).close()
    a, b = _race_namespaces(s3_server, s3_uri, tmp_path, batches=2, hold_s=1.0)
    assert _overlap(a, b) > 0.0, (a, b)
    found = _verify(s3_server, s3_uri, ("a", "b"))
    assert len(found["a"]) == len(found["b"]) == 2


def test_writers_of_different_namespaces_overlap_on_a_local_directory(tmp_path: Path) -> None:
    """The same on a local directory: one ``flock`` per namespace, the store lock shared."""
    path = tmp_path / "m"
    _local_store(path).close()
    a, b = _race_namespaces(None, str(path), tmp_path, batches=2, hold_s=0.5)
    assert _overlap(a, b) > 0.0, (a, b)
    store = _local_store(path)
    try:
        for ns in ("a", "b"):
            assert len(list(store.iter_observations(ns))) == 8
            assert store.count_nodes(ns) == 10 and store.count_edges(ns) == 8
        assert store._open_intents() == {}
    finally:
        store.close()


def _local_store(path: Path) -> LanceStore:
    return LanceStore(LanceStoreConfig(path=str(path)), deps())


def _first_ack(proc: subprocess.Popen[str], timeout_s: float) -> str:
    """Wait for the child's first ``acked`` line; returns it (it is consumed here)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
    return proc.stdout.readline() if ready else ""


def _crash_trials(server: S3Server, uri: str, trials: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    acked: set[str] = set()
    tally = {"trials": 0, "acked_batches": 0, "open_intents_seen": 0}
    next_batch = 0
    for trial in range(trials):
        proc = _spawn(server, uri, "a", next_batch, next_batch + 10_000, seed * 1000 + trial,
                      ttl_s=TTL_S)
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        assert ready.startswith("ready"), (ready, proc.stderr.read() if proc.stderr else "")
        early = ""
        if rng.random() < 0.5:
            # Half the kills land while the writer waits for the stale lease or
            # recovers; the other half once it is committing batches.
            time.sleep(rng.uniform(0.0, TTL_S + 2.0))
        else:
            early = _first_ack(proc, timeout_s=120.0)
            time.sleep(rng.uniform(0.0, 1.5))
        if proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"writer died on its own (rc {proc.returncode}): {err[-3000:]}")
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        out = early + out
        batches = {f"b{b}" for b, _ in _acks(out)}
        acked |= batches
        # A reader right after the kill: the dead writer's lease may look held and
        # its intent still be there; it must see whole batches, every acked one.
        view = _verify(server, uri, ("a",))
        found = view["a"]
        tally["open_intents_seen"] += bool(view[""])
        assert acked <= found, sorted(acked - found)
        next_batch = max((int(b[1:]) for b in found), default=-1) + 1
        tally["trials"] += 1
    tally["acked_batches"] = len(acked)
    # The next writer takes the stale lease (after at most TTL_S) and proceeds.
    t0 = time.monotonic()
    proc = _spawn(server, uri, "a", next_batch, next_batch + 1, seed, ttl_s=TTL_S)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    assert _acks(out), "the next writer made no progress"
    tally["last_writer_s"] = int(time.monotonic() - t0)
    assert _verify(server, uri, ("a",))["a"] >= acked
    return tally


def test_kill_9_writers_on_s3(s3_server: S3Server, s3_uri: str) -> None:
    tally = _crash_trials(s3_server, s3_uri, trials=2, seed=1)
    assert tally["trials"] == 2


@pytest.mark.slow
def test_kill_9_writers_on_s3_many_times(s3_server: S3Server, s3_uri: str) -> None:
    tally = _crash_trials(s3_server, s3_uri, trials=50, seed=2)
    sys.stderr.write(f"s3 crash trials: {tally}\n")
    assert tally["acked_batches"] >= 20
    assert tally["open_intents_seen"] >= 1  # some kill hit an open batch, later undone


def _raw_db(server: S3Server | None, uri: str) -> Any:
    """A plain LanceDB connection (no labile store is opened, so nothing is recovered)."""
    import lancedb

    opts = ({**server.options(), "aws_access_key_id": "testing",
             "aws_secret_access_key": "testing"} if server is not None else None)
    return lancedb.connect(uri, storage_options=opts)


def _raw_intents(server: S3Server | None, uri: str) -> set[str]:
    """The namespaces whose ``meta`` row shows an open intent."""
    rows = _raw_db(server, uri).open_table("meta").to_arrow().to_pylist()
    return {r["key"][3:] for r in rows
            if r["key"].startswith("ns:") and json.loads(r["value"]).get("intent")}


def _raw_rows(server: S3Server | None, uri: str, ns: str) -> dict[str, list[str]]:
    """Every row of namespace ``ns`` in each data table at its newest version, read
    with LanceDB directly."""
    return raw_namespace_rows(_raw_db(server, uri), ns)


def _parallel_crash_trials(server: S3Server | None, uri: str, trials: int,
                           seed: int) -> dict[str, int]:
    """Writers of ``a`` and ``b`` run side by side; ``a`` is killed by ``kill -9``, most
    often inside a batch whose rows are already in LanceDB; ``b`` finishes its batches.
    Then a store is opened (which undoes ``a``'s half batch, its lock being free)."""
    rng = random.Random(seed)
    hold_s = 0.4
    acked: dict[str, set[str]] = {"a": set(), "b": set()}
    start = {"a": 0, "b": 0}
    tally = {"trials": 0, "open_intents": 0}
    opener = ((lambda: open_s3_store(server, uri, lease_ttl_s=TTL_S)) if server is not None
              else (lambda: _local_store(Path(uri))))
    opener().close()
    for trial in range(trials):
        pa = _spawn(server, uri, "a", start["a"], start["a"] + 10_000, seed * 100 + trial,
                    ttl_s=TTL_S, hold_s=hold_s)
        pb = _spawn(server, uri, "b", start["b"], start["b"] + 3, seed * 100 + trial + 50,
                    ttl_s=TTL_S, hold_s=hold_s)
        for p in (pa, pb):
            assert p.stdout is not None
            line = p.stdout.readline()
            assert line.startswith("ready"), (line, p.stderr.read() if p.stderr else "")
        early = _first_ack(pa, timeout_s=120.0)
        time.sleep(rng.uniform(0.0, hold_s + 0.3))
        if pa.poll() is not None:
            pytest.fail(f"writer a died on its own: {pa.communicate()[1][-3000:]}")
        os.kill(pa.pid, signal.SIGKILL)
        # read(), not communicate(): the text buffer may hold lines readline() read ahead
        assert pa.stdout is not None and pb.stdout is not None and pb.stderr is not None
        out_a = pa.stdout.read()
        pa.wait()
        out_b, err_b = pb.stdout.read(), pb.stderr.read()
        assert pb.wait(timeout=600) == 0, err_b[-3000:]
        for f in (pa.stdout, pa.stderr, pb.stdout, pb.stderr):
            if f is not None:
                f.close()
        acked["a"] |= {f"b{b}" for b, _ in _acks(early + out_a)}
        acked["b"] |= {f"b{b}" for b, _ in _acks(out_b)}
        b_before = _raw_rows(server, uri, "b")
        left = _raw_intents(server, uri)
        assert left <= {"a"}  # b finished: only the killed writer can leave an intent
        tally["open_intents"] += bool(left)
        store = opener()  # undoes a's half batch, the kill left one and a's lock is free
        try:
            if server is None:  # a lease looks held until it expires: undone later
                assert store._open_intents() == {}
        finally:
            store.close()
        assert _raw_rows(server, uri, "b") == b_before  # the undo never touched b
        found = (_verify(server, uri, ("a", "b")) if server is not None
                 else _verify_local(Path(uri), ("a", "b")))
        for ns in ("a", "b"):  # every acked batch, only whole batches (checked in _verify)
            assert acked[ns] <= found[ns], (ns, sorted(acked[ns] - found[ns]))
            start[ns] = max((int(b[1:]) for b in found[ns]), default=-1) + 1
        tally["trials"] += 1
    tally.update(acked_a=len(acked["a"]), acked_b=len(acked["b"]))
    return tally


def _verify_local(path: Path, namespaces: tuple[str, ...]) -> dict[str, set[str]]:
    """`_verify` for a local directory: whole batches only, no open intent left."""
    store = _local_store(path)
    try:
        assert store._open_intents() == {}
        found: dict[str, set[str]] = {}
        for ns in namespaces:
            by_batch: dict[str, set[str]] = defaultdict(set)
            for o in store.iter_observations(ns):
                by_batch[o.id.split("-")[0]].add(o.id)
            nodes = {n.id for n in store.iter_nodes(ns)}
            edges = {e.id for e in store.iter_edges(ns)}
            for b, members in by_batch.items():
                assert len(members) == 4 and f"s-{b}" in nodes, (ns, b, members)
                assert all(f"n-{o}|part_of|s-{b}" in edges for o in members), (ns, b)
            assert (len(nodes), len(edges)) == (5 * len(by_batch), 4 * len(by_batch)), ns
            found[ns] = set(by_batch)
        return found
    finally:
        store.close()


def test_kill_9_one_of_two_namespace_writers_on_a_local_directory(tmp_path: Path) -> None:
    tally = _parallel_crash_trials(None, str(tmp_path / "m"), trials=1, seed=3)
    assert tally["trials"] == 1 and tally["acked_b"] == 3


@pytest.mark.slow
def test_kill_9_one_of_two_namespace_writers_many_times(tmp_path: Path) -> None:
    tally = _parallel_crash_trials(None, str(tmp_path / "m"), trials=12, seed=4)
    sys.stderr.write(f"local parallel crash trials: {tally}\n")
    assert tally["acked_b"] == 36 and tally["acked_a"] >= 12
    assert tally["open_intents"] >= 1  # some kill hit a batch already in LanceDB


@pytest.mark.slow
def test_kill_9_one_of_two_namespace_writers_on_s3(s3_server: S3Server, s3_uri: str) -> None:
    tally = _parallel_crash_trials(s3_server, s3_uri, trials=4, seed=5)
    sys.stderr.write(f"s3 parallel crash trials: {tally}\n")
    assert tally["acked_b"] == 12 and tally["acked_a"] >= 4
