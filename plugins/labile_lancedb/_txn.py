"""Transactions: the write buffer, and the intent protocol that makes a commit atomic.

A transaction (`Txn`) buffers each namespace's writes (`Pending`) in memory
until it commits. LanceDB commits one table at a time, so a batch touching
three tables is three commits, and a process killed between them would leave
half a batch behind. The `Journal` prevents that with an *intent*, kept per
namespace in that namespace's ``meta`` row (`labile_lancedb._tables.ns_state`),
so that writers of different namespaces never undo each other:

1. Before the first data write of a namespace in a transaction (which holds
   that namespace's lock, see `labile_lancedb._locks`) it records the current
   version of each data table as the namespace's ``intent``.
2. It writes the buffered rows, observations before the nodes citing them and
   nodes before the edges joining them (a reader of a half-written commit, or
   the invariants checked after a crash, never see a dangling reference).
3. It clears the intents of every namespace it wrote and records the data
   versions now committed as theirs, with their next ``seq``: one ``meta``
   commit, so a transaction spanning namespaces is atomic too.

Rolling back is a *logical* undo: the namespace's rows are brought back to
what they were at its intent's versions, and other namespaces' rows (and
their concurrent commits) are left alone (`undo_namespace`). A
process killed between 1 and 3 leaves the intent behind with the lock free
(the kernel frees an ``flock`` when its holder dies; a lease expires); the
next holder of that namespace's lock undoes it (`Journal.recover`), so a batch
is either entirely durable or entirely absent. Readers meanwhile read the
namespace at the intent's versions. A store written before per-namespace rows
may hold a store-wide intent: it is undone by restoring table versions, with
the store held exclusively (`Journal.recover_legacy`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

import attrs

from labile.plugin import Edge, Node, Observation, get_logger
from labile_lancedb import _rows
from labile_lancedb._locks import StoreLocks
from labile_lancedb._sql import namespace_is
from labile_lancedb._tables import DATA_TABLES, LanceTables, ns_state

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["OPEN_WAIT_S", "Journal", "Pending", "Txn", "undo_namespace"]

log = get_logger(__name__)

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
    """The open transaction of one store object.

    Attributes:
        owner: Ident of the thread that opened it (only it writes).
        depth: Nesting depth of the `batch` blocks that joined it.
        held: The namespaces whose lock it holds (the outermost block's, and
            those of blocks nested on other namespaces).
        pending: Buffered writes by namespace.
        touched: Every namespace written, whose caches a rollback drops.
        intents: Per namespace, the table versions recorded in ``meta`` before
            its first data write (empty until then, and after the commit).
        seqs: Per held namespace, the ``seq`` its ``meta`` row had (restored on undo).
        optimize_requested: `optimize` was called inside; run it at commit.
    """

    owner: int
    depth: int = 0
    held: set[str] = attrs.field(factory=set)
    pending: dict[str, Pending] = attrs.field(factory=dict)
    touched: set[str] = attrs.field(factory=set)
    intents: dict[str, dict[str, int]] = attrs.field(factory=dict)
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
        return bool(self.intents) or any(self.pending.values())

    def owned_here(self) -> bool:
        """Whether the calling thread is the one writing this transaction."""
        return self.owner == threading.get_ident()


class Journal:
    """Writes transactions to the tables under the intent protocol (see the module docs).

    The caller holds the namespaces' locks (``txn.held``) for the whole
    transaction and serialises calls within the process.
    """

    def __init__(self, tables: LanceTables, locks: StoreLocks) -> None:
        self._tables = tables
        self._locks = locks

    def _check_held(self, namespaces: Iterable[str]) -> None:
        # An object-store lease lost to another writer (a stall past lease_ttl_s):
        # stop before each commit rather than write over the new writer.
        for ns in namespaces:
            self._locks.namespace(ns).check_held()

    def write(self, txn: Txn, seqs: dict[str, int]) -> None:
        """Send the buffered writes to LanceDB, recording the intents first if not yet done.

        Called at commit, and earlier by searches that run inside LanceDB and
        must see the buffer; either way a rollback or a crash still undoes it.
        ``seqs`` are the namespaces' next ``seq`` (recorded with an intent).
        """
        import pyarrow as pa

        if not any(txn.pending.values()):
            return
        tables = self._tables
        self.begin(txn, [ns for ns, p in txn.pending.items() if p], seqs)
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
        self._check_held(txn.intents)
        if obs:
            tables.append("observations", pa.concat_tables(obs))
        if node_add:
            tables.append("nodes", pa.concat_tables(node_add))
        if node_merge:
            tables.upsert("nodes", pa.concat_tables(node_merge))
        tables.forget_node_rows()
        self._check_held(txn.intents)
        if edge_add:
            tables.append("edges", pa.concat_tables(edge_add))
        if edge_merge:
            tables.upsert("edges", pa.concat_tables(edge_merge))
        txn.pending.clear()

    def begin(self, txn: Txn, namespaces: Iterable[str], seqs: dict[str, int]) -> None:
        """Record the intent of each of ``namespaces`` that has none in ``txn`` yet
        (one ``meta`` commit); the caller holds their locks."""
        missing = [ns for ns in namespaces if ns not in txn.intents]
        if not missing:
            return
        self._check_held(missing)
        versions = self._tables.data_versions()
        states = {}
        for ns in missing:
            st = dict(self._tables.states.get(ns, {}))
            st.update(intent=versions, seq=seqs.get(ns, st.get("seq")))
            states[ns] = st
        self._tables.put_states(states)
        for ns in missing:
            txn.intents[ns] = versions

    def commit(self, txn: Txn, seqs: dict[str, int]) -> None:
        """Write what is buffered, then clear the intents, recording each written
        namespace's committed versions and next ``seq`` (one ``meta`` commit).

        On an exception nothing is undone here: the caller calls `rollback`.
        """
        self.write(txn, seqs)
        if not txn.intents:
            return
        self._check_held(txn.intents)  # an object-store lease lost: no commit
        versions = self._tables.data_versions()
        self._tables.put_states({ns: {"intent": None, "committed": versions,
                                      "seq": seqs.get(ns)} for ns in txn.intents})
        txn.intents.clear()

    def rollback(self, txn: Txn, seqs: dict[str, int]) -> str | None:
        """Undo whatever of ``txn`` reached LanceDB, namespace by namespace.

        Returns:
            ``None`` on success; otherwise what failed. The intents then stay in
            ``meta``, so the next holder of each lock undoes them, and the caller
            must refuse further use of this store object.
        """
        failure = None
        try:
            if txn.intents:
                # Without the lock (a lost lease) an undo would overwrite another
                # writer's rows: leave the intent to the writer that holds it.
                self._check_held(txn.intents)
                for ns, versions in txn.intents.items():
                    undo_namespace(self._tables, ns, versions)
                after = self._tables.data_versions()
                self._tables.put_states({ns: {"intent": None, "committed": after,
                                              "seq": seqs.get(ns)} for ns in txn.intents})
        except Exception as exc:
            failure = f"rollback failed: {type(exc).__name__}: {exc}"
            log.error("lancedb_rollback_failed", path=str(self._tables.path), error=failure)
        finally:
            txn.intents.clear()
        return failure

    def recover(self, namespace: str, meta: dict[str, str]) -> bool:
        """Undo the batch whose intent ``namespace``'s row in ``meta`` shows (the caller
        holds that namespace's lock, so the intent's writer is gone); whether there was one."""
        st = ns_state(meta, namespace)
        versions = st.get("intent")
        if not versions:
            return False
        tables = self._tables
        log.warning("lancedb_namespace_recovering", path=str(tables.path),
                    namespace=namespace, versions=versions)
        undo_namespace(tables, namespace, versions)
        st.update(intent=None, committed=tables.data_versions())
        tables.put_states({namespace: st})
        return True

    def recover_legacy(self, meta: dict[str, str]) -> dict[str, str]:
        """Undo the store-wide intent of a store written before per-namespace rows (the
        caller holds the store exclusively); returns ``meta`` after recovery."""
        if not meta.get("intent"):
            return meta
        tables = self._tables
        versions = json.loads(meta["intent"])
        log.warning("lancedb_store_recovering", path=str(tables.path), versions=versions)
        tables.restore(versions)
        tables.meta_put({"intent": ""})
        tables.mark_committed()
        return tables.meta_read()


def undo_namespace(tables: LanceTables, namespace: str, versions: dict[str, int]) -> None:
    """Bring ``namespace``'s rows back to what they were at ``versions`` (a logical
    undo; the caller holds the namespace's lock).

    For each table: delete the namespace's rows at the newest version, then add
    back its rows as they were. Other namespaces' rows, and their concurrent
    commits, are left alone (every statement is confined to the namespace);
    running it again gives the same rows, so a crash during it is undone by
    running it again.
    """
    import pyarrow as pa

    where = namespace_is(namespace)
    for name in reversed(DATA_TABLES):  # edges before the nodes they join
        version = versions.get(name)
        if version is None:
            continue
        schema = tables.schemas[name]
        old = tables.open_at(name, version).search().where(where).limit(None).to_arrow()
        old = pa.Table.from_arrays([old.column(f.name) for f in schema], schema=schema)
        tables.handles[name].checkout_latest()
        tables.delete(name, where)
        if old.num_rows:
            tables.append(name, old)
    tables.forget_counts()
