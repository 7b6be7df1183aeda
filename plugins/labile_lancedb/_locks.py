"""`StoreLocks`: one write lock per namespace, and the store-wide lock beside them.

Writers of different namespaces write at the same time; writers of one
namespace take turns. Each batch holds its namespaces' locks (an exclusive
`fcntl.flock` on ``.labile-ns/<hash>.lock`` locally, a lease on
``_labile/ns/<hash>.lease`` on an object store) and a *share* of the store;
store-wide operations (creating the store, compaction and cleanup of old
versions, the ANN index, `erase_history`) hold the store *exclusively*, so
they never run beside a batch:

* **Local directory**: batches hold ``.labile.lock`` shared (``LOCK_SH``),
  store-wide operations exclusively (``LOCK_EX``). A maintainer first takes
  the turnstile ``.labile.turnstile``, which batches pass through on their way
  in, so batches arriving while it waits queue behind it instead of starving it.
* **Object store**: a batch takes its namespace lease, then looks at the store
  lease ``_labile/writer.lease``; if a maintainer holds it, the batch steps back
  (releases its lease) and waits. A maintainer takes the store lease, then waits
  until no namespace lease is held. Both publish before they look, so at most
  one side proceeds (the conditional puts are linearizable).

The namespace's file or lease name is a hash of it, so any namespace maps to
a valid name.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, Protocol

from labile.plugin import StoreError
from labile_lancedb._lease import LEASE_KEY, ObjectLease, lease_keys
from labile_lancedb._lock import LOCK_FILE, FileLock, Holding, StoreBusyError, WriterLock

__all__ = ["LocalLocks", "ObjectLocks", "StoreLocks", "lock_name"]

#: Directory (local) or key prefix (object store) of the namespace locks.
NS_LOCK_DIR: Final = ".labile-ns"
NS_LEASE_PREFIX: Final = "_labile/ns/"
TURNSTILE_FILE: Final = ".labile.turnstile"
_POLL_S: Final = 0.05


def lock_name(namespace: str) -> str:
    """The file or object name of ``namespace``'s lock (a hash: any namespace fits)."""
    return hashlib.sha256(namespace.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class StoreLocks(Protocol):
    """The store's locks (see the module docs)."""

    #: The store-wide lock, held by store-wide operations (re-entrant).
    exclusive: WriterLock

    def enter(self, namespace: str, timeout_s: float | None = None) -> bool:
        """Take a share of the store and ``namespace``'s lock (an outermost batch);
        whether both were taken within ``timeout_s`` (default: ``lock_timeout_s``,
        and then `StoreBusyError` instead of ``False``)."""
        ...

    def join(self, namespace: str) -> None:
        """Take ``namespace``'s lock too (a batch nested on another namespace).

        Raises:
            StoreBusyError: another writer held it for longer than ``lock_timeout_s``.
        """
        ...

    def leave(self, namespaces: Iterable[str]) -> None:
        """Release the namespaces' locks and the share of the store."""
        ...

    def namespace(self, namespace: str) -> WriterLock:
        """``namespace``'s lock (created on first use)."""
        ...

    def close(self) -> None:
        """Release everything and close the files. Idempotent."""
        ...


class _Gate(Holding):
    """A batch's share of a local store: through the turnstile, then ``LOCK_SH``."""

    def __init__(self, turnstile: FileLock, shared: FileLock) -> None:
        self._turnstile, self._shared = turnstile, shared

    def try_acquire(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        if not self._turnstile.try_acquire(timeout_s):
            return False
        try:
            return self._shared.try_acquire(max(0.0, deadline - time.monotonic()))
        finally:
            self._turnstile.release()

    def release(self) -> None:
        self._shared.release()


class _LocalExclusive(Holding):
    """A local store held exclusively: the turnstile (new batches wait), then ``LOCK_EX``."""

    def __init__(self, turnstile: FileLock, store: FileLock) -> None:
        self._turnstile, self._store = turnstile, store
        self.path, self.timeout_s = store.path, store.timeout_s

    def busy_message(self) -> str:
        return (f"batches in progress kept the store lock {self.path} shared for more than "
                f"lock_timeout_s = {self.timeout_s:g} s; store-wide operations wait for them: "
                "retry later, or raise [store] lock_timeout_s")

    def try_acquire(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        if not self._turnstile.try_acquire(timeout_s):
            return False
        if self._store.try_acquire(max(0.0, deadline - time.monotonic())):
            return True
        self._turnstile.release()
        return False

    def release(self) -> None:
        self._store.release()
        self._turnstile.release()

    def check_held(self) -> None:
        """An ``flock`` cannot be lost while its holder lives."""

    def close(self) -> None:
        self._store.close()


class LocalLocks:
    """The locks of a store in a local directory (see the module docs)."""

    def __init__(self, directory: Path, timeout_s: float) -> None:
        self._dir, self._timeout_s = directory, timeout_s
        turnstile = FileLock(directory / TURNSTILE_FILE, timeout_s)
        self._turnstile = turnstile
        self._store = FileLock(directory / LOCK_FILE, timeout_s)
        # A second descriptor of the same file: flock locks belong to the descriptor.
        self._shared = FileLock(directory / LOCK_FILE, timeout_s, shared=True)
        self._gate = _Gate(turnstile, self._shared)
        self.exclusive: WriterLock = _LocalExclusive(turnstile, self._store)
        self._ns: dict[str, FileLock] = {}

    def namespace(self, namespace: str) -> WriterLock:
        lock = self._ns.get(namespace)
        if lock is None:
            folder = self._dir / NS_LOCK_DIR
            try:
                folder.mkdir(exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create {folder}: {exc.strerror or exc}") from None
            lock = self._ns[namespace] = FileLock(folder / f"{lock_name(namespace)}.lock",
                                                  self._timeout_s)
        return lock

    def enter(self, namespace: str, timeout_s: float | None = None) -> bool:
        wait = self._timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + wait
        if not self._gate.try_acquire(wait):
            if timeout_s is not None:
                return False
            raise StoreBusyError(
                f"a store-wide operation (compaction, index training) holds {self._store.path} "
                f"for more than lock_timeout_s = {self._timeout_s:g} s: retry later, or raise "
                "[store] lock_timeout_s")
        lock = self.namespace(namespace)
        try:
            if timeout_s is None:
                lock.acquire()
                return True
            if lock.try_acquire(max(0.0, deadline - time.monotonic())):
                return True
        except BaseException:
            self._gate.release()
            raise
        self._gate.release()
        return False

    def join(self, namespace: str) -> None:
        self.namespace(namespace).acquire()

    def leave(self, namespaces: Iterable[str]) -> None:
        for ns in namespaces:
            self.namespace(ns).release()
        self._gate.release()

    def close(self) -> None:
        for lock in self._ns.values():
            lock.close()
        self._ns.clear()
        for f in (self._shared, self._store, self._turnstile):
            f.close()


class _ObjectExclusive(Holding):
    """The store lease, held only once no namespace lease is held (see the module docs)."""

    def __init__(self, locks: ObjectLocks) -> None:
        self._locks = locks
        self._lease = locks.store_lease
        self.path, self.timeout_s = self._lease.path, self._lease.timeout_s
        self._depth = 0

    def busy_message(self) -> str:
        return (f"the store lease {self.path} could not be held with no batch in progress "
                f"within lock_timeout_s = {self.timeout_s:g} s: retry later, or raise "
                "[store] lock_timeout_s")

    def try_acquire(self, timeout_s: float) -> bool:
        if self._depth:
            self._depth += 1
            return True
        deadline = time.monotonic() + timeout_s
        if not self._lease.try_acquire(timeout_s):
            return False
        try:
            for key in lease_keys(self._locks.object_store, NS_LEASE_PREFIX):
                other = self._locks.lease_at(key)
                if not other.wait_free(max(0.0, deadline - time.monotonic())):
                    self._lease.release()
                    return False
        except BaseException:
            self._lease.release()
            raise
        self._depth = 1
        return True

    def release(self) -> None:
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth == 0:
            self._lease.release()

    def check_held(self) -> None:
        self._lease.check_held()

    def close(self) -> None:
        self._depth = 0
        self._lease.close()


class ObjectLocks:
    """The leases of a store on an object store (see the module docs)."""

    def __init__(self, object_store: Any, uri: str, ttl_s: float, timeout_s: float) -> None:
        self.object_store, self._uri = object_store, uri
        self._ttl_s, self._timeout_s = ttl_s, timeout_s
        self.store_lease = ObjectLease(object_store, uri, ttl_s, timeout_s, LEASE_KEY)
        self.exclusive: WriterLock = _ObjectExclusive(self)
        self._ns: dict[str, ObjectLease] = {}
        self._others: dict[str, ObjectLease] = {}

    def lease_at(self, key: str) -> ObjectLease:
        """A lease object for looking at another writer's lease ``key`` (never taken)."""
        lease = self._others.get(key)
        if lease is None:
            lease = self._others[key] = ObjectLease(self.object_store, self._uri,
                                                    self._ttl_s, 0.0, key)
        return lease

    def namespace(self, namespace: str) -> WriterLock:
        lease = self._ns.get(namespace)
        if lease is None:
            lease = self._ns[namespace] = ObjectLease(
                self.object_store, self._uri, self._ttl_s, self._timeout_s,
                f"{NS_LEASE_PREFIX}{lock_name(namespace)}.lease")
        return lease

    def enter(self, namespace: str, timeout_s: float | None = None) -> bool:
        wait = self._timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + wait
        lease = self.namespace(namespace)
        assert isinstance(lease, ObjectLease)
        while True:
            left = max(0.0, deadline - time.monotonic())
            if not lease.try_acquire(left):
                if timeout_s is not None:
                    return False
                raise StoreBusyError(
                    f"another writer ({lease.holder() or 'unknown process'}) holds the write "
                    f"lease {lease.path} of namespace {namespace!r} for more than "
                    f"lock_timeout_s = {self._timeout_s:g} s; one process writes to a "
                    "namespace at a time: retry later, or raise [store] lock_timeout_s")
            # Published our lease; now look: a maintainer holding the store steps us back.
            if self.store_lease.wait_free(0.0):
                return True
            lease.release()
            if not self.store_lease.wait_free(max(0.0, deadline - time.monotonic())):
                if timeout_s is not None:
                    return False
                raise StoreBusyError(
                    f"a store-wide operation holds the lease {self.store_lease.path} for more "
                    f"than lock_timeout_s = {self._timeout_s:g} s: retry later, or raise "
                    "[store] lock_timeout_s")
            self._clear_if_stale(deadline)
            time.sleep(_POLL_S)

    def _clear_if_stale(self, deadline: float) -> None:
        """A store lease left held by a dead maintainer: take it over and free it, so
        that the next look (which sees one moment, not an expiry) finds it free."""
        if self.store_lease.wait_free(0.0):  # free now
            return
        if self.store_lease.try_acquire(max(0.0, deadline - time.monotonic())):
            self.store_lease.release()

    def join(self, namespace: str) -> None:
        self.namespace(namespace).acquire()

    def leave(self, namespaces: Iterable[str]) -> None:
        for ns in namespaces:
            self.namespace(ns).release()

    def close(self) -> None:
        for lease in self._ns.values():
            lease.close()
        self._ns.clear()
        self.exclusive.close()
