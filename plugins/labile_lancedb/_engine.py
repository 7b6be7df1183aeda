"""`Engine`: one open store's moving parts, and the rules that keep them consistent.

`labile_lancedb.store.LanceStore` implements the `Store` methods (what each
call means for records); the engine decides *when* state is consistent:

* **Opening**: create a new store or check an existing one, undo a dead
  writer's half-written transaction, add indexes an older build lacked.
* **Threads**: ``lock`` serialises one operation's access to the caches and
  tables; ``txn_lock`` is held by the writing thread for a whole batch, so other
  threads' reads proceed between its operations but no second writer starts.
* **The transaction**: `batch` opens it, holding the namespace's lock and a
  share of the store (`labile_lancedb._locks`); nested blocks, on any
  namespace, join it (taking that namespace's lock too). `write_buffer` and
  `next_seq` hand out the namespace buffers and ``seq`` numbers, and the
  outermost block commits it through the `labile_lancedb._txn.Journal` or
  rolls it back. Other processes write other namespaces meanwhile.
* **Other processes**: before a read (once per `reading` block) and before a
  transaction, the caches of namespaces another process committed to are dropped.
* **Maintenance**: compaction every ``optimize_every`` commits, and ANN index
  training when due, after a batch has committed and released its locks,
  holding the store exclusively.

Once a rollback fails, the engine refuses every further call: the intent left
in ``meta`` is undone by the next open.
"""

from __future__ import annotations

import shutil
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labile.plugin import StoreError, get_logger
from labile_lancedb import _maintenance, _rows
from labile_lancedb._freshness import CommitWatcher
from labile_lancedb._lease import object_store_for
from labile_lancedb._location import is_object_uri, resolve
from labile_lancedb._lock import WriterLock
from labile_lancedb._locks import LocalLocks, ObjectLocks, StoreLocks
from labile_lancedb._retry import retrying_read
from labile_lancedb._spaces import SpaceCache
from labile_lancedb._tables import (
    NS_KEY,
    LanceTables,
    ns_state,
    prepare_directory,
    temporary_directory,
    version_gone,
)
from labile_lancedb._txn import OPEN_WAIT_S, Journal, Pending, Txn
from labile_lancedb.config import LanceStoreConfig

__all__ = ["Engine"]

log = get_logger(__name__)

#: How long a writer waits, after its batch, to hold the store for due maintenance.
_MAINTAIN_WAIT_S = 5.0


class Engine:
    """Opens the store at ``config.path`` for vectors of ``embedder_name`` (``dim``-d).

    Attributes:
        path: The store directory (a fresh temporary one for ``memory://``).
        tables: The LanceDB side (`labile_lancedb._tables.LanceTables`).
        spaces: The per-namespace caches.
        lock: Held for the duration of one store operation.

    Raises:
        StoreError: the store cannot be opened; the message says why.
    """

    def __init__(self, config: LanceStoreConfig, embedder_name: str, dim: int) -> None:
        self.config = config
        self.embedder_name, self.dim = embedder_name, dim
        self.lock = threading.RLock()
        self._txn_lock = threading.RLock()
        self.txn: Txn | None = None
        self._closed = False
        self._broken: str | None = None
        self._commits_since_optimize = 0
        self._seqs: dict[str, int] = {}  # per namespace written: the next record's seq
        self._legacy_seq = 1  # the store-wide counter of stores without namespace rows
        self._reading = threading.local()  # depth of `reading` blocks, per thread
        #: Reloads for other processes' commits (`labile.plugin.SharedStore`).
        self.external_commits = 0
        self._finalizer: weakref.finalize[Any, Any] | None = None
        opts, env = config.storage_options, config.storage_options_env
        directory: Path | None = None
        if config.path == "memory://":
            directory = temporary_directory()
            self._finalizer = weakref.finalize(self, shutil.rmtree, str(directory), True)
        elif not is_object_uri(config.path):
            directory = prepare_directory(config.path.removeprefix("file://"))
        location = resolve(config.path, opts, env, directory)
        self.location = location
        self.path: Path | str = location.directory or location.uri
        self.tables = LanceTables(location, dim, config)
        self.spaces = SpaceCache(self.tables)
        self._locks: StoreLocks
        if location.directory is not None:
            self._watcher = CommitWatcher(location.directory / "meta.lance" / "_versions",
                                          config.read_consistency_s)
            self._locks = LocalLocks(location.directory, config.lock_timeout_s)
        else:
            self._watcher = CommitWatcher(None, config.read_consistency_s)
            self._locks = ObjectLocks(object_store_for(location), location.uri,
                                      config.lease_ttl_s, config.lock_timeout_s)
        self._flock: WriterLock = self._locks.exclusive
        self._journal = Journal(self.tables, self._locks)
        try:
            self._open()
        except BaseException as exc:
            self._locks.close()
            if self._finalizer is not None:
                self._finalizer()
            if isinstance(exc, Exception) and not isinstance(exc, StoreError):
                raise StoreError(f"cannot open the store at {self.path}: "
                                 f"{type(exc).__name__}: {exc}") from exc
            raise

    def _open(self) -> None:
        tables = self.tables
        if not tables.connect():
            with self._flock.holding():  # two processes creating one store: one does it
                tables.create_if_missing(self.embedder_name)
        tables.open_tables()
        meta = tables.meta_read()
        tables.check(meta, self.embedder_name)
        wait_s = min(self.config.lock_timeout_s, OPEN_WAIT_S)
        if meta.get("intent") and self._flock.try_acquire(wait_s):
            try:  # a dead writer of an older build: the whole store is undone
                with self._may_not_write("undoing a dead writer's batch"):
                    meta = self._journal.recover_legacy(tables.latest_meta())
            finally:
                self._flock.release()
        # One wait for all: namespaces whose writer is alive are not waited for one by one.
        deadline = time.monotonic() + wait_s
        dead = [k[len(NS_KEY):] for k in meta if k.startswith(NS_KEY)]
        for ns in [ns for ns in dead if ns_state(meta, ns).get("intent")]:
            left = max(0.0, deadline - time.monotonic())
            with self._may_not_write(f"undoing a dead writer's batch in {ns!r}"):
                meta = self._recover_at_open(ns, left) or meta
        if tables.missing_indexes():  # a store from an older build may lack some
            with self._may_not_write("adding missing indexes"), self._flock.holding():
                tables.ensure_indexes()
        tables.pin_to(meta)
        self._legacy_seq = int(meta.get("next_seq", "1"))
        tables.ann_trained_rows = int(meta.get("ann_trained_rows", "0"))
        tables.meta_version = tables.meta_table.version
        self._watcher.looked_now()
        log.debug("lancedb_store_opened", path=str(self.path), embedder=self.embedder_name,
                  dim=self.dim)

    @contextmanager
    def _may_not_write(self, what: str) -> Iterator[None]:
        """Around the writes an open makes on the way (undoing a dead writer's batch,
        adding indexes): one that fails (a full disk, a read-only mount) is logged and
        left to the next writer, and the open goes on. Nothing is lost: a batch whose
        undo failed keeps its intent, so readers read its namespace as it was before."""
        try:
            yield
        except Exception as exc:
            log.warning("lancedb_open_write_skipped", path=str(self.path), what=what,
                        error=f"{type(exc).__name__}: {exc}"[:300])

    def _recover_at_open(self, namespace: str, wait_s: float) -> dict[str, str] | None:
        """Undo a dead writer's batch in ``namespace`` if its lock comes free within
        ``wait_s`` (a lock still held is a live writer's: its intent is left alone, and
        readers read the namespace as it was before that batch); ``meta`` after it."""
        if not self._locks.enter(namespace, wait_s):
            log.info("lancedb_writer_active", path=str(self.path), namespace=namespace)
            return None
        try:
            self.tables.checkout_latest()
            meta = self.tables.latest_meta()
            if self._journal.recover(namespace, meta):
                meta = self.tables.latest_meta()
            return meta
        finally:
            self._locks.leave([namespace])

    # -- guards and freshness ------------------------------------------------------------
    def check_usable(self) -> None:
        """Refuse a closed store, or one whose rollback failed.

        Raises:
            StoreError: naming which of the two, and what to do.
        """
        if self._closed:
            raise StoreError("this LanceStore is closed")
        if self._broken:
            raise StoreError(f"this LanceStore needs recovery ({self._broken}); reopen it")

    @staticmethod
    def check_namespace(namespace: object) -> str:
        """``namespace`` if it can key rows.

        Raises:
            StoreError: not a non-empty string, contains the key separator, or
                is not valid Unicode.
        """
        if not isinstance(namespace, str) or not namespace:
            raise StoreError(f"namespace must be a non-empty string, got {namespace!r}")
        if _rows.KEY_SEP in namespace:
            raise StoreError("namespace must not contain the unit separator '\\x1f'")
        _rows.check_text("namespace", namespace)
        return namespace

    def begin_read(self, namespace: str | None) -> None:
        """Checks before a read (the caller holds ``lock``): usable, valid namespace, fresh."""
        self.check_usable()
        if namespace is not None:
            self.check_namespace(namespace)
        if not getattr(self._reading, "depth", 0):
            self.sync_external()

    @contextmanager
    def reading(self, namespace: str) -> Iterator[None]:
        """See `labile_lancedb.store.LanceStore.reading`."""
        self.check_usable()
        self.check_namespace(namespace)
        depth = getattr(self._reading, "depth", 0)
        if depth == 0:
            self._sync_for_read(namespace)
        self._reading.depth = depth + 1
        try:
            yield
        finally:
            self._reading.depth = depth

    @retrying_read
    def _sync_for_read(self, namespace: str) -> None:
        with self.lock:
            self.sync_external()

    def sync_external(self, *, force: bool = False) -> None:
        """Drop the caches of namespaces another process committed to since we last looked.

        Never inside our own transaction: its writes are in the caches only.
        ``force`` asks LanceDB for the newest version whatever
        ``read_consistency_s`` allows (a writer about to start a batch).
        """
        if self.txn is not None:
            return
        version = self._watcher.new_version(self.tables, force=force)
        if version is not None:
            log.debug("lancedb_external_commit", seen=version, known=self.tables.meta_version)
            self._reload(version)

    def _reload(self, version: int) -> None:
        """Re-read ``meta`` as of ``version`` and drop the caches of the namespaces whose
        row changed (every cache, for a store-wide change)."""
        tables = self.tables
        tables.checkout_latest()
        self.external_commits += 1
        tables.forget_counts()
        meta = tables.meta_read()
        changed = tables.pin_to(meta)
        if "" in changed:
            self.spaces.clear()
        else:
            self.spaces.forget(changed)
        self._legacy_seq = max(self._legacy_seq, int(meta.get("next_seq", "1")))
        tables.ann_trained_rows = int(meta.get("ann_trained_rows", "0"))
        tables.meta_version = version

    def after_version_gone(self, namespace: str | None, attempt: int) -> None:
        """A read failed because the versions it read were deleted (see
        `labile_lancedb._retry`): re-read the pins from the newest ``meta`` and drop the
        caches and handles that may name deleted versions; from the second failure on,
        read ``namespace`` at the newest versions if no intent is open there.

        Raises:
            StoreError: inside this process's open batch (its caches hold writes not
                committed yet, which a reload would lose).
        """
        txn = self.txn
        if txn is not None and txn.owned_here():
            raise StoreError(f"table versions of {self.path} were deleted under an open "
                             "batch; leave the batch and retry")
        with self.lock:
            tables = self.tables
            tables.drop_views()
            tables.meta_table.checkout_latest()
            self._reload(tables.meta_table.version)
            if namespace is not None:
                self.spaces.forget([namespace])
                if attempt >= 1:
                    tables.fall_back(namespace)
            else:
                self.spaces.clear()

    # -- transactions --------------------------------------------------------------------
    @contextmanager
    def batch(self, namespace: str) -> Iterator[None]:
        """See `labile_lancedb.store.LanceStore.batch`."""
        self.check_usable()
        self.check_namespace(namespace)
        with self._txn_lock:
            txn = self.txn
            if txn is not None:
                if namespace not in txn.held:
                    self._locks.join(namespace)
                    txn.held.add(namespace)
                    with self.lock:
                        self._own(namespace)
                txn.depth += 1
                try:
                    yield
                finally:
                    txn.depth -= 1
                return
            # The outermost block holds the namespace's write lock from the read of
            # the state its writes depend on (which ids are new, which nodes exist) to
            # the commit: two writers of it never decide from the same state.
            self._locks.enter(namespace)
            txn = Txn(owner=threading.get_ident(), depth=1, held={namespace})
            try:
                with self.lock:
                    self.sync_external(force=True)
                    self.tables.checkout_latest()  # a writer writes on the newest versions
                    self._own(namespace)
                self.txn = txn
                try:
                    yield
                except BaseException:
                    self.txn = None
                    self._rollback(txn)
                    raise
                self.txn = None
                wrote = txn.dirty() or txn.optimize_requested
                self._commit(txn)
            finally:
                self.txn = None
                self.tables.writers.clear()
                self._locks.leave(txn.held)
        if wrote:
            self._maintain(txn)

    def _own(self, namespace: str) -> None:
        """Start writing ``namespace`` (its lock just taken; the caller holds ``lock``):
        undo a dead writer's batch there, drop a stale cache, and take up its ``seq``."""
        tables = self.tables
        meta = tables.latest_meta()
        if self._journal.recover(namespace, meta):
            meta = tables.latest_meta()
        st = ns_state(meta, namespace)
        if tables.states.get(namespace) != st:
            self.spaces.forget([namespace])
            tables.states[namespace] = st
        stored = st.get("seq") or int(meta.get("next_seq", "1"))
        self._seqs[namespace] = max(self._seqs.get(namespace, 1), int(stored),
                                    self._legacy_seq)
        tables.writers.add(namespace)

    def write_buffer(self, namespace: str) -> Pending:
        """The open transaction's buffer for ``namespace`` (call inside `batch`, holding
        ``lock``, once the call's records are validated)."""
        txn = self.txn
        assert txn is not None  # every write runs inside `batch`
        self.spaces.wrote(namespace)
        return txn.pending_for(namespace)

    def next_seq(self, namespace: str) -> int:
        """A new ``seq`` of ``namespace``: its records' insertion order."""
        seq = self._seqs.get(namespace, 1)
        self._seqs[namespace] = seq + 1
        return seq

    def _commit(self, txn: Txn) -> None:
        if not txn.dirty():
            return
        with self.lock:
            try:
                self._journal.commit(txn, self._seqs)
            except Exception as exc:
                self._rollback(txn)
                raise StoreError(f"commit to {self.path} failed and was rolled back: "
                                 f"{type(exc).__name__}: {exc}") from exc
            except BaseException:
                self._rollback(txn)
                raise
            self._commits_since_optimize += 1

    def _maintain(self, txn: Txn) -> None:
        """After a batch has committed and released its locks: compaction and the ANN
        index when due, holding the store exclusively (skipped, and tried again after
        the next batch, while other batches keep it busy)."""
        due = (txn.optimize_requested
               or self._commits_since_optimize >= self.config.optimize_every)
        if not due and not _maintenance.ann_index_due(self.tables):
            return
        try:
            with self._txn_lock, self.lock:
                # A waiting maintainer holds new batches back, so it only waits for
                # those in flight; if they take long, the next batch tries again.
                if not self._flock.try_acquire(min(self.config.lock_timeout_s, _MAINTAIN_WAIT_S)):
                    log.info("lancedb_maintenance_deferred", path=str(self.path))
                    return
                try:
                    self._recover_all()
                    if due:
                        self._compact()
                    self._maybe_build_ann()
                finally:
                    self._flock.release()
        except Exception as exc:  # the batch is durable; maintenance can wait
            log.error("lancedb_maintenance_failed", path=str(self.path),
                      error=f"{type(exc).__name__}: {exc}")

    def _recover_all(self) -> None:
        """Holding the store exclusively (no batch in flight anywhere): undo every dead
        writer's intent, before maintenance moves every namespace's pin."""
        tables = self.tables
        tables.checkout_latest()
        meta = tables.latest_meta()
        if meta.get("intent"):
            meta = self._journal.recover_legacy(meta)
        for key in [k for k in meta if k.startswith(NS_KEY)]:
            ns = key[len(NS_KEY):]
            if not ns_state(meta, ns).get("intent"):
                continue
            # Take the dead writer's lock first: a writer that only stalled past its
            # lease then finds it lost and never commits over the undo.
            lock = self._locks.namespace(ns)
            if not lock.try_acquire(self.config.lease_ttl_s + 1.0):
                continue  # left alone: its pin stays on the intent's versions
            try:
                if self._journal.recover(ns, meta):
                    self.spaces.forget([ns])
            finally:
                lock.release()

    def _rollback(self, txn: Txn) -> None:
        with self.lock:
            try:
                failure = self._journal.rollback(txn, self._seqs)
                if failure is not None:  # the intents stay: the next lock holder undoes
                    self._broken = failure
            finally:
                self.spaces.forget(txn.touched)

    def flush_if_owner(self, namespace: str) -> None:
        """Make this thread's uncommitted writes in ``namespace`` visible to LanceDB queries.

        Full-text and ANN searches run inside LanceDB, which cannot see the
        in-memory buffer; they write it out first (under the transaction's
        intent, so a rollback or a crash still undoes it).
        """
        txn = self.txn
        if txn is None or not txn.owned_here():
            return
        if txn.pending.get(namespace):
            self._journal.write(txn, self._seqs)

    def begin_removal(self, namespace: str) -> None:
        """Before deleting rows inside the transaction: write the buffer out and record
        the intent, so a rollback or a crash restores the removed rows too."""
        txn = self.txn
        assert txn is not None and txn.owned_here()  # removals run inside `batch`
        txn.touched.add(namespace)
        self._journal.write(txn, self._seqs)
        self._journal.begin(txn, [namespace], self._seqs)

    @property
    def txn_lock(self) -> threading.RLock:
        """This process's writer lock (re-entrant): held by the thread that writes, for
        the whole of its batch, deferred block or maintenance, so that no second writer
        of this process starts meanwhile. Take it before ``lock``, never inside it (that
        is the order every holder uses, so none can deadlock another)."""
        return self._txn_lock

    @property
    def closed(self) -> bool:
        """Whether `close` has run (every later call but `close` is refused)."""
        return self._closed

    @property
    def file_lock(self) -> WriterLock:
        """The store-wide lock, held exclusively (a file lock, or an object-store lease)."""
        return self._flock

    def recover_all(self) -> None:
        """See `_recover_all` (the caller holds `file_lock`)."""
        self._recover_all()

    def erase_history(self) -> None:
        """See `labile_lancedb.store.LanceStore.erase_history`."""
        from labile_lancedb._erase import erase_history

        self.check_usable()
        txn = self.txn
        if txn is not None and txn.owned_here():
            raise StoreError("erase_history() called inside an open batch; leave the batch first")
        with self._txn_lock, self.lock:
            try:
                erase_history(self)
            except StoreError:
                raise
            except Exception as exc:
                raise StoreError(
                    f"erasing the history of {self.path} failed ({type(exc).__name__}: "
                    f"{exc}); every removal committed before it stands, and every "
                    "table version a reader is pinned to is kept; run `labile repair` "
                    "(or erase again) to finish") from exc
            finally:
                self.spaces.clear()

    def repair_storage(self) -> dict[str, Any]:
        """Bring a store left in any intermediate state back to a clean one: undo dead
        writers' intents, move every pin to the newest versions (healing pins that name
        deleted versions, as an older build's interrupted erase left them), and finish
        an interrupted `erase_history`. Returns what it did.

        Raises:
            StoreError: the store is busy past ``lock_timeout_s``, or LanceDB failed.
        """
        from labile_lancedb._erase import erase_interrupted

        self.check_usable()
        txn = self.txn
        if txn is not None and txn.owned_here():
            raise StoreError("repair_storage() called inside an open batch; leave it first")
        with self._txn_lock, self.lock, self._flock.holding():
            tables = self.tables
            tables.checkout_latest()
            before = tables.latest_meta()
            gone = sorted(ns for ns in self._namespace_rows(before)
                          if not self._pins_exist(before, ns))
            intents = sorted(ns for ns in self._namespace_rows(before)
                             if ns_state(before, ns).get("intent"))
            self._recover_all()
            interrupted = erase_interrupted(tables.latest_meta())
            if interrupted:
                self.erase_history()
            else:
                tables.mark_committed()
            self.spaces.clear()
        done = {"intents_undone": intents, "pins_healed": gone,
                "erase_finished": interrupted}
        log.info("lancedb_store_repaired", path=str(self.path), **done)
        return done

    @staticmethod
    def _namespace_rows(meta: dict[str, str]) -> list[str]:
        return [k[len(NS_KEY):] for k in meta if k.startswith(NS_KEY)]

    def _pins_exist(self, meta: dict[str, str], namespace: str) -> bool:
        st = ns_state(meta, namespace)
        pinned = st.get("intent") or st.get("committed") or {}
        for name, version in pinned.items():
            try:
                self.tables.open_at(name, version)
            except Exception as exc:
                if version_gone(exc):
                    return False
                raise
        return True

    def uncommitted(self, namespace: str) -> Pending | None:
        """The open transaction's buffer for ``namespace``, if any (for reads)."""
        return self.txn.pending.get(namespace) if self.txn is not None else None

    # -- maintenance and lifecycle -------------------------------------------------------
    def optimize(self) -> None:
        """See `labile_lancedb.store.LanceStore.optimize`."""
        self.check_usable()
        txn = self.txn
        if txn is not None and txn.owned_here():
            txn.optimize_requested = True
            return
        with self._txn_lock, self.lock, self._flock.holding():
            self._recover_all()
            self._compact()
            self._maybe_build_ann()

    def _compact(self) -> None:
        _maintenance.compact(self.tables, self._flock)
        self._commits_since_optimize = 0

    def build_ann_index(self) -> float:
        """See `labile_lancedb.store.LanceStore.build_ann_index`."""
        self.check_usable()
        txn = self.txn
        if txn is not None and txn.owned_here():
            raise StoreError("build_ann_index() called inside an open batch; leave the "
                             "batch first (it holds the store exclusively)")
        with self.lock, self._flock.holding():
            self._recover_all()
            return _maintenance.train_ann_index(self.tables, self._flock)

    def _maybe_build_ann(self) -> None:
        if _maintenance.ann_index_due(self.tables):
            self.build_ann_index()

    def close(self) -> None:
        """See `labile_lancedb.store.LanceStore.close`."""
        if self._closed:
            return
        txn = self.txn
        if txn is not None and txn.owned_here():
            raise StoreError("close() called inside an open batch; leave the batch first")
        with self._txn_lock, self.lock:
            self._closed = True
            self.spaces.clear()
            self.tables.close()
            self._locks.close()
            if self._finalizer is not None:
                self._finalizer()
