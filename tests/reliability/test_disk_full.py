"""A full disk (issue #27, item 4): reading still works, a removal that committed is
reported as done, and every engine error reaches the caller as `StoreError`.

Two ways to make writes fail without root: a child process whose file-size limit
(``RLIMIT_FSIZE``) refuses every byte written past it, as a full disk refuses
them (LanceDB's own writes included); and, in process, LanceDB calls replaced by
ones raising ``OSError(ENOSPC)``.
"""

from __future__ import annotations

import errno
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
from reliability_helpers import turns

from labile import HistoryNotErasedWarning, Limits, Memory, StoreError
from labile_lancedb import _erase
from labile_lancedb._tables import LanceTables

NS = "u"


def _table(path: Path) -> dict[str, Any]:
    return {"preset": "bm25", "embedder": {"type": "hashing"}, "store": {"path": str(path)}}


def _no_space(*_: Any, **__: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def _ids(memory: Memory, namespace: str = NS) -> list[str]:
    return [o.id for o in memory.list(namespace, limit=1000).items]


#: A child that may write at most ``limit`` bytes per file, then runs ``code``.
LIMITED = r'''
import json, resource, signal, sys, warnings
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
table, limit = json.loads(sys.argv[1]), int(sys.argv[2])
from labile import Memory
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
'''


def _limited(table: dict[str, Any], limit: int, code: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", LIMITED + code, json.dumps(table), str(limit)],
                          capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def test_a_store_opens_to_read_when_nothing_can_be_written(tmp_path: Path) -> None:
    table = _table(tmp_path / "s")
    with Memory.open(table) as memory:
        memory.add(turns(0, 4), namespace=NS)
        # A writer that died mid-batch leaves an intent for the next opener to undo
        # (a write) before it reads.
        store: Any = memory.store
        inner = getattr(store, "inner", store)
        batch = inner.batch(NS)
        batch.__enter__()
        inner.add_observations(NS, turns(4, 2))
        inner._engine.flush_if_owner(NS)
        inner._engine._locks.close()  # its locks die with it
        inner._engine.txn = None
    out = _limited(table, 0, r'''
with Memory.open(table, create=False) as m:
    hits = m.search("Where did Ana move?", namespace="u", k=3).hits
    print(json.dumps({"ids": [o.id for o in m.list("u").items], "hits": len(hits)}))
''')
    assert out == {"ids": [o.id for o in turns(0, 4)], "hits": 3}
    with Memory.open(table) as memory:  # with room again, the next writer undoes it
        memory.add(turns(6, 1), namespace=NS)
        assert _ids(memory) == [o.id for o in [*turns(0, 4), *turns(6, 1)]]


def test_forget_with_erase_on_a_nearly_full_disk_reports_the_removal_done(
        tmp_path: Path) -> None:
    table = _table(tmp_path / "s")
    # 200,000 characters of noise: over the default per-observation limit, so raised here.
    with Memory.open(table, limits=Limits(observation_chars=300_000)) as memory:
        memory.add(turns(0, 3), namespace=NS)
        big = turns(3, 1)[0]
        noise = random.Random(0).randbytes(100_000).hex()  # does not compress below the limit
        memory.add([attrs.evolve(big, id="big", text=noise)], namespace=NS)
    # Deletion files are small and fit; rewriting the tables for the erase does not.
    out = _limited(table, 64_000, r'''
with Memory.open(table) as m, warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    counts = m.forget("u", ["t0"], erase=True)
    print(json.dumps({"counts": counts, "ids": [o.id for o in m.list("u").items],
                      "warned": [type(w.message).__name__ for w in caught]}))
''')
    assert out["counts"]["observations"] == 1
    assert out["counts"]["history_erased"] is False
    assert "HistoryNotErasedWarning" in out["warned"]
    assert "t0" not in out["ids"] and "t1" in out["ids"]
    with Memory.open(table) as memory:  # the removal stands; the erase can be finished
        assert "t0" not in _ids(memory)
        memory.store.erase_history()


def test_purge_with_erase_reports_the_purge_done_when_the_erase_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Memory.open(_table(tmp_path / "s")) as memory:
        memory.add(turns(0, 3), namespace=NS)
        memory.add(turns(0, 2), namespace="other")
        monkeypatch.setattr(_erase, "_cleanup", _no_space)
        with pytest.warns(HistoryNotErasedWarning, match="removal is committed"):
            memory.purge(NS, erase=True)
        monkeypatch.undo()
        assert _ids(memory) == [] and len(_ids(memory, "other")) == 2


@pytest.mark.parametrize("call", ["forget", "purge", "consolidate"])
def test_engine_errors_reach_the_caller_as_store_errors_and_lose_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str) -> None:
    with Memory.open(_table(tmp_path / "s")) as memory:
        memory.add(turns(0, 3), namespace=NS)
        name = "optimize" if call == "consolidate" else "delete"
        real = getattr(LanceTables, name)
        failed: list[bool] = []

        def once(*args: Any, **kwargs: Any) -> Any:  # the disk fills, then frees up
            if not failed:
                failed.append(True)
                _no_space()
            return real(*args, **kwargs)

        monkeypatch.setattr(LanceTables, name, once)
        with pytest.raises(StoreError, match="No space left on device"):
            if call == "forget":
                memory.forget(NS, ["t1"])
            elif call == "purge":
                memory.purge(NS)
            else:
                memory.consolidate(namespace=NS)
        monkeypatch.undo()
        assert _ids(memory) == [o.id for o in turns(0, 3)]
        memory.forget(NS, ["t1"])  # the store is still usable
        assert "t1" not in _ids(memory)
