"""`FileLock`: a cross-process write lock on a local directory.

One process writes a namespace at a time. A writer holds an exclusive
`fcntl.flock` on its namespace's lock file for its whole batch: from the read
of the current state its writes depend on (which ids are new, which nodes
exist) to the commit (see `labile_lancedb._engine`); and a shared one on
``<store>/.labile.lock``, which creating tables, building indexes and
compacting hold exclusively (`labile_lancedb._locks`). The kernel drops a lock
when its holder dies, even by ``kill -9``: that is what lets an opener tell an
intent abandoned by a dead writer from a commit still in progress. An
exclusive holder writes its process id and host into the file, so a writer
that gives up waiting can say who holds it.

The lock is re-entrant per `FileLock` instance, so code that already holds it
can call code that takes it again.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Final, Protocol

from labile.plugin import StoreError

__all__ = ["LOCK_FILE", "FileLock", "Holding", "StoreBusyError", "WriterLock"]

#: The lock file's name inside the store directory.
LOCK_FILE: Final = ".labile.lock"
#: How often a waiting process retries a held lock.
_POLL_S: Final = 0.01


class WriterLock(Protocol):
    """The store's cross-process write lock: `FileLock` on a local directory,
    `labile_lancedb._lease.ObjectLease` on an object store. Re-entrant per instance."""

    def acquire(self) -> None: ...
    def try_acquire(self, timeout_s: float) -> bool: ...
    def release(self) -> None: ...
    def holding(self) -> AbstractContextManager[None]: ...
    def check_held(self) -> None: ...
    def close(self) -> None: ...


class StoreBusyError(StoreError):
    """Another process held the store's write lock (or lease) for longer than
    ``lock_timeout_s``; nothing of this call was written."""


def holder_id() -> str:
    """This process, as written into a lock or lease: ``pid <n> on <host>``."""
    return f"pid {os.getpid()} on {socket.gethostname()}"


class Holding:
    """`acquire` and `holding` for a lock class that has ``try_acquire``, ``release``,
    ``timeout_s`` and a `busy_message`."""

    timeout_s: float

    def try_acquire(self, timeout_s: float) -> bool:
        raise NotImplementedError

    def busy_message(self) -> str:
        """What `acquire` says when ``timeout_s`` passed: who holds what, and what to do."""
        raise NotImplementedError

    def acquire(self) -> None:
        """Take the lock, waiting at most ``timeout_s``.

        Raises:
            StoreBusyError: it stayed held for longer than ``timeout_s`` (the
                message names the lock and, where known, its holder).
            StoreError: the lock is closed.
        """
        if not self.try_acquire(self.timeout_s):
            raise StoreBusyError(self.busy_message())

    def release(self) -> None:
        raise NotImplementedError

    @contextmanager
    def holding(self) -> Iterator[None]:
        """`acquire` on entry, `release` on exit."""
        self.acquire()
        try:
            yield
        finally:
            self.release()


class FileLock(Holding):
    """An exclusive (or, with ``shared``, a shared) `fcntl.flock` on one file,
    re-entrant per instance.

    Opening the file happens at construction, so a store directory that is
    not writable fails early with a message that says so.

    Raises:
        StoreError: the lock file cannot be created.
    """

    def __init__(self, path: Path, timeout_s: float, *, shared: bool = False) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self.shared = shared  # LOCK_SH (many holders) instead of LOCK_EX
        self._depth = 0
        try:
            self._fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(
                f"cannot create the lock file {path}: {exc.strerror or exc}; the store "
                "directory must be writable"
            ) from None

    def busy_message(self) -> str:
        return (f"another writer ({self.holder() or 'unknown process'}) holds the write "
                f"lock {self.path} for more than lock_timeout_s = {self.timeout_s:g} s; "
                "one process writes to a namespace at a time: retry later, or raise "
                "[store] lock_timeout_s")

    def holder(self) -> str:
        """Who last took the lock (``pid <n> on <host>``), or ``""`` if unknown."""
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                return f.read(200).strip()
        except OSError:
            return ""

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
                mode = fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX
                fcntl.flock(self._fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(_POLL_S)
        self._depth = 1
        if not self.shared:  # shared holders are many: the name would be anyone's
            self._write_holder()
        return True

    def _write_holder(self) -> None:
        # Best effort: the holder's name only improves a waiter's error message.
        assert self._fd is not None
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, holder_id().encode(), 0)
        except OSError:
            pass

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

    def check_held(self) -> None:
        """Nothing to check: the kernel keeps an ``flock`` for as long as its holder lives
        (the object-store lease can be lost; see `labile_lancedb._lease`)."""

    def close(self) -> None:
        """Close the file, which also frees the lock. Idempotent."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self._depth = 0
