"""`LanceStore`: the embedded, durable `labile._protocols.Store` on LanceDB (``lancedb``).

One LanceDB directory per memory, with the tables ``observations`` (the
verbatim append-only log), ``nodes``, ``edges`` and ``meta``. Every row carries
its namespace and a ``namespace + "\\x1f" + id`` primary key, and every query is
confined to one namespace by an SQL clause whose literals are quoted.

Reads are served from per-namespace caches; only full-text search, approximate
vector search in large namespaces and the observation log itself go to
LanceDB. Writes are transactional: the outermost `LanceStore.batch` opens one
transaction (nested blocks, on any namespace, join it), its writes are applied
to the caches at once and buffered, and at block exit the buffer is written
with one LanceDB commit per table under a crash-safe intent. One process
writes a namespace at a time, and writers of different namespaces write at the
same time; any number may read (they see each commit once
``read_consistency_s`` has passed, and drop the caches it made stale when they
notice it).

This module is the facade: it implements each `Store` method (argument checks,
what the call means for records) and delegates to one module per concern:

============================  =====================================================
`labile_lancedb._engine`      opening, thread locks, transaction lifecycle, freshness
`labile_lancedb._tables`      directory, connection, tables, schema checks, indexes, ``meta``
`labile_lancedb._migrations`  storage schema versions
`labile_lancedb._location`    local directory or object-store URI, storage options
`labile_lancedb._lock`        a cross-process file lock (local directory)
`labile_lancedb._locks`       the lock of each namespace and of the whole store
`labile_lancedb._lease`       the writer lease (object store)
`labile_lancedb._txn`         the write buffer and the intent protocol (crash safety)
`labile_lancedb._carry`       deferred blocks' edge writes waiting for a commit
`labile_lancedb._freshness`   noticing other processes' commits
`labile_lancedb._spaces`      which namespaces are cached; loading them
`labile_lancedb._cache`       the cached structures (numpy node table, igraph edges)
`labile_lancedb._search`      exact / ANN vector search, full-text search
`labile_lancedb._maintenance` compaction and the ANN index
`labile_lancedb._rows`        arrow schemas and record <-> row conversion
`labile_lancedb._sql`         quoted SQL filters
`labile_lancedb._stats`       `LanceStore.stats`
============================  =====================================================
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any

import numpy as np
from numpy.typing import NDArray

from labile.plugin import (
    Direction,
    Edge,
    Node,
    NodeFilter,
    Observation,
    Scored,
    StoreError,
    get_logger,
)
from labile_lancedb import _erase, _rows, _search, _sql
from labile_lancedb._cache import clone, copy_node
from labile_lancedb._carry import Block, Carry, Entry
from labile_lancedb._engine import Engine
from labile_lancedb._migrations import migrate
from labile_lancedb._retry import retrying_read
from labile_lancedb._search import SearchMode
from labile_lancedb._stats import store_stats
from labile_lancedb.config import LanceStoreConfig

__all__ = ["LanceStore", "LanceStoreConfig", "SearchMode", "migrate"]

log = get_logger(__name__)


#: What a failed removal leaves: its batch is rolled back with it.
_UNDONE = "its batch is rolled back, nothing it removed is lost"


@contextmanager
def _engine_errors(what: str, outcome: str) -> Iterator[None]:
    """Raise LanceDB's (and the OS's) errors escaping the block as `StoreError` saying
    ``what`` failed and the ``outcome``, as a failed commit's already are."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"{what} failed ({type(exc).__name__}: {exc}); {outcome}") from exc


class LanceStore:
    """The LanceDB store (registered as ``lancedb``), the embedded default.

    Built as ``LanceStore(config, deps)``; ``deps.embedder`` names the vectors
    it holds (its ``name`` and ``dim`` are persisted, and reopening with
    another embedder fails). Semantics are those of the `labile._protocols.Store`
    contract and the reference `labile._memstore.MemoryStore`, with these
    documented differences:

    * The transaction spans namespaces: a `batch` opened inside another (even
      on another namespace, whose lock it then takes too) joins it and commits
      with the outermost block; an exception escaping the outermost block rolls
      back every write of the transaction.
    * ``metadata``/``attrs`` dictionaries must be JSON-serialisable (tuples
      come back as lists); text with lone surrogates is refused (`StoreError`).
    * Observation ids repeated within one `add_observations` call are refused.
    * Timestamps come back in UTC (the same instants).
    * BM25 statistics (document frequencies) are computed by LanceDB over the
      whole table, so scores — never results — depend on other namespaces.

    Beyond the protocol: `build_ann_index`, and a ``mode`` argument of
    `vector_search` (``"exact"`` / ``"ann"``) for benchmarks.

    Raises:
        StoreError: the embedder is missing, or the store cannot be opened
            (see `labile_lancedb._tables.LanceTables.check`).
    """

    def __init__(self, config: LanceStoreConfig | None = None, deps: Any = None) -> None:
        self.config = config or LanceStoreConfig()
        embedder = getattr(deps, "embedder", None)
        name, dim = getattr(embedder, "name", None), getattr(embedder, "dim", None)
        if not isinstance(name, str) or not name or not isinstance(dim, int) or dim < 1:
            raise StoreError(
                "LanceStore needs deps.embedder with a name and a positive integer dim "
                f"(the vectors it will hold); got {embedder!r}"
            )
        self.embedder_name, self.dim = name, dim
        self._engine = Engine(self.config, name, dim)
        self.path = self._engine.path
        self._lock = self._engine.lock
        self._lance = self._engine.tables
        self._spaces = self._engine.spaces
        self._carry = Carry()
        self._spaces.edge_overlay = self._carried_overlay

    @property
    def external_commits(self) -> int:
        """Commits of other processes this store has reloaded for (`labile.plugin.SharedStore`):
        the memory rebuilds its components when this moves."""
        return self._engine.external_commits

    # Private views for white-box tests (the crash tests among them).
    @property
    def _tables(self) -> dict[str, Any]:
        return self._lance.handles

    def _meta_read(self) -> dict[str, str]:
        return self._lance.meta_read()

    def _open_intents(self) -> dict[str, dict[str, int]]:
        """Namespaces whose ``meta`` row (newest version) shows an open intent."""
        meta = self._lance.latest_meta()
        return {k[3:]: v["intent"] for k, v in
                ((k, json.loads(raw)) for k, raw in meta.items() if k.startswith("ns:"))
                if v.get("intent")}

    def reading(self, namespace: str) -> AbstractContextManager[None]:
        """One logical read: check for other processes' commits once, on entry.

        Inside the block (on this thread) reads skip the per-call check for
        other processes' commits. Within two seconds of any commit that check
        cannot trust the version directory's timestamp and asks LanceDB for
        the version, a round trip of about 0.5 ms; a REALM search reads the
        store dozens of times, right after the previous query's feedback
        committed. Reads inside the block still see every commit completed
        before it was entered and this process's own writes; a batch started
        inside it still checks before writing.
        """
        return self._engine.reading(namespace)

    @contextmanager
    def batch(self, namespace: str) -> Iterator[None]:
        """Group the writes made inside the block into one crash-safe transaction.

        The writes are visible to reads at once and become durable together
        when the outermost block exits normally; if an exception escapes the
        outermost block every one of them is rolled back. A block nested in
        another (on any namespace) joins the enclosing transaction. A process
        killed inside the block leaves no trace of it (see `labile_lancedb._txn`).
        The outermost batch of a namespace first takes in the edits its
        `deferred` blocks carry.

        Raises:
            StoreError: the commit failed (the transaction was rolled back).
        """
        block = self._carry.active_here()
        if block is not None and self._engine.txn is None:
            block.promote()  # a write other than an edge upsert: the block becomes a batch
        with self._engine.batch(namespace):
            txn = self._engine.txn
            taken = self._absorb_carry(namespace) if (
                self._carry and txn is not None and txn.depth == 1 and txn.owned_here()
            ) else None
            yield
        if taken is not None:  # committed (an exception or a failed commit keeps the carry)
            self._carry.discard(taken)

    @contextmanager
    def deferred(self, namespace: str) -> Iterator[None]:
        """A block whose edge writes are seen at once but committed later, with other
        blocks' (`labile.plugin.DeferredStore`; semantics and what a crash loses:
        `labile_lancedb._carry`). Inside an open batch it joins the batch."""
        engine, carry, config = self._engine, self._carry, self.config
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
            with self.batch(namespace):  # durable at once / with the enclosing batch
                yield
            return
        # One writer at a time in this process, as for batches: another thread's
        # batch or deferred block waits until this block ends (the engine's lock).
        with engine.txn_lock:  # (the engine's own lock: no second one to order against it)
            stack = ExitStack()

            def promote() -> None:
                block.promoted = True
                stack.enter_context(self.batch(namespace))

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
                with self._lock:  # reloaded from the committed rows plus the carry
                    self._spaces.forget(written)
                raise
        if not block.promoted:
            self._end_deferred_block()

    def _end_deferred_block(self) -> None:
        """Count a deferred block that ended, and commit the carry once it is due."""
        carry, config = self._carry, self.config
        carry.blocks += 1
        if not carry.due(config.deferred_commit_every, config.deferred_max_age_s):
            return
        try:
            self.flush()
        except StoreError as exc:  # the block itself succeeded: keep carrying, retry later
            log.warning("lancedb_deferred_commit_failed",
                        edits=sum(map(len, carry.edges.values())),
                        error=f"{type(exc).__name__}: {exc}")

    def _carry_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        """`upsert_edges` inside a deferred block: checked like any write, then to the
        namespace's cache and the carry, no transaction."""
        with self._lock:
            _rows.check_edges(self._spaces.nodes(namespace), edges)
            graph = self._spaces.edges(namespace)
            for edge in edges:
                stored = clone(edge, namespace=namespace)
                seq = graph.seqs.get(edge.id)
                graph.put(stored, self._engine.next_seq(namespace) if seq is None else seq)
                self._carry.put(namespace, stored, graph.seqs[edge.id])

    def _carried_overlay(self, namespace: str) -> list[Entry]:
        """The carried edges of ``namespace`` whose ends are still nodes (for a reload)."""
        held = self._carry.edges.get(namespace)
        if not held:
            return []
        nodes = self._spaces.nodes(namespace)
        return [(e, seq) for e, seq in held.values()
                if nodes.get(e.src) is not None and nodes.get(e.dst) is not None]

    def _absorb_carry(self, namespace: str) -> dict[str, dict[str, Entry]]:
        """Write ``namespace``'s carried edges into its open transaction (its first
        writes); what was taken.

        Runs right after the outermost batch has caught up with other processes'
        commits, so an edge whose end was deleted meanwhile is dropped here.
        """
        taken = self._carry.taken(namespace)
        with self._lock:
            for ns, held in taken.items():
                nodes, graph = self._spaces.nodes(ns), self._spaces.edges(ns)
                pending = self._engine.write_buffer(ns)
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

    def flush(self) -> None:
        """Commit the waiting edits of `deferred` blocks now (none waiting: a no-op); a
        failed commit raises `StoreError` and the edits keep waiting."""
        for namespace in list(self._carry.edges):  # each under its own namespace's lock
            with self.batch(namespace):
                pass

    # -- observations ------------------------------------------------------------------
    def add_observations(self, namespace: str, observations: Sequence[Observation]) -> None:
        """Append observations to the verbatim log.

        Raises:
            StoreError: an id is already stored (or repeated in the call), or a
                text is not valid Unicode, or metadata is not JSON-serialisable;
                nothing is written.
        """
        self._engine.check_usable()
        self._engine.check_namespace(namespace)
        with self.batch(namespace), self._lock:
            ids = self._spaces.observation_ids(namespace)
            seen: set[str] = set()
            for obs in observations:
                if obs.id in ids or obs.id in seen:
                    raise StoreError(f"observation {obs.id!r} already stored in {namespace!r}")
                seen.add(obs.id)
                _rows.check_observation(obs)
            if not observations:
                return
            p = self._engine.write_buffer(namespace)
            for obs in observations:
                p.obs[obs.id] = (clone(obs, namespace=namespace), self._engine.next_seq(namespace))
                ids.add(obs.id)

    @retrying_read
    def existing_observation_ids(self, namespace: str, ids: Iterable[str]) -> set[str]:
        """The subset of ``ids`` already in the log (from the per-namespace id cache)."""
        with self._lock:
            self._engine.begin_read(namespace)
            known = self._spaces.observation_ids(namespace)
            return {i for i in ids if i in known}

    @retrying_read
    def get_observations(self, namespace: str, ids: Sequence[str]) -> list[Observation]:
        """Observations by id, in the order asked; unknown ids are left out."""
        with self._lock:
            self._engine.begin_read(namespace)
            known = self._spaces.observation_ids(namespace)
            wanted = [i for i in ids if i in known]
            if not wanted:
                return []
            found: dict[str, Observation] = {}
            pend = self._engine.uncommitted(namespace)
            if pend is not None:
                found.update((i, pend.obs[i][0]) for i in wanted if i in pend.obs)
            rest = [i for i in wanted if i not in found]
            if rest:
                found.update((o.id, o) for o in self._lance_observations(namespace, rest))
            return [found[i] for i in wanted if i in found]

    def _lance_observations(self, namespace: str, ids: list[str] | None) -> list[Observation]:
        """Committed observations of the namespace (``ids`` only, if given), in order."""
        where = _sql.namespace_is(namespace)
        if ids is not None:
            where += " AND " + _sql.in_list("key", [_rows.key(namespace, i) for i in ids])
        return _rows.observations_from(self._lance.scan("observations", where,
                                                        namespace=namespace))

    @retrying_read
    def iter_observations(self, namespace: str) -> Iterator[Observation]:
        """Every observation of the namespace, in insertion order."""
        with self._lock:
            self._engine.begin_read(namespace)
            out = self._lance_observations(namespace, None)
            pend = self._engine.uncommitted(namespace)
            if pend is not None:
                out.extend(o for o, _ in pend.obs.values())
            return iter(out)

    # -- nodes ---------------------------------------------------------------------------
    def upsert_nodes(self, namespace: str, nodes: Sequence[Node]) -> None:
        """Insert or update nodes by id.

        Raises:
            StoreError: a node would change the ``content`` of a stored node
                (content is evidence), or is not storable (bad text, attrs,
                embedding shape); nothing of the call is written.
        """
        self._engine.check_usable()
        self._engine.check_namespace(namespace)
        with self.batch(namespace), self._lock:
            table = self._spaces.nodes(namespace)
            for node in nodes:
                old = table.get(node.id)
                if old is not None and old.content != node.content:
                    raise StoreError(
                        f"node {node.id!r}: content is evidence and cannot be changed"
                    )
                _rows.check_node(node, self.dim)
            if not nodes:
                return
            p = self._engine.write_buffer(namespace)
            for node in nodes:
                emb = node.embedding
                stored = clone(node, namespace=namespace, embedding=None if emb is None else
                               np.array(emb, dtype=np.float32))
                seq = table.seq_of(node.id)
                if seq is None:
                    seq = self._engine.next_seq(namespace)
                    p.new_nodes.add(node.id)
                table.put(stored, seq)
                p.nodes[node.id] = (stored, seq)

    @retrying_read
    def get_nodes(self, namespace: str, ids: Sequence[str]) -> list[Node]:
        """Nodes by id, in the order asked; unknown ids are left out."""
        with self._lock:
            self._engine.begin_read(namespace)
            table = self._spaces.nodes(namespace)
            return [copy_node(n) for n in (table.get(i) for i in ids) if n is not None]

    @retrying_read
    def iter_nodes(self, namespace: str, where: NodeFilter | None = None) -> Iterator[Node]:
        """Every node passing ``where``, in insertion order."""
        with self._lock:
            self._engine.begin_read(namespace)
            table = self._spaces.nodes(namespace)
            if where is None:
                return iter([copy_node(n) for n in table.records])
            slots = np.flatnonzero(table.mask(where))
            return iter([copy_node(table.records[i]) for i in slots])

    @retrying_read
    def count_nodes(self, namespace: str, where: NodeFilter | None = None) -> int:
        """How many nodes pass ``where``."""
        with self._lock:
            self._engine.begin_read(namespace)
            table = self._spaces.nodes(namespace)
            return len(table) if where is None else int(table.mask(where).sum())

    # -- edges ---------------------------------------------------------------------------
    def upsert_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        """Insert or update edges by id (a weight change updates the row in place).

        Raises:
            StoreError: an end is not an existing node of the namespace, or an
                edge is not storable; nothing of the call is written.
        """
        self._engine.check_usable()
        self._engine.check_namespace(namespace)
        if self._carry.active_here() is not None and self._engine.txn is None:
            self._carry_edges(namespace, edges)  # to the cache and the carry only
            return
        with self.batch(namespace), self._lock:
            _rows.check_edges(self._spaces.nodes(namespace), edges)
            if not edges:
                return
            graph = self._spaces.edges(namespace)
            p = self._engine.write_buffer(namespace)
            for edge in edges:
                stored = clone(edge, namespace=namespace)
                seq = graph.seqs.get(edge.id)
                if seq is None:
                    seq = self._engine.next_seq(namespace)
                    p.new_edges.add(edge.id)
                graph.put(stored, seq)
                p.edges[edge.id] = (stored, seq)

    @retrying_read
    def get_edges(self, namespace: str, ids: Sequence[str]) -> list[Edge]:
        """Edges by id, in the order asked; unknown ids are left out."""
        with self._lock:
            self._engine.begin_read(namespace)
            records = self._spaces.edges(namespace).records
            return [clone(records[i]) for i in ids if i in records]

    @retrying_read
    def edges_of(
        self,
        namespace: str,
        node_ids: Collection[str],
        *,
        direction: Direction = "out",
        predicates: Collection[str] | None = None,
    ) -> list[Edge]:
        """Edges leaving (``out``), entering (``in``) or touching (``both``) the nodes.

        Served from the in-memory topology plus the write buffer, never from
        LanceDB. Order: for each node as given, its outgoing then incoming
        edges, each group sorted by edge id; no edge twice.

        Raises:
            StoreError: ``direction`` is not ``out``, ``in`` or ``both``.
        """
        if direction not in ("out", "in", "both"):
            raise StoreError(f"direction must be 'out', 'in' or 'both', got {direction!r}")
        with self._lock:
            self._engine.begin_read(namespace)
            graph = self._spaces.edges(namespace)
            modes = [m for m in ("out", "in") if direction in (m, "both")]
            seen: set[str] = set()
            ids: list[str] = []
            for node_id in node_ids:
                for mode in modes:
                    for eid in sorted(graph.incident(node_id, mode)):
                        if eid not in seen:
                            seen.add(eid)
                            ids.append(eid)
            edges = [graph.records[i] for i in ids]
            if predicates is not None:
                wanted = set(predicates)
                edges = [e for e in edges if e.predicate in wanted]
            return [clone(e) for e in edges]

    @retrying_read
    def iter_edges(self, namespace: str) -> Iterator[Edge]:
        """Every edge of the namespace, in insertion order."""
        with self._lock:
            self._engine.begin_read(namespace)
            return iter([clone(e) for e in self._spaces.edges(namespace).records.values()])

    @retrying_read
    def count_edges(self, namespace: str) -> int:
        """How many edges the namespace has."""
        with self._lock:
            self._engine.begin_read(namespace)
            return len(self._spaces.edges(namespace))

    # -- search ----------------------------------------------------------------------------
    @retrying_read
    def vector_search(
        self,
        namespace: str,
        vector: NDArray[np.float32],
        k: int,
        *,
        where: NodeFilter | None = None,
        mode: SearchMode = "auto",
    ) -> list[Scored]:
        """Top-``k`` nodes by cosine similarity, best first (ties: insertion order).

        ``mode="auto"`` searches the in-memory matrix exactly, unless the
        namespace holds more than ``ann_threshold`` nodes and the filter leaves
        more than a few thousand candidates: then the quantized scan answers
        (binary codes pick candidates, re-scored exactly). ``"exact"``,
        ``"quantized"`` and ``"ann"`` (the IVF_RQ index) force a path
        (``"ann"`` falls back to exact when no index exists).

        Raises:
            StoreError: the vector's length is not the store's dimension.
        """
        with self._lock:
            self._engine.begin_read(namespace)
            q = np.asarray(vector, dtype=np.float32).reshape(-1)
            if q.shape != (self.dim,):
                raise StoreError(f"query vector has {q.shape[0]} dims; this store holds "
                                 f"{self.dim}-d vectors ({self.embedder_name})")
            table = self._spaces.nodes(namespace)
            if k <= 0 or len(table) == 0:
                return []
            q = q / max(float(np.linalg.norm(q)), 1e-12)
            return _search.vector_search(self._lance, namespace, table, q, k, where, mode,
                                         flush=lambda: self._engine.flush_if_owner(namespace))

    @retrying_read
    def text_search(
        self, namespace: str, text: str, k: int, *, where: NodeFilter | None = None
    ) -> list[Scored]:
        """Top-``k`` nodes by BM25 over `Node.search_text`, best first (score > 0).

        Stemming, stop words, lower case, ASCII folding; the query's words are
        OR-ed. A namespace of at most `labile_lancedb._lexical.EXACT_TEXT_MAX_NODES`
        nodes is searched in memory with its own BM25 statistics, so other
        namespaces never move its scores; a larger one by LanceDB's full-text
        index (table-wide statistics), which also scans rows written after it
        was built (`optimize` folds them in). Inside a batch, this thread's
        uncommitted nodes are written out first so they are found.
        """
        with self._lock:
            self._engine.begin_read(namespace)
            if not isinstance(text, str):
                raise StoreError(f"text must be a string, got {type(text).__name__}")
            _rows.check_text("query text", text)
            table = self._spaces.nodes(namespace)
            if k <= 0 or not text.strip() or len(table) == 0:
                return []
            self._engine.flush_if_owner(namespace)
            return _search.text_search(self._lance, namespace, table, text, k, where)

    def build_ann_index(self) -> float:
        """(Re)train the IVF_RQ cosine index over every row of ``nodes``; returns seconds.

        Partitions: ``rows / ann_partition_rows``. Called automatically once the
        table reaches ``ann_threshold`` rows and again whenever it has grown by
        ``ann_retrain_growth``; `optimize` folds rows added in between into the
        index incrementally.
        """
        return self._engine.build_ann_index()

    # -- lifecycle -----------------------------------------------------------------------
    @retrying_read
    def namespaces(self) -> list[str]:
        """Every namespace that holds at least one row (uncommitted writes of an open batch too)."""
        with self._lock:
            self._engine.begin_read(None)
            known = self._spaces.known_namespaces
            if known is None:
                known = self._lance.namespaces_with_rows()
                txn = self._engine.txn
                if txn is not None:
                    known.update(ns for ns, p in txn.pending.items() if p)
                self._spaces.known_namespaces = known
            return sorted(known)

    def delete(
        self,
        namespace: str,
        *,
        observation_ids: Collection[str] = (),
        node_ids: Collection[str] = (),
        edge_ids: Collection[str] = (),
    ) -> None:
        """Remove records (and the edges of removed nodes); see `labile_lancedb._erase`.

        The rows stay in earlier table versions until `optimize` drops those
        older than ``keep_versions_s``, or `erase_history` drops them all.
        """
        self._engine.check_usable()
        self._engine.check_namespace(namespace)
        with _engine_errors(f"removing records of {namespace!r} from {self.path}", _UNDONE), \
                self.batch(namespace), self._lock:
            _erase.delete(self._engine, namespace, set(observation_ids), set(node_ids),
                          set(edge_ids))

    def purge(self, namespace: str) -> None:
        """Remove every row of ``namespace`` (earlier versions keep them, as for `delete`)."""
        self._engine.check_usable()
        self._engine.check_namespace(namespace)
        with _engine_errors(f"purging {namespace!r} from {self.path}", _UNDONE), \
                self.batch(namespace), self._lock:
            _erase.purge(self._engine, namespace)

    def erase_history(self) -> None:
        """Drop every earlier table version and rebuild the indexes from the rows that
        remain, so removed rows are gone from disk (not inside a batch)."""
        self._engine.erase_history()

    def repair_storage(self) -> dict[str, Any]:
        """Bring a store left in any intermediate state (a writer or an erase killed at
        any point, by this build or an older one) back to a clean one; returns what was
        done: ``intents_undone`` and ``pins_healed`` (namespaces), ``erase_finished``.
        Holds the store exclusively (``labile repair`` runs it)."""
        return self._engine.repair_storage()

    def optimize(self) -> None:
        """Compact the tables, drop versions older than ``keep_versions_s``, and fold
        new rows into the full-text and vector indexes (retraining the vector index
        when the table has grown enough). Safe to call any time; inside a batch it
        runs when the transaction commits.
        """
        with _engine_errors(f"optimizing {self.path}",
                            "every record stands; the store is compacted on a later call"):
            self._engine.optimize()

    @retrying_read
    def stats(self, namespace: str | None = None) -> dict[str, Any]:
        """Counts, table fragments, on-disk bytes and index state.

        With a namespace, the counts are that namespace's (uncommitted writes
        of an open batch included); without, they are the committed rows of
        every namespace.
        """
        with self._lock:
            self._engine.begin_read(namespace)
            return store_stats(self._engine, namespace, self.namespaces)

    def close(self) -> None:
        """Release the store (and delete a temporary directory). Idempotent.

        Edits waiting from `deferred` blocks are committed first.

        Raises:
            StoreError: called inside an open batch of this thread, or the waiting
                edits could not be committed (they are lost; the store is closed).
        """
        try:
            if self._carry and not self._engine.closed:
                self.flush()
        except BaseException:
            log.error("lancedb_deferred_edits_lost", path=str(self.path))
            raise
        finally:
            self._engine.close()

    def __enter__(self) -> LanceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LanceStore(path={str(self.path)!r}, embedder={self.embedder_name!r})"

