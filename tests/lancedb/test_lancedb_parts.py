"""Two parts of the LanceDB store on their own: the cross-process write lock
(`labile_lancedb._lock`) and the watcher that notices other processes' commits
(`labile_lancedb._freshness`).

The store as a whole is tested in ``test_lancedb_store.py`` and, under
``kill -9``, in ``test_lancedb_crash.py``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest
from lancedb_helpers import child_env

from labile._errors import StoreError
from labile_lancedb._freshness import CommitWatcher
from labile_lancedb._lock import FileLock


# -- the write lock -----------------------------------------------------------------------
def test_write_lock_excludes_other_holders_and_is_reentrant_within_one(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    a, b = FileLock(path, timeout_s=0.05), FileLock(path, timeout_s=0.05)
    a.acquire()
    a.acquire()  # re-entrant: code holding the lock may call code that takes it
    assert not b.try_acquire(0)
    a.release()
    assert not b.try_acquire(0)  # still held once
    a.release()
    assert b.try_acquire(0)
    assert not a.try_acquire(0)
    b.release()
    b.release()  # releasing what is not held is harmless (error paths rely on it)
    with a.holding():
        assert not b.try_acquire(0)
    assert b.try_acquire(0)
    for lock in (a, b):
        lock.close()


def test_a_held_write_lock_times_out_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    holder = FileLock(path, timeout_s=60)
    holder.acquire()
    waiter = FileLock(path, timeout_s=0.2)
    t0 = time.monotonic()
    with pytest.raises(StoreError, match=re.escape(str(path))):
        waiter.acquire()
    assert 0.2 <= time.monotonic() - t0 < 10
    holder.close()  # closing frees the lock
    waiter.acquire()
    waiter.close()


def test_the_write_lock_is_freed_when_its_holder_is_killed(tmp_path: Path) -> None:
    """What recovery on open relies on: a dead writer never keeps the lock."""
    path = tmp_path / "lock"
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from labile_lancedb._lock import FileLock\n"
        "FileLock(Path(sys.argv[1]), timeout_s=5).acquire()\n"
        "sys.stdout.write('held\\n'); sys.stdout.flush()\n"
        "time.sleep(120)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=child_env())
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "held"
        lock = FileLock(path, timeout_s=0.05)
        assert not lock.try_acquire(0)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        assert lock.try_acquire(5)
        lock.close()
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate()


def test_a_closed_write_lock_refuses_to_be_taken(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "lock", timeout_s=0.05)
    lock.close()
    lock.close()  # idempotent
    lock.release()  # nothing held: nothing to do
    with pytest.raises(StoreError, match="closed"):
        lock.acquire()


# -- the commit watcher ---------------------------------------------------------------------
class _Meta:
    """Stands in for the ``meta`` table: counts the (costly) version round trips."""

    def __init__(self) -> None:
        self.latest = 1
        self.asked = 0

    @property
    def version(self) -> int:
        self.asked += 1
        return self.latest


class _Tables:
    def __init__(self) -> None:
        self.meta_table = _Meta()
        self.meta_version = 1


def test_commit_watcher_asks_lancedb_only_when_the_fingerprint_is_new_or_fresh(
    tmp_path: Path,
) -> None:
    versions = tmp_path / "_versions"
    versions.mkdir()
    long_ago = time.time_ns() - 60 * 10**9
    os.utime(versions, ns=(long_ago, long_ago))
    fake = _Tables()
    tables = cast(Any, fake)
    watcher = CommitWatcher(versions, every_s=0.0)
    assert watcher.new_version(tables) is None
    assert fake.meta_table.asked == 1  # nothing known yet: ask
    assert watcher.new_version(tables) is None
    assert fake.meta_table.asked == 1  # unchanged, old fingerprint: trusted, no round trip
    (versions / "2.manifest").write_text("a commit adds a manifest")
    fake.meta_table.latest = 2
    assert watcher.new_version(tables) == 2  # the directory changed: ask, and report it
    assert fake.meta_table.asked == 2
    fake.meta_version = 2  # the store caught up
    # The fingerprint is younger than two seconds: a later commit within the
    # timestamp granularity could leave it unchanged, so it is not trusted yet.
    assert watcher.new_version(tables) is None
    assert fake.meta_table.asked == 3


def test_commit_watcher_looks_at_most_every_read_consistency_interval(tmp_path: Path) -> None:
    fake = _Tables()
    watcher = CommitWatcher(tmp_path / "missing", every_s=3600.0)
    watcher.looked_now()
    fake.meta_table.latest = 5
    assert watcher.new_version(cast(Any, fake)) is None  # allowed to be stale for an hour
    assert fake.meta_table.asked == 0
    eager = CommitWatcher(tmp_path / "missing", every_s=0.0)
    assert eager.new_version(cast(Any, fake)) == 5  # no fingerprint (no directory): ask
