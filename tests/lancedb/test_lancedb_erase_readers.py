"""Readers in one process while another erases history (issue #27, item 3).

The eraser deletes the table versions a reader may be pinned to or reading
from; every read must then retry on the new versions (and return the right
rows) or raise `StoreError`, never LanceDB's raw ``Version N no longer exists``
/ ``Not found``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lancedb_helpers import child_env, node, obs, open_store, rvec

from labile.plugin import StoreError

#: The eraser: adds and deletes rows of its own namespace, then erases, ``rounds`` times.
ERASER = r'''
import sys
from datetime import UTC, datetime
from types import SimpleNamespace as N
from labile._model import Observation
from labile_lancedb.config import LanceStoreConfig
from labile_lancedb.store import LanceStore
path, rounds = sys.argv[1], int(sys.argv[2])
store = LanceStore(LanceStoreConfig(path=path), N(embedder=N(name="test-emb", dim=16)))
for i in range(rounds):
    store.add_observations("w", [Observation(id=f"w{i}", text="gone soon",
                                                 timestamp=datetime(2024, 1, 1, tzinfo=UTC))])
    store.delete("w", observation_ids=[f"w{i}"])
    store.erase_history()
    print("erased", i, flush=True)
store.close()
'''

ROUNDS = 20
#: Rows of the namespace read: enough that a rewrite and a read take a while.
TURNS = 3000


def _race(path: Path, rounds: int) -> dict[str, Any]:
    """Read while a child erases ``rounds`` times; the tally, with every raw error and
    wrong answer seen."""
    rng = np.random.default_rng(0)
    with open_store(path) as setup:
        ids = [f"o{i}" for i in range(TURNS)]
        setup.add_observations("r", [obs(i, f"stable turn {i}") for i in ids])
        setup.upsert_nodes("r", [node(f"n{i}", f"stable fact {i}", embedding=v)
                                 for i, v in enumerate(rvec(rng, 5))])
    eraser = subprocess.Popen([sys.executable, "-c", ERASER, str(path), str(rounds)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=child_env())
    reads = store_errors = 0
    raw: list[str] = []
    wrong: list[str] = []
    deadline = time.monotonic() + 60 + 20 * rounds
    query = rvec(rng)[0]
    reader = open_store(path, read_consistency_s=0)  # a long-lived reader (a server)
    while eraser.poll() is None and time.monotonic() < deadline:
        fresh = open_store(path)  # and one per request (a CLI search)
        for store in (reader, fresh):
            try:
                got = [o.id for o in store.iter_observations("r")]
                some = [o.id for o in store.get_observations("r", ["o1", "o3"])]
                hits = store.text_search("r", "stable fact", 5)
                near = store.vector_search("r", query, 3, mode="exact")
                names = store.namespaces()
            except StoreError:
                store_errors += 1
                continue
            except Exception as exc:  # what must never reach a caller
                raw.append(f"{type(exc).__name__}: {exc}"[:200])
                continue
            finally:
                reads += 1
            if got != ids or some != ["o1", "o3"] or len(hits) != 5 or len(near) != 3 \
                    or "r" not in names:
                wrong.append(f"{got[:3]} {some} {len(hits)} {len(near)} {names}")
        fresh.close()
    reader.close()
    out, err = eraser.communicate(timeout=60)
    assert eraser.returncode == 0, err[-2000:]
    assert out.count("erased") == rounds
    return {"erases": rounds, "reads": reads, "store_errors": store_errors, "raw": raw,
            "wrong": wrong}


def _check(tally: dict[str, Any]) -> None:
    assert tally["raw"] == [] and tally["wrong"] == []
    # Most reads simply succeed: a retry on the new versions answers them.
    assert tally["reads"] > tally["erases"] and tally["store_errors"] <= tally["reads"] // 10


def test_reads_racing_an_eraser_retry_or_raise_store_errors(tmp_path: Path) -> None:
    _check(_race(tmp_path / "mem", ROUNDS))


@pytest.mark.slow
def test_reads_racing_many_erases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tally = _race(tmp_path / "mem", 100)
    with capsys.disabled():  # the figures of docs/reliability.md
        print(f"\nreader during erase: {tally['erases']} erases, {tally['reads']} reads, "
              f"{tally['store_errors']} StoreError, {len(tally['raw'])} raw errors "
              f"({sorted({r.split(':')[0] for r in tally['raw']})}), "
              f"{len(tally['wrong'])} wrong answers")
    _check(tally)
