"""The carry of deferred edge writes: what `LanceStore.deferred` blocks wrote and no
commit has taken yet.

A LanceDB commit costs tens of milliseconds (an intent in ``meta``, a merge
into ``edges``, the intent cleared, compaction every few commits), which is
more than a REALM search itself. `labile.Memory.feedback` re-weights a handful
of edges per answered query; committing each time made learning the most
expensive step of a query. So the memory runs feedback in
``store.deferred(namespace)`` (`labile.plugin.DeferredStore`), and this
module and `LanceStore.deferred` make such a block cheap:

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
from collections.abc import Callable

import attrs

from labile.plugin import Edge

__all__ = ["Block", "Carry", "Entry"]

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
