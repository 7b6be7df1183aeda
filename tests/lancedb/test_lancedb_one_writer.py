"""One writer per store across processes (#14 defect 1).

Two real writer processes add turns to one store path at the same time, through
`Memory` with the ``realm`` preset (the one whose entity and episode nodes used to
be duplicated). The store's write lock is held from the read of the state a batch
depends on to its commit, so:

* the same 100 ids added by both end with exactly the rows of one writer's run;
* disjoint ids never duplicate an entity or episode node;
* a reader process keeps reading while the writers hold the lock;
* a writer that cannot get the lock within ``lock_timeout_s`` fails with
  `StoreBusyError` naming the lock file and the holder, and writes nothing.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest
from lancedb_helpers import child_env, node, open_store, run_py

from labile_lancedb._lock import StoreBusyError

#: Adds turns ``[lo, hi)`` of a synthetic conversation in batches of ``step``,
#: after a start barrier (a file), and prints the store's counts.
_WRITER = r"""
import json, sys, time
from pathlib import Path
from datetime import datetime, timedelta, UTC
from labile import Memory, Observation

path, go = sys.argv[1], sys.argv[5]
lo, hi, step = (int(a) for a in sys.argv[2:5])
names = ["Alice", "Bob", "Carol", "Dmitri", "Erin"]
places = ["Paris", "Lisbon", "Oslo", "Kyoto"]
t0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
turns = [Observation(id=f"t{i:03d}", text=f"{names[i % 5]} told {names[(i + 2) % 5]} about "
                     f"the trip to {places[i % 4]} and the {('red', 'blue', 'green')[i % 3]} "
                     f"bicycle number {i}.", speaker=names[i % 5],
                     timestamp=t0 + timedelta(minutes=7 * i),
                     metadata={"session": f"s{i // 25}"})
         for i in range(lo, hi)]
with Memory.open(preset="realm", path=path) as mem:
    while go != "-" and not Path(go).exists():
        time.sleep(0.01)
    for i in range(0, len(turns), step):
        mem.add(turns[i:i + step], namespace="conv")
    st = mem.store.stats("conv")
    print(json.dumps({k: st[k] for k in ("observations", "nodes", "edges")}))
"""

#: Reads the store in a loop until a stop file appears; prints reads and the slowest one.
_READER = r"""
import json, sys, time
from pathlib import Path
from labile import Memory

path, stop = sys.argv[1], sys.argv[2]
reads, worst = 0, 0.0
with Memory.open(path=path, create=False) as mem:
    while not Path(stop).exists():
        t = time.perf_counter()
        mem.store.count_nodes("conv")
        mem.search("trip to Paris", namespace="conv", k=5)
        worst = max(worst, time.perf_counter() - t)
        reads += 1
print(json.dumps({"reads": reads, "worst_s": worst}))
"""


def _seed_store(path: Path) -> None:
    """Create the store (one turn outside the measured range) so both writers open it."""
    out = run_py(_WRITER, str(path), "900", "901", "1", "-", timeout=240)
    assert out.returncode == 0, out.stderr


def _writers(path: Path, ranges: list[tuple[int, int]], go: Path,
             step: int = 10) -> list[subprocess.Popen[str]]:
    return [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(lo), str(hi),
                              str(step), str(go)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=child_env())
            for lo, hi in ranges]


def _finish(procs: list[subprocess.Popen[str]]) -> list[dict[str, int]]:
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        assert p.returncode == 0, stderr[-3000:]
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def _raw_counts(path: Path) -> dict[str, tuple[int, int]]:
    """Rows and distinct keys of each data table, read from LanceDB itself (the store's
    caches key records by id, so they would hide a row stored twice)."""
    import lancedb

    db = lancedb.connect(str(path))
    out = {}
    for name in ("observations", "nodes", "edges"):
        keys = db.open_table(name).search().select(["key"]).limit(None).to_arrow()
        out[name] = (keys.num_rows, len(set(keys.column("key").to_pylist())))
    return out


def _duplicate_contents(path: Path) -> dict[str, int]:
    """Entity and episode nodes whose kind and content appear more than once."""
    from labile import Memory

    with Memory.open(path=str(path), create=False) as mem:
        counts = collections.Counter(
            f"{n.kind}:{n.content}" for n in mem.store.iter_nodes("conv")
            if n.kind in ("entity", "episode"))
    return {k: c for k, c in counts.items() if c > 1}


def _single_writer_counts(path: Path, lo: int, hi: int) -> dict[str, tuple[int, int]]:
    _seed_store(path)
    go = path.parent / f"{path.name}.go"
    go.touch()
    _finish(_writers(path, [(lo, hi)], go))
    return _raw_counts(path)


@pytest.mark.parametrize("turns", [30, pytest.param(100, marks=pytest.mark.slow)])
def test_two_writers_of_the_same_ids_end_with_one_writers_counts(tmp_path: Path,
                                                                  turns: int) -> None:
    """Both processes add the same turns at once (100 in the slow run, as in the issue; 15,
    three batches each, in the default run); a reader process reads all along."""
    single = _single_writer_counts(tmp_path / "single", 0, turns)
    path, go, stop = tmp_path / "shared", tmp_path / "go", tmp_path / "stop"
    _seed_store(path)
    writers = _writers(path, [(0, turns), (0, turns)], go)
    reader = subprocess.Popen([sys.executable, "-c", _READER, str(path), str(stop)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=child_env())
    go.touch()
    results = _finish(writers)
    stop.touch()
    rout, rerr = reader.communicate(timeout=300)
    assert reader.returncode == 0, rerr[-3000:]
    # Exactly the rows one writer leaves, and no key stored twice.
    assert _raw_counts(path) == single
    assert max(results, key=lambda r: r["nodes"]) == {k: v[1] for k, v in single.items()}
    assert _duplicate_contents(path) == {}
    assert json.loads(rout)["reads"] > 0  # the reader was never locked out


@pytest.mark.parametrize("half", [20, pytest.param(50, marks=pytest.mark.slow)])
def test_two_writers_of_disjoint_ids_share_entities(tmp_path: Path, half: int) -> None:
    """Two halves of one conversation, written at once in batches of 5 (20 turns each in
    the default run, 50 under slow): no entity or episode node exists twice, and every
    turn is stored once."""
    path, go = tmp_path / "shared", tmp_path / "go"
    _seed_store(path)
    writers = _writers(path, [(0, half), (half, 2 * half)], go, step=5)
    go.touch()
    _finish(writers)
    assert _duplicate_contents(path) == {}
    raw = _raw_counts(path)
    assert all(rows == keys for rows, keys in raw.values()), raw
    assert raw["observations"] == (2 * half + 1, 2 * half + 1)


def test_a_writer_that_cannot_get_the_lock_fails_naming_the_holder(tmp_path: Path) -> None:
    holder = open_store(tmp_path / "m")
    waiter = open_store(tmp_path / "m", lock_timeout_s=0.2)
    with holder.batch("u"):
        holder.upsert_nodes("u", [node("a")])
        with (pytest.raises(StoreBusyError, match=r"\.labile-ns/") as info,
              waiter.batch("u")):
            waiter.upsert_nodes("u", [node("b")])
        assert "lock_timeout_s" in str(info.value)
        assert f"pid {__import__('os').getpid()}" in str(info.value)
        # Readers are never blocked by the writer's lock.
        assert waiter.count_nodes("u") == 0
    assert waiter.count_nodes("u") == 1
    assert [n.id for n in waiter.iter_nodes("u")] == ["a"]
    holder.close()
    waiter.close()
