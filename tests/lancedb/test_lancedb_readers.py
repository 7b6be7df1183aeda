"""The LanceDB store with other readers: connections and processes that see each commit,
one freshness check per `reading` block, an opener that leaves a live writer's intent alone,
and reader threads beside a writing batch."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from lancedb_helpers import DIM, child_env, edge, node, obs, open_store, rvec

from labile._errors import StoreError
from labile_lancedb.store import LanceStore
from store_checks import check_reader_never_sees_an_open_batch


def test_other_connections_see_commits(tmp_path: Path) -> None:
    writer = open_store(tmp_path / "m")
    reader = open_store(tmp_path / "m")
    assert reader.count_nodes("u") == 0
    writer.upsert_nodes("u", [node("a", content="hello coffee")])
    writer.add_observations("u", [obs("o1")])
    assert reader.count_nodes("u") == 1
    assert reader.existing_observation_ids("u", ["o1"]) == {"o1"}
    assert [n.id for n, _ in reader.text_search("u", "coffee", 3)] == ["a"]
    slow = open_store(tmp_path / "m", read_consistency_s=3600.0)
    assert slow.count_nodes("u") == 1
    writer.upsert_nodes("u", [node("b")])
    assert slow.count_nodes("u") == 1  # allowed to be stale for an hour
    assert reader.count_nodes("u") == 2
    for s in (writer, reader, slow):
        s.close()

def test_reading_checks_for_other_commits_once_on_entry(tmp_path: Path) -> None:
    writer = open_store(tmp_path / "m")
    reader = open_store(tmp_path / "m")
    writer.upsert_nodes("u", [node("a")])
    checks = 0
    real = reader._engine.sync_external

    def counting() -> None:
        nonlocal checks
        checks += 1
        real()

    reader._engine.sync_external = counting  # type: ignore[method-assign]
    with reader.reading("u"):
        assert reader.count_nodes("u") == 1  # the commit before entry is seen
        for _ in range(5):
            reader.get_nodes("u", ["a"])
            reader.edges_of("u", ["a"])
    assert checks == 1
    writer.upsert_nodes("u", [node("b")])
    assert reader.count_nodes("u") == 2  # outside the block every read checks again
    assert checks == 2
    with pytest.raises(StoreError, match="namespace"), reader.reading(""):
        pass
    for s in (writer, reader):
        s.close()

def test_another_process_sees_commits(tmp_path: Path) -> None:
    path = tmp_path / "m"
    writer = open_store(path)
    writer.upsert_nodes("u", [node("a")])
    code = (
        "import logging, sys, time\n"
        "logging.basicConfig(stream=sys.stderr, level=logging.DEBUG)\n"
        "from types import SimpleNamespace as N\n"
        "from labile_lancedb.store import LanceStore\n"
        "from labile_lancedb.config import LanceStoreConfig\n"
        f"s = LanceStore(LanceStoreConfig(path=sys.argv[1]), N(embedder=N(name='test-emb', "
        f"dim={DIM})))\n"
        "sys.stdout.write(f'{s.count_nodes(\"u\")}\\n'); sys.stdout.flush()\n"
        "deadline = time.time() + 30\n"
        "while s.count_nodes('u') < 2 and time.time() < deadline:\n"
        "    time.sleep(0.05)\n"
        "sys.stdout.write(f'{s.count_nodes(\"u\")}\\n')\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=child_env())
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()
    writer.upsert_nodes("u", [node("b")])
    out, err = proc.communicate(timeout=60)
    writer.close()
    assert (first, out.strip()) == ("1", "2"), err

def test_opening_during_a_live_writers_transaction_does_not_recover(tmp_path: Path) -> None:
    """An intent whose writer still holds the lock is not abandoned: leave it alone."""
    writer = open_store(tmp_path / "m")
    writer.upsert_nodes("u", [node("a", content="coffee a")])
    with writer.batch("u"):
        writer.upsert_nodes("u", [node("b", content="coffee b")])
        writer.text_search("u", "coffee", 5)  # flushes: intent recorded, lock held
        assert writer._open_intents()
        t0 = time.perf_counter()
        reader = open_store(tmp_path / "m")
        assert time.perf_counter() - t0 < 10
        assert reader._open_intents()  # not rolled back under the writer's feet
    assert writer._open_intents() == {}
    assert {n.id for n in reader.iter_nodes("u")} == {"a", "b"}
    writer.close()
    reader.close()

def test_reader_threads_run_beside_a_writing_batch(store: LanceStore) -> None:

    rng = np.random.default_rng(9)
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                store.count_nodes("u")
                store.vector_search("u", rvec(rng)[0], 3)
                store.text_search("u", "coffee", 3)
                store.edges_of("u", ["n0"], direction="both")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for b in range(8):
            with store.batch("u"):
                store.upsert_nodes("u", [node(f"n{b}", content="coffee", embedding=rvec(rng)[0])])
                if b:
                    store.upsert_edges("u", [edge(f"n{b - 1}", f"n{b}")])
                store.text_search("u", "coffee", 3)  # flushes mid-batch in this thread
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    assert not errors, errors
    assert store.count_nodes("u") == 8 and store.count_edges("u") == 7


def test_a_local_reader_never_sees_a_batch_before_its_commit(tmp_path: Path) -> None:
    """A batch written out to the tables early (a full-text search inside it flushes the
    buffer) stays invisible to another connection until the batch commits: a local reader,
    like one on an object store, reads the table versions the last commit marker names."""
    writer = open_store(tmp_path / "m")
    with writer.batch("u"):
        writer.add_observations("u", [obs("o0")])
        writer.upsert_nodes("u", [node("n0", content="espresso before")])
    reader = open_store(tmp_path / "m")
    check_reader_never_sees_an_open_batch(writer, reader, obs, node)
    writer.close()
    reader.close()
