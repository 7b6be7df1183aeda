"""`LanceTables`: the store's directory, its LanceDB connection and its four tables.

Layout: one LanceDB database per store directory with the tables
``observations``, ``nodes``, ``edges`` (the data tables, schemas in
`labile_lancedb._rows`) and ``meta``, a key/value table holding the storage
schema version, the embedder's name and dimension, the commit intent, the
``seq`` counter and the row count the ANN index was trained on.

This module owns everything that touches those tables as tables: creating a
new store (``meta`` last, so its presence marks a complete store), checking an
existing one (schema version, embedder, columns), the indexes each table
should have, reading and writing ``meta``, scans, appends and upserts, table
versions and their restore, and table statistics. It holds no records and
takes no locks: callers serialise access (`labile_lancedb.store.LanceStore`)
and hold the cross-process lock where a method says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from labile.plugin import StoreError, get_logger, utcnow
from labile_lancedb import _rows
from labile_lancedb._location import StoreLocation
from labile_lancedb._migrations import migrate
from labile_lancedb.config import LanceStoreConfig

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["DATA_TABLES", "ERASE_PENDING", "NS_KEY", "LanceTables", "disk_usage",
           "prepare_directory", "temporary_directory", "version_gone"]

log = get_logger(__name__)

#: The tables a transaction writes, in the order a commit writes them.
DATA_TABLES: Final = ("observations", "nodes", "edges")
_ALL_TABLES: Final = (*DATA_TABLES, "meta")
#: Prefix of a namespace's ``meta`` row (its intent, committed versions and ``seq``).
NS_KEY: Final = "ns:"
#: ``meta`` key set while `labile_lancedb._erase.erase_history` runs: a store showing
#: it was left by an erase that never finished (``labile repair`` completes it).
ERASE_PENDING: Final = "erase_pending"
#: Attempts of a table commit that LanceDB refuses as a conflict with a concurrent one.
_COMMIT_ATTEMPTS: Final = 6
#: Versions kept by the compaction pass (its cleanup runs after the pins moved).
_KEEP_ALL: Final = timedelta(days=36500)
#: What LanceDB's errors say when a version, or a file of one, has been deleted.
_GONE_SIGNS: Final = ("no longer exists", "Not found", "not found", "NotFound",
                      "No such file or directory")
#: Read handles pinned to older versions, kept per table.
_VIEWS_KEPT: Final = 16


def retry_conflicts(what: str, op: Callable[[], Any]) -> Any:
    """Run the table commit ``op``, again (with back-off) while LanceDB refuses it as a
    conflict with another process's concurrent commit; a conflict means nothing was
    committed, so the retry re-runs it against the newest version."""
    for attempt in range(_COMMIT_ATTEMPTS):
        try:
            return op()
        except Exception as exc:
            if "conflict" not in str(exc).lower() or attempt == _COMMIT_ATTEMPTS - 1:
                raise
            log.info("lancedb_commit_conflict_retry", what=what, attempt=attempt + 1)
            time.sleep(0.02 * 2 ** attempt * (0.5 + random.random()))
    raise AssertionError("unreachable")  # pragma: no cover


def version_gone(exc: BaseException) -> bool:
    """Whether LanceDB raised ``exc`` because a table version (or a file of one) it was
    asked to read has been deleted, by an erase or a cleanup in another process."""
    text = str(exc)
    return any(sign in text for sign in _GONE_SIGNS)


def ns_state(meta: dict[str, str], namespace: str) -> dict[str, Any]:
    """``namespace``'s row of ``meta``: ``intent`` and ``committed`` (table versions, or
    ``None``) and ``seq`` (its next ``seq``, or ``None``); empty if it has none yet."""
    raw = meta.get(NS_KEY + namespace)
    return json.loads(raw) if raw else {}


def temporary_directory() -> Path:
    """A fresh directory for a store that lives only as long as its object."""
    return Path(tempfile.mkdtemp(prefix="labile-lancedb-"))


def prepare_directory(option: str) -> Path:
    """The absolute store directory for the ``path`` option, created if missing.

    Raises:
        StoreError: the path is a regular file, cannot be created, or is not
            writable; the message names the path.
    """
    path = Path(option).expanduser().absolute()
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


def disk_usage(path: Path) -> int:
    """Bytes of the regular files under ``path`` (old table versions included)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(root, f)).st_size
    return total


class LanceTables:
    """The LanceDB side of one open store.

    Attributes:
        path: The store directory, or the object-store URI.
        location: Where the store lives (`labile_lancedb._location.StoreLocation`).
        dim: Length of the vectors in ``nodes.embedding``.
        config: The store's options.
        schemas: Arrow schema of each table.
        handles: LanceDB table objects by name (all four once `open_tables` ran).
        meta_version: The ``meta`` version this process last wrote or read;
            another value in LanceDB means another process committed.
        ann_trained_rows: Rows of ``nodes`` when the ANN index was last trained.
    """

    def __init__(self, location: StoreLocation, dim: int, config: LanceStoreConfig) -> None:
        self.location = location
        self.path: Path | str = location.directory or location.uri
        self.dim = dim
        self.config = config
        self.schemas: dict[str, pa.Schema] = _rows.schemas(dim)
        self.handles: dict[str, Any] = {}
        self.meta_version = 0
        self.ann_trained_rows = 0
        self._db: Any = None
        self._has_ann_index: bool | None = None
        self._node_rows: int | None = None
        #: Each namespace's ``meta`` row as last read or written (`ns_state`).
        self.states: dict[str, dict[str, Any]] = {}
        #: The store-wide marker of stores written before per-namespace rows.
        self._legacy: dict[str, int] | None = None
        #: Namespaces whose lock this process holds in its open batch: read at the
        #: newest versions, which only this process writes for them.
        self.writers: set[str] = set()
        self._views: dict[tuple[str, int], Any] = {}
        #: Per namespace, pinned versions found deleted with no intent open: its rows
        #: are read at the newest versions until its pin moves (`fall_back`).
        self._gone_pins: dict[str, dict[str, int]] = {}

    # -- opening ----------------------------------------------------------------------
    def connect(self) -> bool:
        """Connect to the directory; whether it already holds a complete store.

        Raises:
            StoreError: LanceDB cannot open the directory.
        """
        import lancedb  # lazy: the import costs about 1.4 s

        try:
            self._db = lancedb.connect(
                self.location.uri,
                read_consistency_interval=timedelta(seconds=self.config.read_consistency_s),
                storage_options=self.location.storage_options or None,
            )
            return "meta" in self._existing()
        except Exception as exc:
            raise StoreError(f"cannot open LanceDB at {self.path}: {exc}") from exc

    def _existing(self) -> set[str]:
        return set(self._db.list_tables().tables)

    def create_if_missing(self, embedder_name: str) -> None:
        """Create the tables and indexes of a new store, unless another process just did.

        The caller holds the write lock: two processes opening a new directory
        at once must not both create it.

        Raises:
            StoreError: the directory holds data tables with rows but no ``meta``
                (it is not a labile store).
        """
        import pyarrow as pa

        existing = self._existing()
        if "meta" in existing:
            return
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
            self.handles[name] = self._db.create_table(name, schema=self.schemas[name])
        self.ensure_indexes()
        if "meta" in existing:
            self._db.drop_table("meta")
        now = utcnow().isoformat()
        rows = {"schema_version": str(_rows.SCHEMA_VERSION), "embedder_name": embedder_name,
                "embedder_dim": str(self.dim), "created_at": now, "intent": "", "next_seq": "1",
                "ann_trained_rows": "0"}
        data = pa.table({"key": list(rows), "value": list(rows.values())},
                        schema=self.schemas["meta"])
        self.handles["meta"] = self._db.create_table("meta", data=data)
        log.debug("lancedb_store_created", path=str(self.path), embedder=embedder_name,
                  dim=self.dim)

    def open_tables(self) -> None:
        """Open every table not opened yet (by `create_if_missing`)."""
        for name in _ALL_TABLES:
            if name not in self.handles:
                self.handles[name] = self._db.open_table(name)

    def check(self, meta: dict[str, str], embedder_name: str) -> None:
        """Check that the store is one this code can use with this embedder.

        Runs the schema migrations (`labile_lancedb._migrations.migrate`).

        Raises:
            StoreError: no schema version, a version that cannot be migrated,
                another embedder (name or dimension; the message names both),
                or a data table whose columns differ from the expected ones.
        """
        if "schema_version" not in meta:
            raise StoreError(f"{self.path}: the meta table has no schema_version; not a labile "
                             "store, or a damaged one")
        migrate(self._db, int(meta["schema_version"]), where=str(self.path))
        name, dim = meta.get("embedder_name"), int(meta.get("embedder_dim", "0"))
        if name != embedder_name or dim != self.dim:
            raise StoreError(
                f"store {self.path} holds vectors of embedder {name!r} ({dim}-d), but this "
                f"pipeline uses embedder {embedder_name!r} ({self.dim}-d); open it with "
                "the same embedder, or use another store path"
            )
        for table in DATA_TABLES:
            have, want = self.handles[table].schema, self.schemas[table]
            if [(f.name, f.type) for f in have] != [(f.name, f.type) for f in want]:
                raise StoreError(f"{self.path}: table {table!r} does not have the expected "
                                 "columns; the store is damaged or was written by other software")

    def close(self) -> None:
        """Drop the table handles and the connection."""
        self.handles.clear()
        self._db = None

    # -- indexes ----------------------------------------------------------------------
    def fts_config(self) -> Any:
        """The full-text index settings of ``nodes.search_text``."""
        from lancedb.index import FTS

        return FTS(language=self.config.fts_language, stem=True, remove_stop_words=True,
                   lower_case=True, ascii_folding=True)

    def ensure_indexes(self) -> None:
        """Create every index the tables should have and lack (caller holds the write lock).

        Keys get a BTree (upserts and lookups); namespace and the node columns
        that filters test get bitmaps (a prefilter over a bitmap costs LanceDB
        a quarter of a column scan); ``search_text`` gets the FTS index.
        """
        from lancedb.index import Bitmap, BTree

        configs = {"key": BTree(), "namespace": Bitmap(), "has_embedding": Bitmap(),
                   "visible": Bitmap(), "kind": Bitmap(), "search_text": self.fts_config()}
        for name, column in self.missing_indexes():
            self.handles[name].create_index(column, config=configs[column])

    def missing_indexes(self) -> list[tuple[str, str]]:
        """``(table, column)`` of every expected index that does not exist."""
        missing = []
        for name in DATA_TABLES:
            have = {tuple(ix.columns) for ix in self.handles[name].list_indices()}
            wanted = ["key", "namespace"]
            if name == "nodes":
                wanted += ["has_embedding", "visible", "kind", "search_text"]
            missing += [(name, col) for col in wanted if (col,) not in have]
        return missing

    def has_ann_index(self) -> bool:
        """Whether ``nodes.embedding`` has a vector index (cached until a restore)."""
        if self._has_ann_index is None:
            self._has_ann_index = any(
                tuple(ix.columns) == ("embedding",) for ix in self.handles["nodes"].list_indices()
            )
        return self._has_ann_index

    def ann_index_built(self) -> None:
        """Record that the vector index now exists (`has_ann_index` need not ask)."""
        self._has_ann_index = True

    # -- meta ---------------------------------------------------------------------------
    @property
    def meta_table(self) -> Any:
        """The LanceDB ``meta`` table."""
        return self.handles["meta"]

    def meta_read(self) -> dict[str, str]:
        """Every ``meta`` entry, as committed in the version this process sees."""
        rows = self.meta_table.to_arrow().to_pylist()
        return {r["key"]: r["value"] for r in rows}

    def meta_put(self, items: dict[str, str]) -> None:
        """Insert or replace ``meta`` entries (one commit) and note the new version.

        Other writers commit to ``meta`` too: the version is taken as seen only when
        this commit directly follows the one last seen, so the freshness check still
        notices a commit of another process made in between.
        """
        import pyarrow as pa

        data = pa.table({"key": list(items), "value": list(items.values())},
                        schema=self.schemas["meta"])
        before = self.meta_version
        retry_conflicts("meta", lambda: (
            self.meta_table.merge_insert("key").when_matched_update_all()
            .when_not_matched_insert_all().execute(data)))
        version: int = self.meta_table.version
        if version == before + 1:
            self.meta_version = version
        for key, value in items.items():
            if key.startswith(NS_KEY):
                self.states[key[len(NS_KEY):]] = json.loads(value)

    def put_states(self, states: dict[str, dict[str, Any]]) -> None:
        """Write namespaces' ``meta`` rows (`ns_state`), all in one commit."""
        self.meta_put({NS_KEY + ns: json.dumps(st, sort_keys=True) for ns, st in states.items()})

    def latest_meta(self) -> dict[str, str]:
        """``meta`` as of its newest version (one round trip)."""
        self.meta_table.checkout_latest()
        return self.meta_read()

    # -- versions -----------------------------------------------------------------------
    def data_versions(self) -> dict[str, int]:
        """The current version of each data table (what a commit intent records)."""
        return {name: self.handles[name].version for name in DATA_TABLES}

    def restore(self, versions: dict[str, int]) -> None:
        """Bring each named table back to its recorded version (caller holds the store
        exclusively: this undoes every namespace's later commits; only the store-wide
        intent of a store written before per-namespace rows is undone this way).

        ``restore`` also brings back the index set of the old version, so the
        indexes a later version had added (the FTS index in particular, without
        which full-text queries fail) are re-created.
        """
        for name, version in versions.items():
            tbl = self.handles[name]
            tbl.checkout_latest()
            if tbl.version != version:
                tbl.restore(version)
        self.ensure_indexes()
        self.forget_counts()

    def checkout_latest(self) -> None:
        """Move every data table to its newest version (after another process committed,
        and before writing: a pinned table cannot be written)."""
        for name in DATA_TABLES:
            self.handles[name].checkout_latest()

    def pin_to(self, meta: dict[str, str]) -> set[str]:
        """Read each namespace at the versions its ``meta`` row names; returns the
        namespaces whose row differs from the one known before (their caches are stale).

        Other processes' batches reach the tables table by table while they are
        written (and early, when a search inside one writes its buffer out), so a
        reader must not follow each table's newest version. It reads a namespace
        at the versions of that namespace's last complete commit instead: those
        its open intent recorded (the state before the batch in progress) or,
        without one, those its last commit recorded. Rows of other namespaces in
        those versions are never read (every read is confined to the namespace),
        and the namespace's own rows are the same in every later version until
        its next batch, which only its lock holder writes.
        """
        old, old_legacy = self.states, self._legacy
        self.states = {k[len(NS_KEY):]: json.loads(v) for k, v in meta.items()
                       if k.startswith(NS_KEY)}
        raw = meta.get("intent") or meta.get("committed")
        self._legacy = json.loads(raw) if raw else None
        if old_legacy != self._legacy:
            return set(old) | set(self.states) | {""}  # "": every namespace without a row
        return {ns for ns in set(old) | set(self.states) if old.get(ns) != self.states.get(ns)}

    def versions_for(self, namespace: str) -> dict[str, int] | None:
        """The table versions ``namespace`` is read at (``None``: the newest)."""
        if namespace in self.writers:
            return None
        st = self.states.get(namespace)
        pinned: dict[str, int] | None = self._legacy
        if st:
            pinned = st.get("intent") or st.get("committed")
        if pinned is not None and self._gone_pins.get(namespace) == pinned:
            return None
        return pinned

    def fall_back(self, namespace: str) -> bool:
        """Read ``namespace`` at the newest versions from now on, because the versions its
        pin names were found deleted; whether that is safe (no intent is open: nothing
        half-written can be in the newest versions; a store left by an erase that died
        before moving the pins, or by a cleanup past ``keep_versions_s``).

        Only this process's reads change: nothing is written (``labile repair``
        moves the pins for good). The fallback ends when the pin moves.
        """
        st = self.states.get(namespace, {})
        if st.get("intent"):
            return False
        pinned = st.get("committed") if st else self._legacy
        if pinned is None:
            return False
        log.warning("lancedb_pinned_version_gone", path=str(self.path), namespace=namespace,
                    versions=pinned)
        self._gone_pins[namespace] = pinned
        return True

    def drop_views(self) -> None:
        """Drop the read handles on older versions (they may name deleted versions)."""
        self._views.clear()

    def reader(self, name: str, namespace: str | None) -> Any:
        """The handle to read ``namespace``'s rows of table ``name`` from (at the version
        `versions_for` names; ``namespace=None``: the newest)."""
        handle = self.handles[name]
        versions = None if namespace is None else self.versions_for(namespace)
        if versions is None or name not in versions:
            return handle
        version = versions[name]
        view = self._views.get((name, version))
        if view is None:
            # Never the write handle: it follows the newest version, which may hold
            # another writer's half batch of this namespace by the time it is read.
            if len(self._views) >= _VIEWS_KEPT * len(_ALL_TABLES):
                self._views.clear()
            view = self._views[(name, version)] = self.open_at(name, version)
        return view

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Around maintenance that commits table versions (caller holds the write lock):
        write at the newest versions and mark the result committed."""
        self.checkout_latest()
        yield
        self.mark_committed()

    def mark_committed(self) -> dict[str, str]:
        """Point every namespace's pin (and the store-wide marker) at the current data
        versions; returns the entries written.

        The caller holds the store exclusively, and has undone every dead writer's
        intent: no batch is in flight, so every namespace's rows in the newest
        versions are its last commit. A namespace whose intent is still open keeps
        its pin on the intent's versions.
        """
        meta = self.latest_meta()
        versions = self.data_versions()
        entry = {"committed": json.dumps(versions), "intent": ""}
        for key, raw in meta.items():
            if key.startswith(NS_KEY):
                st = json.loads(raw)
                if st.get("intent"):  # a writer that could not be undone: keep its pin
                    continue
                st.update(intent=None, committed=versions)
                entry[key] = json.dumps(st, sort_keys=True)
        self.meta_put(entry)
        self._views.clear()  # cleanup may follow: drop handles on older versions
        self.pin_to({**meta, **entry})
        self.meta_version = self.meta_table.version
        return entry

    def optimize(self) -> None:
        """Compact every table, fold new rows into the indexes, then drop versions older
        than ``keep_versions_s`` (caller holds the store exclusively).

        The pins move to the compacted versions before the cleanup, so no namespace is
        left pinned to a version that is dropped.
        """
        keep = timedelta(seconds=self.config.keep_versions_s)
        with self.writing():
            for name in _ALL_TABLES:
                self.handles[name].optimize(cleanup_older_than=_KEEP_ALL)
            self.ensure_indexes()
        # Only now that no pin names an older version: drop those past keep_versions_s
        # (a second pass, which finds nothing left to compact).
        for name in _ALL_TABLES:
            self.handles[name].optimize(cleanup_older_than=keep)
        self.meta_version = self.meta_table.version

    def open_at(self, name: str, version: int) -> Any:
        """A new read handle on table ``name`` at ``version``."""
        view = self._db.open_table(name)
        view.checkout(version)
        return view

    # -- rows ---------------------------------------------------------------------------
    def scan(self, table: str, where: str, columns: list[str] | None = None,
             namespace: str | None = None) -> pa.Table:
        """Every row of ``table`` passing the SQL filter ``where`` (``columns`` only, if
        given), read at ``namespace``'s pinned version (the filter must confine the rows
        to that namespace) or, without one, at the newest."""
        q = self.reader(table, namespace).search().where(where)
        if columns is not None:
            q = q.select(columns)
        result: pa.Table = q.limit(None).to_arrow()
        return result

    def append(self, table: str, data: pa.Table) -> None:
        """Add new rows (cheap: one new fragment)."""
        retry_conflicts(table, lambda: self.handles[table].add(data))

    def upsert(self, table: str, data: pa.Table) -> None:
        """Insert or replace rows by ``key``."""
        retry_conflicts(table, lambda: (
            self.handles[table].merge_insert("key").when_matched_update_all()
            .when_not_matched_insert_all().execute(data)))

    def delete(self, table: str, where: str) -> None:
        """Delete the rows passing ``where`` (at the newest version)."""
        retry_conflicts(table, lambda: self.handles[table].delete(where))

    def node_rows(self) -> int:
        """Rows of ``nodes``, every namespace (cached until `forget_node_rows`)."""
        if self._node_rows is None:
            self._node_rows = self.handles["nodes"].count_rows()
        return self._node_rows

    def forget_node_rows(self) -> None:
        """Drop the cached row count of ``nodes`` (after writing to it)."""
        self._node_rows = None

    def forget_counts(self) -> None:
        """Drop every cached fact about the tables (after a restore or another's commit)."""
        self._has_ann_index = None
        self._node_rows = None

    def namespaces_with_rows(self) -> set[str]:
        """Every namespace with a row in any data table, but one whose first batch is
        still in flight in another process."""
        import pyarrow.compute as pc

        found: set[str] = set()
        for name in DATA_TABLES:
            col = self.scan(name, "TRUE", ["namespace"]).column("namespace")
            found.update(pc.unique(col).to_pylist())
        # A namespace whose first batch is still being written has no committed row yet.
        return {ns for ns in found if ns in self.writers
                or not (ns in self.states and not self.states[ns].get("committed"))}

    def table_stats(self) -> dict[str, dict[str, int]]:
        """Per table: rows, fragments, small fragments, indexes, bytes, version."""
        tables = {}
        for name in _ALL_TABLES:
            st = self.handles[name].stats()
            frags = st["fragment_stats"]
            tables[name] = {"rows": st["num_rows"], "fragments": frags["num_fragments"],
                            "small_fragments": frags["num_small_fragments"],
                            "indices": st["num_indices"], "bytes": st["total_bytes"],
                            "version": self.handles[name].version}
        return tables
