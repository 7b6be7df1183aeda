"""Transactions: the write buffer, and the intent protocol that makes a commit atomic.

A transaction (`Txn`) buffers each namespace's writes (`Pending`) in memory
until it commits. LanceDB commits one table at a time, so a batch touching
three tables is three commits, and a process killed between them would leave
half a batch behind. The `Journal` prevents that with an *intent*:

1. Before the first data write of a transaction (whose batch already holds
   the cross-process write lock, see `labile_lancedb._engine`) it records the
   current version of each data table in ``meta`` (``intent``).
2. It writes the buffered rows, observations before the nodes citing them and
   nodes before the edges joining them (a reader of a half-written commit, or
   the invariants checked after a crash, never see a dangling reference).
3. It clears the intent (one ``meta`` commit, which also persists the ``seq``
   counter and records the data versions now committed) and releases the lock.

Rolling back restores each table to its recorded version. A process killed
between 1 and 3 leaves the intent behind with the lock free (the kernel frees
an ``flock`` when its holder dies); the next open finds it and restores the
tables (`Journal.recover_abandoned`), so a batch is either entirely durable or
entirely absent. An intent whose lock is still held belongs to a live writer
and is left alone.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Final

import attrs
import structlog

from labile.plugin import Edge, Node, Observation
from labile_lancedb import _rows
from labile_lancedb._lock import WriterLock
from labile_lancedb._tables import LanceTables

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["OPEN_WAIT_S", "Journal", "Pending", "Txn"]

log = structlog.get_logger(__name__)

#: How long an opener that finds an intent waits for the write lock before
#: concluding that the intent's writer is alive (and leaving it alone).
OPEN_WAIT_S: Final = 2.0


@attrs.define
class Pending:
    """One namespace's writes not yet sent to LanceDB: records with their ``seq``.

    ``new_nodes`` / ``new_edges`` name the records that LanceDB does not hold
    yet: they are appended, the others upserted.
    """

    obs: dict[str, tuple[Observation, int]] = attrs.field(factory=dict)
    nodes: dict[str, tuple[Node, int]] = attrs.field(factory=dict)
    new_nodes: set[str] = attrs.field(factory=set)
    edges: dict[str, tuple[Edge, int]] = attrs.field(factory=dict)
    new_edges: set[str] = attrs.field(factory=set)

    def __bool__(self) -> bool:
        return bool(self.obs or self.nodes or self.edges)


@attrs.define
class Txn:
    """The open store-wide transaction.

    Attributes:
        owner: Ident of the thread that opened it (only it writes).
        depth: Nesting depth of the `batch` blocks that joined it.
        pending: Buffered writes by namespace.
        touched: Every namespace written, whose caches a rollback drops.
        intent: Table versions recorded in ``meta`` before the first data write;
            ``None`` until then (and after the commit).
        optimize_requested: `optimize` was called inside; run it at commit.
    """

    owner: int
    depth: int = 0
    pending: dict[str, Pending] = attrs.field(factory=dict)
    touched: set[str] = attrs.field(factory=set)
    intent: dict[str, int] | None = None
    optimize_requested: bool = False

    def pending_for(self, namespace: str) -> Pending:
        """The buffer of ``namespace``'s writes (created on first use); marks it touched."""
        self.touched.add(namespace)
        p = self.pending.get(namespace)
        if p is None:
            p = self.pending[namespace] = Pending()
        return p

    def dirty(self) -> bool:
        """Whether there is anything to commit or undo."""
        return self.intent is not None or any(self.pending.values())

    def owned_here(self) -> bool:
        """Whether the calling thread is the one writing this transaction."""
        return self.owner == threading.get_ident()


class Journal:
    """Writes transactions to the tables under the intent protocol (see the module docs).

    It holds the write lock from recording an intent to clearing it; the
    caller serialises calls within the process.
    """

    def __init__(self, tables: LanceTables, lock: WriterLock) -> None:
        self._tables = tables
        self._lock = lock

    def write(self, txn: Txn) -> None:
        """Send the buffered writes to LanceDB, recording the intent first if not yet done.

        Called at commit, and earlier by searches that run inside LanceDB and
        must see the buffer; either way a rollback or a crash still undoes it.
        """
        import pyarrow as pa

        if not any(txn.pending.values()):
            return
        tables = self._tables
        self.begin(txn)
        schemas = tables.schemas
        obs: list[pa.Table] = []
        node_add: list[pa.Table] = []
        node_merge: list[pa.Table] = []
        edge_add: list[pa.Table] = []
        edge_merge: list[pa.Table] = []
        for ns, p in txn.pending.items():
            if p.obs:
                obs.append(_rows.observations_table(ns, list(p.obs.values()),
                                                    schemas["observations"]))
            # New rows are appended (cheap); rows that exist in LanceDB are upserted.
            for target, new in ((node_add, True), (node_merge, False)):
                nrows = [v for k, v in p.nodes.items() if (k in p.new_nodes) == new]
                if nrows:
                    target.append(_rows.nodes_table(ns, nrows, schemas["nodes"], tables.dim))
            for target, new in ((edge_add, True), (edge_merge, False)):
                erows = [v for k, v in p.edges.items() if (k in p.new_edges) == new]
                if erows:
                    target.append(_rows.edges_table(ns, erows, schemas["edges"]))
        # Order matters for readers of a half-written commit and for the invariants:
        # observations before the nodes citing them, nodes before the edges joining them.
        # An object-store lease lost to another writer (a stall past lease_ttl_s):
        # stop before each table commit rather than write over the new writer.
        self._lock.check_held()
        if obs:
            tables.append("observations", pa.concat_tables(obs))
        if node_add:
            tables.append("nodes", pa.concat_tables(node_add))
        if node_merge:
            tables.upsert("nodes", pa.concat_tables(node_merge))
        tables.forget_node_rows()
        self._lock.check_held()
        if edge_add:
            tables.append("edges", pa.concat_tables(edge_add))
        if edge_merge:
            tables.upsert("edges", pa.concat_tables(edge_merge))
        txn.pending.clear()

    def begin(self, txn: Txn) -> None:
        """Take the write lock and record the intent, unless ``txn`` already did."""
        if txn.intent is not None:
            return
        self._lock.acquire()
        try:
            versions = self._tables.data_versions()
            self._tables.meta_put({"intent": json.dumps(versions)})
        except BaseException:
            self._lock.release()
            raise
        txn.intent = versions

    def commit(self, txn: Txn, next_seq: int) -> None:
        """Write what is buffered, clear the intent (persisting ``next_seq``), free the lock.

        On an exception nothing is undone here: the caller calls `rollback`.
        """
        self.write(txn)
        self._lock.check_held()  # an object-store lease lost to another writer: no commit
        versions = json.dumps(self._tables.data_versions())
        marker = {"intent": "", "committed": versions, "next_seq": str(next_seq)}
        self._tables.meta_put(marker)
        self._tables.pin_to(marker)
        txn.intent = None
        self._lock.release()

    def rollback(self, txn: Txn) -> str | None:
        """Undo whatever of ``txn`` reached LanceDB and free the lock.

        Returns:
            ``None`` on success; otherwise what failed. The intent then stays in
            ``meta``, so the next open restores the tables, and the caller must
            refuse further use of this store object.
        """
        failure = None
        try:
            if txn.intent is not None:
                # Without the lock (a lost lease) a restore would undo another
                # writer's commits: leave the intent to the writer that holds it.
                self._lock.check_held()
                self._tables.restore(txn.intent)
                self._tables.meta_put({"intent": ""})
                self._tables.mark_committed()
        except Exception as exc:
            failure = f"rollback failed: {type(exc).__name__}: {exc}"
            log.error("lancedb_rollback_failed", path=str(self._tables.path), error=failure)
        finally:
            if txn.intent is not None:
                self._lock.release()
                txn.intent = None
        return failure

    def recover_abandoned(self, meta: dict[str, str], wait_s: float) -> dict[str, str]:
        """On open: undo the transaction of a dead writer whose intent ``meta`` shows.

        The writer holds the lock from intent to clear, and the kernel drops it
        when the writer dies: a lock that comes free within ``wait_s`` means the
        intent was abandoned. A lock still held means a live writer is mid-commit;
        its intent is left alone and the committed data is read as it is.

        Returns:
            ``meta`` as it is after recovery (unchanged if nothing was done).
        """
        if not self._lock.try_acquire(wait_s):
            log.info("lancedb_writer_active", path=str(self._tables.path))
            return meta
        try:
            tables = self._tables
            tables.meta_table.checkout_latest()
            meta = self.recover_held(tables.meta_read())
        finally:
            self._lock.release()
        return meta

    def recover_held(self, meta: dict[str, str]) -> dict[str, str]:
        """Undo the batch of the intent ``meta`` shows (the caller holds the write lock,
        so that intent's writer is gone); returns ``meta`` after recovery."""
        if not meta.get("intent"):
            return meta
        tables = self._tables
        versions = json.loads(meta["intent"])
        log.warning("lancedb_store_recovering", path=str(tables.path), versions=versions)
        tables.restore(versions)
        tables.meta_put({"intent": ""})
        tables.mark_committed()
        return tables.meta_read()
