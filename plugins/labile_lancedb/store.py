"""`LanceStore`: the embedded, durable `labile.protocols.Store` on LanceDB (``lancedb``).

Layout. One LanceDB directory per memory with four tables: ``observations``
(the verbatim append-only log), ``nodes`` (records, a fixed-size float32
``embedding`` column with a ``has_embedding`` flag, and ``search_text`` under a
native BM25 full-text index), ``edges``, and ``meta`` (storage schema version,
embedder name and dimension, the commit intent, the ``seq`` counter). Every row
carries its namespace and a ``key = namespace + "\\x1f" + id`` primary key; every
query is confined to one namespace by an SQL clause whose literals are quoted.

Reads are served from per-namespace caches (see `labile_lancedb._cache`):
node records with numpy filter columns and a normalised vector matrix, edge
records with the topology in igraph, the set of observation ids. Only
full-text search, approximate vector search in large namespaces and the
observation log itself go to LanceDB.

Writes are transactional. The outermost `batch` block opens one store-wide
transaction (nested blocks, on any namespace, join it); writes are applied to
the caches at once (so reads inside the block see them) and buffered; at
block exit the buffer is written with one LanceDB commit per table (few large
fragments rather than many small ones). Crash safety comes from an intent
record: before the first data write of a transaction the current version of
each data table is saved in ``meta``; after the last one the intent is
cleared. A process killed in between leaves the intent behind, and the next
open restores each table to its recorded version, so a batch is either
entirely durable or entirely absent. A file lock held from intent to clear
tells a live writer from a dead one. Within a commit, observations are written
before the nodes citing them and nodes before the edges joining them.

One process writes at a time; any number may read (they see each commit once
``read_consistency_s`` has passed, and drop their caches when they notice it).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs
import numpy as np
import structlog
from numpy.typing import NDArray

from labile.errors import StoreError
from labile.model import Edge, Node, NodeFilter, Observation, utcnow
from labile.protocols import Direction, Scored
from labile_lancedb import _rows, _sql
from labile_lancedb._cache import EdgeGraph, NodeTable, Space, clone, copy_node, top_k
from labile_lancedb.config import LanceStoreConfig

if TYPE_CHECKING:
    import igraph
    import pyarrow as pa

__all__ = ["LanceStore", "LanceStoreConfig", "migrate"]

log = structlog.get_logger(__name__)

DATA_TABLES: Final = ("observations", "nodes", "edges")
LOCK_FILE: Final = ".labile.lock"
#: Namespaces with at most this many filter candidates are searched exactly even
#: when the ANN index applies: gathering a few thousand vectors beats an index probe
#: and is exact.
EXACT_CANDIDATES: Final = 4096
#: How long an opener waits for the write lock before concluding a writer is alive.
_OPEN_WAIT_S: Final = 2.0
#: A version-directory fingerprint older than this is trusted to reveal any newer commit.
_STAMP_TRUST_NS: Final = 2_000_000_000

SearchMode = Literal["auto", "exact", "ann"]


# -- schema migrations ----------------------------------------------------------
#: ``from_version -> step`` upgrading a store in place to ``from_version + 1``.
#: Empty: version 1 is the first layout. A future layout change adds a step here
#: and bumps `labile_lancedb._rows.SCHEMA_VERSION`.
MIGRATIONS: dict[int, Callable[[Any], None]] = {}


def migrate(db: Any, found: int, current: int = _rows.SCHEMA_VERSION, *, where: str = "") -> None:
    """Bring a store written with storage schema ``found`` to ``current``, or refuse.

    Raises:
        StoreError: the store is newer than this code (never downgraded), or no
            migration chain leads from ``found`` to ``current``. The message
            names both version numbers.
    """
    if found > current:
        raise StoreError(
            f"store {where} was written with storage schema version {found}, newer than "
            f"the version {current} this labile reads; upgrade labile to open it"
        )
    while found < current:
        step = MIGRATIONS.get(found)
        if step is None:
            raise StoreError(
                f"store {where} uses storage schema version {found}, older than the version "
                f"{current} this labile reads, and no migration from version {found} exists"
            )
        step(db)
        found += 1


# -- process-level write lock -----------------------------------------------------
class _FileLock:
    """An exclusive `fcntl.flock` on the store's lock file, re-entrant per instance.

    The kernel releases it when the holder dies (even by ``kill -9``), which is
    what lets an opener tell an abandoned intent from a commit in progress.
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
        if not self.try_acquire(self.timeout_s):
            raise StoreError(
                f"another process holds the write lock {self.path} (a commit in "
                f"progress) for more than {self.timeout_s:g} s"
            )

    def try_acquire(self, timeout_s: float) -> bool:
        """Take the lock, waiting at most ``timeout_s``; whether it was taken."""
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
                time.sleep(0.01)
        self._depth = 1
        return True

    def release(self) -> None:
        if self._depth == 0 or self._fd is None:
            return
        self._depth -= 1
        if self._depth == 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    @contextmanager
    def held(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # also releases the lock
            self._fd = None
            self._depth = 0


# -- transactions ---------------------------------------------------------------
@attrs.define
class _Pending:
    """One namespace's writes not yet sent to LanceDB."""

    obs: dict[str, tuple[Observation, int]] = attrs.field(factory=dict)
    nodes: dict[str, tuple[Node, int]] = attrs.field(factory=dict)
    new_nodes: set[str] = attrs.field(factory=set)
    edges: dict[str, tuple[Edge, int]] = attrs.field(factory=dict)
    new_edges: set[str] = attrs.field(factory=set)

    def __bool__(self) -> bool:
        return bool(self.obs or self.nodes or self.edges)


@attrs.define
class _Txn:
    """The open store-wide transaction."""

    owner: int
    depth: int = 0
    pending: dict[str, _Pending] = attrs.field(factory=dict)
    touched: set[str] = attrs.field(factory=set)
    #: Table versions recorded in ``meta`` before the first data write.
    intent: dict[str, int] | None = None
    optimize_requested: bool = False

    def dirty(self) -> bool:
        return self.intent is not None or any(self.pending.values())


class LanceStore:
    """The LanceDB store (registered as ``lancedb``), the embedded default.

    Built as ``LanceStore(config, deps)``; ``deps.embedder`` names the vectors
    it holds (its ``name`` and ``dim`` are persisted, and reopening with
    another embedder fails). Semantics are those of the `labile.protocols.Store`
    contract and the reference `labile.memstore.MemoryStore`, with these
    documented differences:

    * The transaction is store-wide: a `batch` opened inside another (even on
      another namespace) joins it and commits with the outermost block; an
      exception escaping the outermost block rolls back every write of the
      transaction.
    * ``metadata``/``attrs`` dictionaries must be JSON-serialisable (tuples
      come back as lists); text with lone surrogates is refused (`StoreError`).
    * Observation ids repeated within one `add_observations` call are refused.
    * Timestamps come back in UTC (the same instants).
    * BM25 statistics (document frequencies) are computed by LanceDB over the
      whole table, so scores — never results — depend on other namespaces.

    Beyond the protocol: `hybrid_search` (reciprocal rank fusion), `graph`
    (the igraph topology of a namespace), `build_ann_index`, and a ``mode``
    argument of `vector_search` (``"exact"`` / ``"ann"``) for benchmarks.
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
        self._txn_lock = threading.RLock()  # held by the writing thread through a batch
        self._lock = threading.RLock()  # guards caches and tables for one operation
        self._txn: _Txn | None = None
        self._spaces: dict[str, Space] = {}
        self._namespaces: set[str] | None = None
        self._closed = False
        self._broken: str | None = None
        self._temp = self.config.path in ("", "memory://")
        self._commits_since_optimize = 0
        self._last_sync = 0.0
        self._stamp: tuple[int, int, int] | None = None
        self._reading = threading.local()  # depth of `reading` blocks, per thread
        self._ann_cache: bool | None = None
        self._nodes_rows_cache: int | None = None
        self._schemas: dict[str, pa.Schema] = {}
        self._tables: dict[str, Any] = {}
        self._db: Any = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self.path = self._prepare_dir()
        self._flock = _FileLock(self.path / LOCK_FILE, self.config.lock_timeout_s)
        try:
            self._open()
        except BaseException as exc:
            self._flock.close()
            if self._finalizer is not None:
                self._finalizer()
            if isinstance(exc, Exception) and not isinstance(exc, StoreError):
                raise StoreError(f"cannot open the store at {self.path}: "
                                 f"{type(exc).__name__}: {exc}") from exc
            raise

    # -- opening ----------------------------------------------------------------
    def _prepare_dir(self) -> Path:
        if self._temp:
            path = Path(tempfile.mkdtemp(prefix="labile-lancedb-"))
            self._finalizer = weakref.finalize(self, shutil.rmtree, str(path), True)
            return path
        path = Path(self.config.path).expanduser().absolute()
        if path.exists() and not path.is_dir():
            raise StoreError(
                f"store path {path} is a regular file, not a directory; point [store] path "
                "at a directory (it is created if missing)"
            )
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the store directory {path}: {exc.strerror or exc}"
            ) from None
        if not os.access(path, os.W_OK | os.X_OK):
            raise StoreError(f"store directory {path} is not writable by this process")
        return path

    def _open(self) -> None:
        import lancedb  # lazy: the import costs about 1.4 s

        self._schemas = _rows.schemas(self.dim)
        try:
            self._db = lancedb.connect(
                str(self.path),
                read_consistency_interval=timedelta(seconds=self.config.read_consistency_s),
            )
            existing = set(self._db.list_tables().tables)
        except Exception as exc:
            raise StoreError(f"cannot open LanceDB at {self.path}: {exc}") from exc
        if "meta" not in existing:
            with self._flock.held():
                existing = set(self._db.list_tables().tables)
                if "meta" not in existing:
                    self._initialise(existing)
        for name in (*DATA_TABLES, "meta"):
            if name not in self._tables:
                self._tables[name] = self._db.open_table(name)
        meta = self._meta_read()
        self._check_meta(meta)
        for name in DATA_TABLES:
            self._check_schema(name)
        if meta.get("intent"):
            # The writer holds the lock from intent to clear, and the kernel drops it
            # when the writer dies: a free lock means the intent was abandoned.
            if self._flock.try_acquire(min(self.config.lock_timeout_s, _OPEN_WAIT_S)):
                try:
                    self._meta_table.checkout_latest()
                    meta = self._meta_read()
                    if meta.get("intent"):
                        self._recover(json.loads(meta["intent"]))
                        meta = self._meta_read()
                finally:
                    self._flock.release()
            else:  # a live writer is mid-commit: read what is committed so far
                log.info("lancedb_writer_active", path=str(self.path))
        if self._missing_indexes():  # a store from an older build may lack some
            with self._flock.held():
                self._ensure_indexes()
        self._seq = int(meta.get("next_seq", "1"))
        self._ann_trained = int(meta.get("ann_trained_rows", "0"))
        self._meta_version = self._meta_table.version
        self._last_sync = time.monotonic()
        log.debug("lancedb_store_opened", path=str(self.path), embedder=self.embedder_name,
                  dim=self.dim)

    def _initialise(self, existing: set[str]) -> None:
        """Create the tables and indexes of a new store; ``meta`` last marks it complete."""
        import pyarrow as pa

        for name in DATA_TABLES:
            if name in existing:
                # Left by an open that died before writing meta: reuse it only if empty.
                tbl = self._db.open_table(name)
                if tbl.count_rows() > 0:
                    raise StoreError(
                        f"{self.path} holds a LanceDB table {name!r} with rows but no labile "
                        "meta table: it is not a labile store"
                    )
                self._db.drop_table(name)
            self._tables[name] = self._db.create_table(name, schema=self._schemas[name])
        self._ensure_indexes()
        if "meta" in existing:
            self._db.drop_table("meta")
        now = utcnow().isoformat()
        rows = {"schema_version": str(_rows.SCHEMA_VERSION), "embedder_name": self.embedder_name,
                "embedder_dim": str(self.dim), "created_at": now, "intent": "", "next_seq": "1",
                "ann_trained_rows": "0"}
        data = pa.table({"key": list(rows), "value": list(rows.values())},
                        schema=self._schemas["meta"])
        self._tables["meta"] = self._db.create_table("meta", data=data)
        log.debug("lancedb_store_created", path=str(self.path), embedder=self.embedder_name,
                 dim=self.dim)

    def _fts_config(self) -> Any:
        from lancedb.index import FTS

        return FTS(language=self.config.fts_language, stem=True, remove_stop_words=True,
                   lower_case=True, ascii_folding=True)

    def _check_meta(self, meta: dict[str, str]) -> None:
        if "schema_version" not in meta:
            raise StoreError(f"{self.path}: the meta table has no schema_version; not a labile "
                             "store, or a damaged one")
        migrate(self._db, int(meta["schema_version"]), where=str(self.path))
        name, dim = meta.get("embedder_name"), int(meta.get("embedder_dim", "0"))
        if name != self.embedder_name or dim != self.dim:
            raise StoreError(
                f"store {self.path} holds vectors of embedder {name!r} ({dim}-d), but this "
                f"pipeline uses embedder {self.embedder_name!r} ({self.dim}-d); open it with "
                "the same embedder, or use another store path"
            )

    def _check_schema(self, name: str) -> None:
        have, want = self._tables[name].schema, self._schemas[name]
        if [(f.name, f.type) for f in have] != [(f.name, f.type) for f in want]:
            raise StoreError(f"{self.path}: table {name!r} does not have the expected columns; "
                             "the store is damaged or was written by other software")

    def _recover(self, versions: dict[str, int]) -> None:
        """Undo a transaction that a dead process left half-written."""
        log.warning("lancedb_store_recovering", path=str(self.path), versions=versions)
        self._restore(versions)
        self._meta_put({"intent": ""})

    def _restore(self, versions: dict[str, int]) -> None:
        for name, version in versions.items():
            tbl = self._tables[name]
            tbl.checkout_latest()
            if tbl.version != version:
                tbl.restore(version)
        # restore() also brings back the index set of the old version: re-create what a
        # later version had added (the FTS index in particular, or FTS queries fail).
        self._ensure_indexes()
        self._ann_cache = None
        self._nodes_rows_cache = None

    def _ensure_indexes(self) -> None:
        """Create every index the tables should have and lack.

        Keys get a BTree (upserts and lookups); namespace and the node columns
        that filters test get bitmaps (a prefilter over a bitmap costs LanceDB
        a quarter of a column scan); ``search_text`` gets the FTS index.
        """
        from lancedb.index import Bitmap, BTree

        configs = {"key": BTree(), "namespace": Bitmap(), "has_embedding": Bitmap(),
                   "visible": Bitmap(), "kind": Bitmap(), "search_text": self._fts_config()}
        for name, column in self._missing_indexes():
            self._tables[name].create_index(column, config=configs[column])

    def _missing_indexes(self) -> list[tuple[str, str]]:
        """``(table, column)`` of every expected index that does not exist."""
        missing = []
        for name in DATA_TABLES:
            have = {tuple(ix.columns) for ix in self._tables[name].list_indices()}
            wanted = ["key", "namespace"]
            if name == "nodes":
                wanted += ["has_embedding", "visible", "kind", "search_text"]
            missing += [(name, col) for col in wanted if (col,) not in have]
        return missing

    # -- meta -------------------------------------------------------------------
    @property
    def _meta_table(self) -> Any:
        return self._tables["meta"]

    def _meta_read(self) -> dict[str, str]:
        rows = self._meta_table.to_arrow().to_pylist()
        return {r["key"]: r["value"] for r in rows}

    def _meta_put(self, items: dict[str, str]) -> None:
        import pyarrow as pa

        data = pa.table({"key": list(items), "value": list(items.values())},
                        schema=self._schemas["meta"])
        (self._meta_table.merge_insert("key").when_matched_update_all()
         .when_not_matched_insert_all().execute(data))
        self._meta_version = self._meta_table.version

    # -- guards -----------------------------------------------------------------
    def _check_usable(self) -> None:
        if self._closed:
            raise StoreError("this LanceStore is closed")
        if self._broken:
            raise StoreError(f"this LanceStore needs recovery ({self._broken}); reopen it")

    @staticmethod
    def _check_ns(namespace: object) -> str:
        if not isinstance(namespace, str) or not namespace:
            raise StoreError(f"namespace must be a non-empty string, got {namespace!r}")
        if _rows.KEY_SEP in namespace:
            raise StoreError("namespace must not contain the unit separator '\\x1f'")
        _rows.check_text("namespace", namespace)
        return namespace

    def _begin_read(self, namespace: str | None) -> None:
        self._check_usable()
        if namespace is not None:
            self._check_ns(namespace)
        if not getattr(self._reading, "depth", 0):
            self._sync_external()

    @contextmanager
    def reading(self, namespace: str) -> Iterator[None]:
        """One logical read: check for other processes' commits once, on entry.

        Inside the block (on this thread) reads skip the per-call check that
        `_sync_external` makes. Within two seconds of any commit that check
        cannot trust the version directory's timestamp and asks LanceDB for
        the version, a round trip of about 0.5 ms; a REALM search reads the
        store dozens of times, right after the previous query's feedback
        committed. Reads inside the block still see every commit completed
        before it was entered and this process's own writes; a batch started
        inside it still checks before writing.
        """
        self._check_usable()
        self._check_ns(namespace)
        depth = getattr(self._reading, "depth", 0)
        if depth == 0:
            with self._lock:
                self._sync_external()
        self._reading.depth = depth + 1
        try:
            yield
        finally:
            self._reading.depth = depth

    def _meta_stamp(self) -> tuple[int, int, int] | None:
        """A cheap fingerprint of ``meta``'s version directory (one ``stat``).

        A commit adds a manifest file there, which changes the directory's
        mtime. Asking LanceDB for the version instead costs a round trip to
        its event-loop thread: 0.25 ms idle, several ms on a loaded machine,
        which would dominate a 1 ms in-memory search.
        """
        try:
            st = os.stat(self.path / "meta.lance" / "_versions")
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_nlink)

    def _sync_external(self) -> None:
        """Drop the caches if another process committed since we last looked.

        Every commit rewrites ``meta`` (intent set and cleared), so its version
        changing behind our back means another writer was here. Checked at most
        every ``read_consistency_s`` seconds, never inside our own transaction.
        The directory fingerprint short-cuts the check when nothing changed
        since well before the last look (a change within the filesystem's
        timestamp granularity of the last look could keep the same mtime, so
        recent fingerprints are not trusted).
        """
        if self._txn is not None:
            return
        now, every = time.monotonic(), self.config.read_consistency_s
        if every and now - self._last_sync < every:
            return
        self._last_sync = now
        stamp = self._meta_stamp()
        if (stamp is not None and stamp == self._stamp
                and time.time_ns() - stamp[0] > _STAMP_TRUST_NS):
            return
        version = self._meta_table.version
        self._stamp = stamp
        if version == self._meta_version:
            return
        log.debug("lancedb_external_commit", seen=version, known=self._meta_version)
        for name in DATA_TABLES:
            self._tables[name].checkout_latest()
        self._spaces.clear()
        self._namespaces = None
        self._ann_cache = None
        self._nodes_rows_cache = None
        meta = self._meta_read()
        self._seq = max(self._seq, int(meta.get("next_seq", "1")))
        self._ann_trained = int(meta.get("ann_trained_rows", "0"))
        self._meta_version = version

    # -- caches -----------------------------------------------------------------
    def _space(self, namespace: str) -> Space:
        space = self._spaces.get(namespace)
        if space is None:
            space = self._spaces[namespace] = Space()
        return space

    def _scan(self, table: str, where: str, columns: Sequence[str] | None = None) -> pa.Table:
        q = self._tables[table].search().where(where)
        if columns is not None:
            q = q.select(list(columns))
        return q.limit(None).to_arrow()

    def _node_table(self, namespace: str) -> NodeTable:
        space = self._space(namespace)
        if space.nodes is None:
            t0 = time.perf_counter()
            cols = [f.name for f in self._schemas["nodes"] if f.name not in ("key", "search_text")]
            data = self._scan("nodes", _sql.namespace_is(namespace), cols)
            table = NodeTable(self.dim)
            nodes, seqs, t_start, t_end = _rows.nodes_from(data, self.dim)
            del data
            table.load(nodes, seqs, t_start, t_end, _rows.NULL_US)
            space.nodes = table
            if len(table) > 1000:
                log.info("lancedb_nodes_loaded", namespace=namespace, nodes=len(table),
                         ms=round((time.perf_counter() - t0) * 1000, 1))
        return space.nodes

    def _edge_graph(self, namespace: str) -> EdgeGraph:
        space = self._space(namespace)
        if space.edges is None:
            cols = [f.name for f in self._schemas["edges"] if f.name != "key"]
            graph = EdgeGraph()
            for edge, seq in _rows.edges_from(self._scan("edges", _sql.namespace_is(namespace),
                                                         cols)):
                graph.put(edge, seq)
            space.edges = graph
        return space.edges

    def _obs_ids(self, namespace: str) -> set[str]:
        space = self._space(namespace)
        if space.obs_ids is None:
            data = self._scan("observations", _sql.namespace_is(namespace), ["id"])
            space.obs_ids = set(data.column("id").to_pylist())
        return space.obs_ids

    def _next_seq(self) -> int:
        seq = self._seq
        self._seq += 1
        return seq

    def _pending(self, namespace: str) -> _Pending:
        txn = self._txn
        assert txn is not None
        txn.touched.add(namespace)
        if self._namespaces is not None:
            self._namespaces.add(namespace)
        p = txn.pending.get(namespace)
        if p is None:
            p = txn.pending[namespace] = _Pending()
        return p

    # -- transactions -------------------------------------------------------------
    @contextmanager
    def batch(self, namespace: str) -> Iterator[None]:
        """Group the writes made inside the block into one crash-safe transaction.

        The writes are visible to reads at once and become durable together
        when the outermost block exits normally; if an exception escapes the
        outermost block every one of them is rolled back. A block nested in
        another (on any namespace) joins the enclosing transaction. A process
        killed inside the block leaves no trace of it (see the module docs).

        Raises:
            StoreError: the commit failed (the transaction was rolled back).
        """
        self._check_usable()
        self._check_ns(namespace)
        with self._txn_lock:
            txn = self._txn
            outer = txn is None
            if txn is None:
                with self._lock:
                    self._sync_external()
                txn = self._txn = _Txn(owner=threading.get_ident())
            txn.depth += 1
            try:
                yield
            except BaseException:
                txn.depth -= 1
                if outer:
                    self._txn = None
                    self._rollback(txn)
                raise
            txn.depth -= 1
            if outer:
                self._txn = None
                self._commit(txn)

    def _commit(self, txn: _Txn) -> None:
        if not txn.dirty():
            if txn.optimize_requested:
                self.optimize()
            return
        with self._lock:
            try:
                self._flush(txn)
                self._meta_put({"intent": "", "next_seq": str(self._seq)})
            except Exception as exc:
                self._rollback(txn)
                raise StoreError(f"commit to {self.path} failed and was rolled back: "
                                 f"{type(exc).__name__}: {exc}") from exc
            except BaseException:
                self._rollback(txn)
                raise
            txn.intent = None
            self._flock.release()
            self._commits_since_optimize += 1
            try:
                if (txn.optimize_requested
                        or self._commits_since_optimize >= self.config.optimize_every):
                    self._optimize_now()
                self._maybe_build_ann()
            except Exception as exc:  # the batch is durable; maintenance can wait
                log.error("lancedb_maintenance_failed", path=str(self.path),
                          error=f"{type(exc).__name__}: {exc}")

    def _flush(self, txn: _Txn) -> None:
        """Send the transaction's buffered writes to LanceDB (intent first)."""
        import pyarrow as pa

        if not any(txn.pending.values()):
            return
        if txn.intent is None:
            self._flock.acquire()
            try:
                versions = {name: self._tables[name].version for name in DATA_TABLES}
                self._meta_put({"intent": json.dumps(versions)})
            except BaseException:
                self._flock.release()
                raise
            txn.intent = versions
        schemas = self._schemas
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
                    target.append(_rows.nodes_table(ns, nrows, schemas["nodes"], self.dim))
            for target, new in ((edge_add, True), (edge_merge, False)):
                erows = [v for k, v in p.edges.items() if (k in p.new_edges) == new]
                if erows:
                    target.append(_rows.edges_table(ns, erows, schemas["edges"]))
        # Order matters for readers of a half-written commit and for the invariants:
        # observations before the nodes citing them, nodes before the edges joining them.
        if obs:
            self._tables["observations"].add(pa.concat_tables(obs))
        if node_add:
            self._tables["nodes"].add(pa.concat_tables(node_add))
        if node_merge:
            self._merge("nodes", pa.concat_tables(node_merge))
        self._nodes_rows_cache = None
        if edge_add:
            self._tables["edges"].add(pa.concat_tables(edge_add))
        if edge_merge:
            self._merge("edges", pa.concat_tables(edge_merge))
        txn.pending.clear()

    def _merge(self, table: str, data: pa.Table) -> None:
        (self._tables[table].merge_insert("key").when_matched_update_all()
         .when_not_matched_insert_all().execute(data))

    def _rollback(self, txn: _Txn) -> None:
        with self._lock:
            try:
                if txn.intent is not None:
                    self._restore(txn.intent)
                    self._meta_put({"intent": ""})
            except Exception as exc:
                # The intent stays in meta: the next open restores the tables.
                self._broken = f"rollback failed: {type(exc).__name__}: {exc}"
                log.error("lancedb_rollback_failed", path=str(self.path), error=self._broken)
            finally:
                if txn.intent is not None:
                    self._flock.release()
                    txn.intent = None
                for ns in txn.touched:
                    self._spaces.pop(ns, None)
                self._namespaces = None

    def _flush_if_owner(self, namespace: str) -> None:
        """Make this thread's uncommitted writes in ``namespace`` visible to LanceDB queries.

        Full-text and ANN searches run inside LanceDB, which cannot see the
        in-memory buffer; they write it out first (under the transaction's
        intent, so a rollback or a crash still undoes it).
        """
        txn = self._txn
        if txn is None or txn.owner != threading.get_ident():
            return
        p = txn.pending.get(namespace)
        if p:
            self._flush(txn)

    # -- observations -------------------------------------------------------------
    def add_observations(self, namespace: str, observations: Sequence[Observation]) -> None:
        """Append observations to the verbatim log.

        Raises:
            StoreError: an id is already stored (or repeated in the call), or a
                text is not valid Unicode, or metadata is not JSON-serialisable;
                nothing is written.
        """
        self._check_usable()
        self._check_ns(namespace)
        with self.batch(namespace), self._lock:
            ids = self._obs_ids(namespace)
            seen: set[str] = set()
            for obs in observations:
                if obs.id in ids or obs.id in seen:
                    raise StoreError(f"observation {obs.id!r} already stored in {namespace!r}")
                seen.add(obs.id)
                _rows.check_observation(obs)
            if not observations:
                return
            p = self._pending(namespace)
            for obs in observations:
                p.obs[obs.id] = (clone(obs, namespace=namespace), self._next_seq())
                ids.add(obs.id)

    def existing_observation_ids(self, namespace: str, ids: Iterable[str]) -> set[str]:
        """The subset of ``ids`` already in the log (from the per-namespace id cache)."""
        with self._lock:
            self._begin_read(namespace)
            known = self._obs_ids(namespace)
            return {i for i in ids if i in known}

    def get_observations(self, namespace: str, ids: Sequence[str]) -> list[Observation]:
        """Observations by id, in the order asked; unknown ids are left out."""
        with self._lock:
            self._begin_read(namespace)
            known = self._obs_ids(namespace)
            wanted = [i for i in ids if i in known]
            if not wanted:
                return []
            found: dict[str, Observation] = {}
            txn = self._txn
            pend = txn.pending.get(namespace) if txn is not None else None
            if pend is not None:
                found.update((i, pend.obs[i][0]) for i in wanted if i in pend.obs)
            rest = [i for i in wanted if i not in found]
            if rest:
                where = _sql.in_list("key", [_rows.key(namespace, i) for i in rest])
                data = self._scan("observations", f"{_sql.namespace_is(namespace)} AND {where}")
                found.update((o.id, o) for o in _rows.observations_from(data))
            return [found[i] for i in wanted if i in found]

    def iter_observations(self, namespace: str) -> Iterator[Observation]:
        """Every observation of the namespace, in insertion order."""
        with self._lock:
            self._begin_read(namespace)
            data = self._scan("observations", _sql.namespace_is(namespace))
            out = _rows.observations_from(data)
            txn = self._txn
            pend = txn.pending.get(namespace) if txn is not None else None
            if pend is not None:
                out.extend(o for o, _ in pend.obs.values())
            return iter(out)

    # -- nodes ----------------------------------------------------------------------
    def upsert_nodes(self, namespace: str, nodes: Sequence[Node]) -> None:
        """Insert or update nodes by id.

        Raises:
            StoreError: a node would change the ``content`` of a stored node
                (content is evidence), or is not storable (bad text, attrs,
                embedding shape); nothing of the call is written.
        """
        self._check_usable()
        self._check_ns(namespace)
        with self.batch(namespace), self._lock:
            table = self._node_table(namespace)
            for node in nodes:
                old = table.get(node.id)
                if old is not None and old.content != node.content:
                    raise StoreError(
                        f"node {node.id!r}: content is evidence and cannot be changed"
                    )
                _rows.check_node(node, self.dim)
            if not nodes:
                return
            p = self._pending(namespace)
            for node in nodes:
                emb = node.embedding
                stored = clone(node, namespace=namespace, embedding=None if emb is None else
                               np.array(emb, dtype=np.float32))
                seq = table.seq_of(node.id)
                if seq is None:
                    seq = self._next_seq()
                    p.new_nodes.add(node.id)
                table.put(stored, seq)
                p.nodes[node.id] = (stored, seq)

    def get_nodes(self, namespace: str, ids: Sequence[str]) -> list[Node]:
        """Nodes by id, in the order asked; unknown ids are left out."""
        with self._lock:
            self._begin_read(namespace)
            table = self._node_table(namespace)
            return [copy_node(n) for n in (table.get(i) for i in ids) if n is not None]

    def iter_nodes(self, namespace: str, where: NodeFilter | None = None) -> Iterator[Node]:
        """Every node passing ``where``, in insertion order."""
        with self._lock:
            self._begin_read(namespace)
            table = self._node_table(namespace)
            if where is None:
                return iter([copy_node(n) for n in table.records])
            slots = np.flatnonzero(table.mask(where))
            return iter([copy_node(table.records[i]) for i in slots])

    def count_nodes(self, namespace: str, where: NodeFilter | None = None) -> int:
        """How many nodes pass ``where``."""
        with self._lock:
            self._begin_read(namespace)
            table = self._node_table(namespace)
            return len(table) if where is None else int(table.mask(where).sum())

    # -- edges ----------------------------------------------------------------------
    def upsert_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        """Insert or update edges by id (a weight change updates the row in place).

        Raises:
            StoreError: an end is not an existing node of the namespace, or an
                edge is not storable; nothing of the call is written.
        """
        self._check_usable()
        self._check_ns(namespace)
        with self.batch(namespace), self._lock:
            table = self._node_table(namespace)
            for edge in edges:
                for end in (edge.src, edge.dst):
                    if table.get(end) is None:
                        raise StoreError(f"edge {edge.id!r} references unknown node {end!r}")
                _rows.check_edge(edge)
            if not edges:
                return
            graph = self._edge_graph(namespace)
            p = self._pending(namespace)
            for edge in edges:
                stored = clone(edge, namespace=namespace)
                seq = graph.seqs.get(edge.id)
                if seq is None:
                    seq = self._next_seq()
                    p.new_edges.add(edge.id)
                graph.put(stored, seq)
                p.edges[edge.id] = (stored, seq)

    def get_edges(self, namespace: str, ids: Sequence[str]) -> list[Edge]:
        """Edges by id, in the order asked; unknown ids are left out."""
        with self._lock:
            self._begin_read(namespace)
            records = self._edge_graph(namespace).records
            return [clone(records[i]) for i in ids if i in records]

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
            self._begin_read(namespace)
            graph = self._edge_graph(namespace)
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

    def iter_edges(self, namespace: str) -> Iterator[Edge]:
        """Every edge of the namespace, in insertion order."""
        with self._lock:
            self._begin_read(namespace)
            return iter([clone(e) for e in self._edge_graph(namespace).records.values()])

    def count_edges(self, namespace: str) -> int:
        """How many edges the namespace has."""
        with self._lock:
            self._begin_read(namespace)
            return len(self._edge_graph(namespace))

    def graph(self, namespace: str) -> tuple[igraph.Graph, list[str], list[str]]:
        """The namespace's topology as a directed igraph (beyond the protocol).

        Returns ``(graph, vertex_names, edge_ids)``: vertex ``i`` is node
        ``vertex_names[i]``, igraph edge ``j`` is edge ``edge_ids[j]`` (look the
        records up with `get_edges`). Only nodes with edges are vertices. These
        are the live cached structures: read, never mutate them.
        """
        with self._lock:
            self._begin_read(namespace)
            return self._edge_graph(namespace).graph()

    # -- search -----------------------------------------------------------------------
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
        namespace holds more than ``ann_threshold`` nodes, the IVF_RQ index
        exists, and the filter leaves more than a few thousand candidates: then
        the index answers (approximately). ``"exact"`` and ``"ann"`` force a
        path (``"ann"`` falls back to exact when no index exists).

        Raises:
            StoreError: the vector's length is not the store's dimension.
        """
        with self._lock:
            self._begin_read(namespace)
            q = np.asarray(vector, dtype=np.float32).reshape(-1)
            if q.shape != (self.dim,):
                raise StoreError(f"query vector has {q.shape[0]} dims; this store holds "
                                 f"{self.dim}-d vectors ({self.embedder_name})")
            table = self._node_table(namespace)
            n = len(table)
            if k <= 0 or n == 0:
                return []
            q = q / max(float(np.linalg.norm(q)), 1e-12)
            cand = table.has_emb[:n].copy() if where is None else table.mask(where) & \
                table.has_emb[:n]
            idx = np.flatnonzero(cand)
            exact_up_to = min(EXACT_CANDIDATES, self.config.ann_threshold)
            use_ann = mode == "ann" or (
                mode == "auto" and n > self.config.ann_threshold and len(idx) > exact_up_to
            )
            if use_ann and self._ann_exists():
                table.drop_matrix() if mode == "auto" else None
                # A filter that keeps every embedded node need not reach LanceDB (a
                # prefilter costs a pass over the table).
                needed = where if len(idx) < table.embedded_count else None
                return self._ann_search(namespace, table, q, k, needed)
            if table.has_matrix or len(idx) > EXACT_CANDIDATES:
                sims = table.matrix() @ q
                best = top_k(sims, idx, k)
                return [(copy_node(table.records[i]), float(sims[i])) for i in best]
            # Few candidates and no matrix (a large namespace): score just them.
            rows = [table.records[i].embedding for i in idx]
            mat = (np.stack([r for r in rows if r is not None]) if len(idx)
                   else np.zeros((0, self.dim), np.float32))
            norms = np.clip(np.linalg.norm(mat, axis=1), 1e-12, None)
            sims_c = ((mat @ q) / norms).astype(np.float32)
            best_c = top_k(sims_c, np.arange(len(idx)), k)
            return [(copy_node(table.records[idx[i]]), float(sims_c[i])) for i in best_c]

    def _ann_search(self, namespace: str, table: NodeTable, q: NDArray[np.float32], k: int,
                    where: NodeFilter | None) -> list[Scored]:
        self._flush_if_owner(namespace)
        # A prefilter costs LanceDB a pass over the whole table (40 ms at 1M rows, 10 ms
        # with bitmap indexes) against ~10 ms for the search itself. When this namespace
        # owns every row, or every node has an embedding, those clauses select everything:
        # leave them out, and check the namespace of each row that comes back instead.
        sole = len(table) == self._node_rows()
        out = self._ann_query(namespace, table, q, k, where, namespace_clause=not sole)
        if out is None:  # another namespace's rows appeared meanwhile: filter properly
            out = self._ann_query(namespace, table, q, k, where, namespace_clause=True)
        assert out is not None
        return out

    def _ann_query(self, namespace: str, table: NodeTable, q: NDArray[np.float32], k: int,
                   where: NodeFilter | None, *, namespace_clause: bool) -> list[Scored] | None:
        sql = _sql.node_filter(namespace if namespace_clause else None, where,
                               embedded=table.embedded_count < len(table))
        query = (self._tables["nodes"].search(q, vector_column_name="embedding")
                 .distance_type("cosine"))
        if sql:
            query = query.where(sql, prefilter=True)
        # maximum_nprobes 0: LanceDB may probe past `nprobes` when the filter leaves too
        # few rows in the probed partitions, so narrow filters still get k results.
        res = (query.minimum_nprobes(self.config.nprobes).maximum_nprobes(0)
               .refine_factor(self.config.refine_factor)
               .select(["id", "namespace", "_distance"]).limit(k).to_arrow())
        out: list[Scored] = []
        for node_id, ns, dist in zip(res.column("id").to_pylist(),
                                     res.column("namespace").to_pylist(),
                                     res.column("_distance").to_pylist(), strict=True):
            if ns != namespace:
                return None
            node = table.get(node_id)
            if node is not None and node.embedding is not None:
                out.append((copy_node(node), 1.0 - float(dist)))
        out.sort(key=lambda item: -item[1])
        return out

    def _node_rows(self) -> int:
        """Rows of the ``nodes`` table (cached until the next write or external commit)."""
        if self._nodes_rows_cache is None:
            self._nodes_rows_cache = self._tables["nodes"].count_rows()
        return self._nodes_rows_cache

    def text_search(
        self, namespace: str, text: str, k: int, *, where: NodeFilter | None = None
    ) -> list[Scored]:
        """Top-``k`` nodes by BM25 over `Node.search_text`, best first (score > 0).

        LanceDB's native full-text index (stemming, stop words, lower case,
        ASCII folding); the query's words are OR-ed. Rows written after the
        index was built are searched too (LanceDB scans unindexed rows;
        `optimize` folds them in). Inside a batch, this thread's uncommitted
        nodes are written out first so they are found.
        """
        with self._lock:
            self._begin_read(namespace)
            if not isinstance(text, str):
                raise StoreError(f"text must be a string, got {type(text).__name__}")
            _rows.check_text("query text", text)
            table = self._node_table(namespace)
            if k <= 0 or not text.strip() or len(table) == 0:
                return []
            self._flush_if_owner(namespace)
            # As in `_ann_search`: no namespace prefilter when it would select every row.
            sole = len(table) == self._node_rows()
            hits = self._fts_query(namespace, table, text, k, where, namespace_clause=not sole)
            if hits is None:
                hits = self._fts_query(namespace, table, text, k, where, namespace_clause=True)
            assert hits is not None
            return hits

    def _fts_query(self, namespace: str, table: NodeTable, text: str, k: int,
                   where: NodeFilter | None, *, namespace_clause: bool) -> list[Scored] | None:
        from lancedb.query import FullTextOperator, MatchQuery

        match = MatchQuery(text, "search_text", operator=FullTextOperator.OR)  # type: ignore[call-arg]
        query = self._tables["nodes"].search(match, query_type="fts")
        sql = _sql.node_filter(namespace if namespace_clause else None, where)
        if sql:
            query = query.where(sql, prefilter=True)
        res = query.select(["id", "namespace", "_score"]).limit(k).to_arrow()
        hits = []
        for node_id, ns, score in zip(res.column("id").to_pylist(),
                                      res.column("namespace").to_pylist(),
                                      res.column("_score").to_pylist(), strict=True):
            if ns != namespace:
                return None
            node = table.get(node_id)
            if node is not None and score > 0:
                hits.append((table.slot[node_id], node, float(score)))
        hits.sort(key=lambda h: (-h[2], h[0]))
        return [(copy_node(node), score) for _, node, score in hits]

    def hybrid_search(
        self,
        namespace: str,
        text: str,
        vector: NDArray[np.float32] | None,
        k: int,
        where: NodeFilter | None = None,
        rrf_k: int = 60,
    ) -> list[Scored]:
        """Top-``k`` nodes by reciprocal rank fusion of vector and text search.

        Each list contributes ``1 / (rrf_k + rank)`` (rank from 1) per node;
        both lists are searched ``max(4k, 50)`` deep. Scores are RRF scores,
        not similarities. Ties keep the vector list's order first.
        """
        if k <= 0:
            return []
        depth = max(4 * k, 50)
        ranked: list[list[Scored]] = []
        if vector is not None:
            ranked.append(self.vector_search(namespace, vector, depth, where=where))
        if text and text.strip():
            ranked.append(self.text_search(namespace, text, depth, where=where))
        from labile.fusion import rrf

        nodes: dict[str, Node] = {}
        for hits in ranked:
            for node, _ in hits:
                nodes.setdefault(node.id, node)
        scores = rrf([([n.id for n, _ in hits], 1.0) for hits in ranked], rrf_k)
        order = sorted(scores, key=lambda i: -scores[i])  # stable: first-seen order on ties
        return [(nodes[i], scores[i]) for i in order[:k]]

    # -- ANN index ----------------------------------------------------------------------
    def _ann_exists(self) -> bool:
        if self._ann_cache is None:
            self._ann_cache = any(
                tuple(ix.columns) == ("embedding",)
                for ix in self._tables["nodes"].list_indices()
            )
        return self._ann_cache

    def _maybe_build_ann(self) -> None:
        rows = self._tables["nodes"].count_rows()
        if rows < self.config.ann_threshold:
            return
        if not self._ann_exists() or rows >= self.config.ann_retrain_growth * self._ann_trained:
            self.build_ann_index()

    def build_ann_index(self) -> float:
        """(Re)train the IVF_RQ cosine index over every row of ``nodes``; returns seconds.

        Partitions: ``rows / ann_partition_rows``. Called automatically once the
        table reaches ``ann_threshold`` rows and again whenever it has grown by
        ``ann_retrain_growth``; `optimize` folds rows added in between into the
        index incrementally.
        """
        from lancedb.index import IvfRq

        with self._lock:
            self._check_usable()
            nodes = self._tables["nodes"]
            rows = nodes.count_rows()
            if rows == 0:
                return 0.0
            parts = max(1, rows // self.config.ann_partition_rows)
            t0 = time.perf_counter()
            with self._flock.held():
                nodes.create_index("embedding", config=IvfRq(distance_type="cosine",
                                                             num_partitions=parts), replace=True)
                self._ann_trained = rows
                self._meta_put({"ann_trained_rows": str(rows)})
            self._ann_cache = True
            secs = time.perf_counter() - t0
            log.info("lancedb_ann_index_built", rows=rows, partitions=parts, s=round(secs, 2))
            return secs

    # -- lifecycle --------------------------------------------------------------------
    def namespaces(self) -> list[str]:
        """Every namespace that holds at least one row (uncommitted writes of an open batch too)."""
        import pyarrow.compute as pc

        with self._lock:
            self._begin_read(None)
            if self._namespaces is None:
                found: set[str] = set()
                for name in DATA_TABLES:
                    col = self._scan(name, "TRUE", ["namespace"]).column("namespace")
                    found.update(pc.unique(col).to_pylist())
                txn = self._txn
                if txn is not None:
                    found.update(ns for ns, p in txn.pending.items() if p)
                self._namespaces = found
            return sorted(self._namespaces)

    def optimize(self) -> None:
        """Compact the tables, drop versions older than ``keep_versions_s``, and fold
        new rows into the full-text and vector indexes (retraining the vector index
        when the table has grown enough). Safe to call any time; inside a batch it
        runs when the transaction commits.
        """
        self._check_usable()
        txn = self._txn
        if txn is not None and txn.owner == threading.get_ident():
            txn.optimize_requested = True
            return
        with self._txn_lock, self._lock:
            self._optimize_now()
            self._maybe_build_ann()

    def _optimize_now(self) -> None:
        t0 = time.perf_counter()
        keep = timedelta(seconds=self.config.keep_versions_s)
        with self._flock.held():
            for name in (*DATA_TABLES, "meta"):
                self._tables[name].optimize(cleanup_older_than=keep)
            self._ensure_indexes()
        self._meta_version = self._meta_table.version
        self._commits_since_optimize = 0
        log.debug("lancedb_optimized", path=str(self.path),
                  ms=round((time.perf_counter() - t0) * 1000, 1))

    def stats(self, namespace: str | None = None) -> dict[str, Any]:
        """Counts, table fragments, on-disk bytes and index state.

        With a namespace, the counts are that namespace's (uncommitted writes
        of an open batch included); without, they are the committed rows of
        every namespace.
        """
        with self._lock:
            self._begin_read(namespace)
            out: dict[str, Any] = {"store": "lancedb", "path": str(self.path),
                                   "embedder": self.embedder_name, "dim": self.dim}
            if namespace is not None:
                nodes = self._node_table(namespace)
                out.update(
                    namespaces=int(bool(len(nodes) or self._obs_ids(namespace))),
                    observations=len(self._obs_ids(namespace)),
                    nodes=len(nodes),
                    visible_nodes=nodes.visible_count,
                    edges=len(self._edge_graph(namespace)),
                )
            else:
                t = self._tables
                out.update(
                    namespaces=len(self.namespaces()),
                    observations=t["observations"].count_rows(),
                    nodes=t["nodes"].count_rows(),
                    visible_nodes=t["nodes"].count_rows("visible = true"),
                    edges=t["edges"].count_rows(),
                )
            tables = {}
            for name in (*DATA_TABLES, "meta"):
                st = self._tables[name].stats()
                frags = st["fragment_stats"]
                tables[name] = {"rows": st["num_rows"], "fragments": frags["num_fragments"],
                                "small_fragments": frags["num_small_fragments"],
                                "indices": st["num_indices"], "bytes": st["total_bytes"],
                                "version": self._tables[name].version}
            out["tables"] = tables
            out["fragments"] = {name: v["fragments"] for name, v in tables.items()}
            out["disk_bytes"] = _du(self.path)
            out["ann_index"] = self._ann_exists()
            out["ann_trained_rows"] = self._ann_trained
            out["cached_namespaces"] = len(self._spaces)
            return out

    def close(self) -> None:
        """Release the store (and delete a temporary directory). Idempotent.

        Raises:
            StoreError: called inside an open batch of this thread.
        """
        if self._closed:
            return
        txn = self._txn
        if txn is not None and txn.owner == threading.get_ident():
            raise StoreError("close() called inside an open batch; leave the batch first")
        with self._txn_lock, self._lock:
            self._closed = True
            self._spaces.clear()
            self._tables.clear()
            self._db = None
            self._flock.close()
            if self._finalizer is not None:
                self._finalizer()

    def __enter__(self) -> LanceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LanceStore(path={str(self.path)!r}, embedder={self.embedder_name!r})"


def _du(path: Path) -> int:
    """Bytes of the regular files under ``path``."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(root, f)).st_size
    return total
