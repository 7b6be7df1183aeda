"""Deferred edge writes: `LanceStore.deferred` blocks whose commit waits.

A LanceDB commit costs tens of milliseconds (an intent in ``meta``, a merge
into ``edges``, the intent cleared, compaction every few commits), which is
more than a REALM search itself. `labile.Memory.feedback` re-weights a handful
of edges per answered query; committing each time made learning the most
expensive step of a query. So the memory runs feedback in
``store.deferred(namespace)`` (`labile.plugin.DeferredStore`), and this
module makes such a block cheap:

* Its edge writes go to the namespace's cache at once (every read of this
  process sees them) and to the `Carry`, the records waiting for a commit.
  No transaction is opened and no LanceDB table is touched.
* A namespace's carried records are committed with its next ordinary
  transaction (the outermost `LanceStore.batch` of that namespace writes them
  first, so a later ``add`` or ``forget`` is ordered after them; never with
  another namespace's, whose writer holds only its own lock), or by `LanceStore.flush` once
  ``deferred_commit_every`` blocks have accumulated or the oldest carried
  edit is ``deferred_max_age_s`` old at the end of a block, and at
  `LanceStore.close`.
* An exception escaping a block undoes its writes (the carry goes back to
  what it held before the block, and the namespace's cache is reloaded from
  the committed rows plus the carry). A block that writes anything other
  than edges (nodes, observations, a delete) becomes an ordinary batch from
  that write on: everything it wrote, and every earlier carried edit, is
  committed at its exit, as one transaction.
* Whenever a namespace's edges are reloaded (a rolled-back batch, another
  process's commit), the carried records are put back over the committed
  ones (`labile_lancedb._spaces.SpaceCache.edge_overlay`), so this process
  never loses sight of its own waiting edits. An edge whose end node is gone
  by then is dropped, never committed dangling.

A commit of the carry that fails at the end of a block (another writer holds
the lock too long) does not fail the block, whose own writes succeeded: the
edits stay carried and the commit is tried again at the next block's end.

What a ``kill -9`` (or a process that exits without `LanceStore.close`) can
lose: the carried edits, i.e. at most the last ``deferred_commit_every - 1``
deferred blocks (more while commits fail) and none older than the last
ordinary batch. Nothing else:
the tables were never touched, so the store opens as of its last commit,
consistent. Other processes see the edits once they are committed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

import attrs

from labile.plugin import Edge, StoreError, get_logger
from labile_lancedb import _rows
from labile_lancedb._cache import clone

if TYPE_CHECKING:
    from labile_lancedb.store import LanceStore

__all__ = ["Block", "Carry", "batch", "carry_edges", "deferred"]

log = get_logger(__name__)

Entry = tuple[Edge, int]
_NONE: tuple[()] = ()  # "not carried before the block" in an undo log


@attrs.define
class Block:
    """The deferred block open on one thread.

    Attributes:
        namespace: The block's namespace.
        owner: Ident of the thread that opened it.
        promote: Turns it into an ordinary batch (enters the real transaction).
        depth: Nesting depth of `deferred` blocks that joined it.
        promoted: Whether it became an ordinary batch.
        undo: For each ``(namespace, edge id)`` it carried: what the carry held
            before the block (`_NONE`: nothing).
    """

    namespace: str
    owner: int
    promote: Callable[[], None]
    depth: int = 1
    promoted: bool = False
    undo: dict[tuple[str, str], Entry | tuple[()]] = attrs.field(factory=dict)


class Carry:
    """Edge records written in deferred blocks and not committed yet, by namespace."""

    def __init__(self) -> None:
        self.edges: dict[str, dict[str, Entry]] = {}
        #: Deferred blocks that ended since the carry was last empty.
        self.blocks = 0
        #: `time.monotonic` of the oldest carried edit (``None``: nothing carried).
        self.since: float | None = None
        self.block: Block | None = None

    def __bool__(self) -> bool:
        return bool(self.edges)

    def active_here(self) -> Block | None:
        """The deferred block this thread has open (not promoted), if any."""
        block = self.block
        if block is None or block.owner != threading.get_ident() or block.promoted:
            return None
        return block

    def put(self, namespace: str, edge: Edge, seq: int) -> None:
        """Carry ``edge`` (the cache's own record) until the next commit."""
        held = self.edges.setdefault(namespace, {})
        block = self.block
        if block is not None:
            block.undo.setdefault((namespace, edge.id), held.get(edge.id, _NONE))
        held[edge.id] = (edge, seq)
        if self.since is None:
            self.since = time.monotonic()

    def undo(self, block: Block) -> set[str]:
        """Put back what the carry held before ``block``; the namespaces it wrote."""
        for (ns, eid), before in block.undo.items():
            held = self.edges.setdefault(ns, {})
            if before == _NONE:
                held.pop(eid, None)
            else:
                held[eid] = before  # type: ignore[assignment]
            if not held:
                del self.edges[ns]
        if not self.edges:
            self.since = None
        return {ns for ns, _ in block.undo}

    def due(self, every: int, max_age_s: float) -> bool:
        """Whether the carried edits should be committed now."""
        if not self.edges:
            return False
        old = self.since is not None and time.monotonic() - self.since >= max_age_s
        return self.blocks >= every or old

    def taken(self, namespace: str) -> dict[str, dict[str, Entry]]:
        """A snapshot of what is carried for ``namespace`` (what its commit is about to write).

        Only the batch's own namespace: writers hold one lock per namespace, so a
        batch may write no other namespace's rows (that namespace's undo would not
        know of them)."""
        held = self.edges.get(namespace)
        return {namespace: dict(held)} if held else {}

    def discard(self, taken: dict[str, dict[str, Entry]]) -> None:
        """Forget the entries of ``taken`` that are still the carried ones (committed)."""
        for ns, done in taken.items():
            held = self.edges.get(ns)
            if held is None:
                continue
            for eid, entry in done.items():
                if held.get(eid) is entry:
                    del held[eid]
            if not held:
                del self.edges[ns]
        if not self.edges:
            self.blocks, self.since = 0, None


def carry_edges(store: LanceStore, namespace: str, edges: Sequence[Edge]) -> None:
    """`LanceStore.upsert_edges` inside a deferred block: checked like any write, then to
    the namespace's cache and the carry, no transaction."""
    with store._lock:
        _rows.check_edges(store._spaces.nodes(namespace), edges)
        graph = store._spaces.edges(namespace)
        for edge in edges:
            stored = clone(edge, namespace=namespace)
            seq = graph.seqs.get(edge.id)
            graph.put(stored, store._engine.next_seq(namespace) if seq is None else seq)
            store._carry.put(namespace, stored, graph.seqs[edge.id])


def overlay(store: LanceStore, namespace: str) -> list[Entry]:
    """The carried edges of ``namespace`` whose ends are still nodes (for a reload)."""
    held = store._carry.edges.get(namespace)
    if not held:
        return []
    nodes = store._spaces.nodes(namespace)
    return [(e, seq) for e, seq in held.values()
            if nodes.get(e.src) is not None and nodes.get(e.dst) is not None]


def _absorb(store: LanceStore, namespace: str) -> dict[str, dict[str, Entry]]:
    """Write ``namespace``'s carried edges into its open transaction (its first writes);
    what was taken.

    Runs right after the outermost batch has caught up with other processes'
    commits, so an edge whose end was deleted meanwhile is dropped here.
    """
    taken = store._carry.taken(namespace)
    engine = store._engine
    with store._lock:
        for ns, held in taken.items():
            nodes, graph = store._spaces.nodes(ns), store._spaces.edges(ns)
            pending = engine.write_buffer(ns)
            for eid, (edge, seq) in held.items():
                if nodes.get(edge.src) is None or nodes.get(edge.dst) is None:
                    log.warning("lancedb_deferred_edge_dropped", namespace=ns, edge=eid,
                                reason="an end node no longer exists")
                    continue
                graph.put(edge, seq)
                # An upsert, not an append: whether LanceDB holds the row may have
                # changed since the edit (another process, a rollback).
                pending.edges[eid] = (edge, seq)
    return taken


@contextmanager
def batch(store: LanceStore, namespace: str) -> Iterator[None]:
    """`LanceStore.batch`: the engine's transaction, which first takes in the carry."""
    block = store._carry.active_here()
    if block is not None and store._engine.txn is None:
        block.promote()  # a write other than an edge upsert: the block becomes a batch
    with store._engine.batch(namespace):
        txn = store._engine.txn
        taken = _absorb(store, namespace) if (store._carry and txn is not None
                                              and txn.depth == 1 and txn.owned_here()) else None
        yield
    if taken is not None:  # committed (an exception or a failed commit keeps the carry)
        store._carry.discard(taken)


@contextmanager
def deferred(store: LanceStore, namespace: str) -> Iterator[None]:
    """`LanceStore.deferred` (see the module docs)."""
    engine, carry, config = store._engine, store._carry, store.config
    engine.check_usable()
    engine.check_namespace(namespace)
    open_block = carry.block
    if open_block is not None and open_block.owner == threading.get_ident():
        open_block.depth += 1  # nested: joins the open block (deferred or promoted)
        try:
            yield
        finally:
            open_block.depth -= 1
        return
    txn = engine.txn
    if config.deferred_commit_every <= 1 or (txn is not None and txn.owned_here()):
        with store.batch(namespace):  # durable at once / with the enclosing batch
            yield
        return
    # One writer at a time in this process, as for batches: another thread's
    # batch or deferred block waits until this block ends (the engine's lock).
    with engine.txn_lock:  # (the engine's own lock: no second one to order against it)
        stack = ExitStack()

        def promote() -> None:
            block.promoted = True
            stack.enter_context(store.batch(namespace))

        block = carry.block = Block(namespace=namespace, owner=threading.get_ident(),
                                    promote=promote)
        try:
            with stack:  # a promoted block commits (or rolls back) when this exits
                try:
                    yield
                finally:
                    carry.block = None
        except BaseException:
            written = carry.undo(block)
            with store._lock:  # reloaded from the committed rows plus the carry
                store._spaces.forget(written)
            raise
    if block.promoted:
        return
    carry.blocks += 1
    if carry.due(config.deferred_commit_every, config.deferred_max_age_s):
        try:
            store.flush()
        except StoreError as exc:  # the block itself succeeded: keep carrying, retry later
            log.warning("lancedb_deferred_commit_failed", edits=sum(map(len, carry.edges.values())),
                        error=f"{type(exc).__name__}: {exc}")
