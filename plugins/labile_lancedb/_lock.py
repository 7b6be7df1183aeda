"""`FileLock`: the store's cross-process write lock.

One process writes to a store at a time. A writer holds an exclusive
`fcntl.flock` on ``<store>/.labile.lock`` from the moment it records a commit
intent until it clears it (see `labile_lancedb._txn`), and while it creates
tables, builds indexes or compacts. The kernel drops the lock when its holder
dies, even by ``kill -9``: that is what lets an opener tell an intent abandoned
by a dead writer from a commit still in progress.

The lock is re-entrant per `FileLock` instance (one per open store), so code
that already holds it can call code that takes it again.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from labile.plugin import StoreError

__all__ = ["LOCK_FILE", "FileLock"]

#: The lock file's name inside the store directory.
LOCK_FILE: Final = ".labile.lock"
#: How often a waiting process retries a held lock.
_POLL_S: Final = 0.01


class FileLock:
    """An exclusive `fcntl.flock` on one file, re-entrant per instance.

    Opening the file happens at construction, so a store directory that is
    not writable fails early with a message that says so.

    Raises:
        StoreError: the lock file cannot be created.
    """

    def __init__(self, path: Path, timeout_s: float) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self._depth = 0
        try:
            self._fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(
                f"cannot create the lock file {path}: {exc.strerror or exc}; the store "
                "directory must be writable"
            ) from None

    def acquire(self) -> None:
        """Take the lock, waiting at most ``timeout_s``.

        Raises:
            StoreError: another process held it for longer than ``timeout_s``,
                or this lock is closed.
        """
        if not self.try_acquire(self.timeout_s):
            raise StoreError(
                f"another process holds the write lock {self.path} (a commit in "
                f"progress) for more than {self.timeout_s:g} s"
            )

    def try_acquire(self, timeout_s: float) -> bool:
        """Take the lock, waiting at most ``timeout_s``; whether it was taken.

        Raises:
            StoreError: this lock is closed.
        """
        if self._fd is None:
            raise StoreError("the store is closed")
        if self._depth:
            self._depth += 1
            return True
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(_POLL_S)
        self._depth = 1
        return True

    def release(self) -> None:
        """Undo one `acquire`; the lock is freed when the outermost one is undone.

        Releasing a lock that is not held (or is closed) does nothing, so error
        paths may release unconditionally.
        """
        if self._depth == 0 or self._fd is None:
            return
        self._depth -= 1
        if self._depth == 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    @contextmanager
    def holding(self) -> Iterator[None]:
        """`acquire` on entry, `release` on exit."""
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def close(self) -> None:
        """Close the file, which also frees the lock. Idempotent."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self._depth = 0
