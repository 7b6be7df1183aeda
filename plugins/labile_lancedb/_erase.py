"""Removing rows: `delete`, `purge`, and `erase_history` (dropping old versions).

Removals go straight to LanceDB under the open transaction's intent (see
`labile_lancedb._txn`): the buffer is written out first, the intent recorded,
then rows are deleted edges first, nodes, observations last, so a reader of a
half-done removal never sees an edge without its ends. A rollback or a crash
brings the namespace's rows back as they were at the intent, removals included. The namespace's
caches are dropped and reload from LanceDB on the next read.

LanceDB deletes by writing deletion files: the removed rows stay readable in
earlier table versions (and in their data files) until `optimize` drops the
versions older than ``keep_versions_s``; and compaction only rewrites
fragments with many deletions, so a removed row of a large fragment stays in
its data file even then. `erase_history` rewrites every data table from the
rows that remain, rebuilds the full-text and vector indexes, moves every
namespace's pin to the new versions, and only then drops every earlier
version: a kill at any point leaves no pin on a deleted version.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Iterable, Iterator
from datetime import timedelta
from typing import TYPE_CHECKING

from labile.plugin import StoreError, get_logger
from labile_lancedb import _rows, _sql
from labile_lancedb._maintenance import train_ann_index
from labile_lancedb._tables import DATA_TABLES, ERASE_PENDING, NS_KEY, LanceTables, ns_state

if TYPE_CHECKING:
    from labile_lancedb._engine import Engine

__all__ = ["delete", "erase_history", "erase_interrupted", "purge"]

log = get_logger(__name__)

#: ``cleanup_older_than`` of a compaction that must keep every version.
_KEEP_ALL = timedelta(days=36500)
#: Keys per ``IN`` list: LanceDB parses the whole filter, keep it bounded.
_CHUNK = 500


def _chunks(keys: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(keys), _CHUNK):
        yield keys[i:i + _CHUNK]


def _delete_keys(engine: Engine, table: str, namespace: str, ids: Iterable[str]) -> None:
    keys = sorted(_rows.key(namespace, i) for i in ids)
    for chunk in _chunks(keys):
        engine.tables.delete(
            table, f"{_sql.namespace_is(namespace)} AND {_sql.in_list('key', chunk)}")


def delete(
    engine: Engine,
    namespace: str,
    observation_ids: Collection[str],
    node_ids: Collection[str],
    edge_ids: Collection[str],
) -> None:
    """See `labile_lancedb.store.LanceStore.delete` (caller is inside `batch`, holding ``lock``)."""
    spaces = engine.spaces
    nodes, graph = spaces.nodes(namespace), spaces.edges(namespace)
    gone_nodes = {n for n in node_ids if nodes.get(n) is not None}
    gone_edges = {e for e in edge_ids if e in graph.records}
    for nid in gone_nodes:
        gone_edges.update(graph.incident(nid, "out"), graph.incident(nid, "in"))
    gone_obs = set(observation_ids) & spaces.observation_ids(namespace)
    if not (gone_nodes or gone_edges or gone_obs):
        return
    engine.begin_removal(namespace)
    _delete_keys(engine, "edges", namespace, gone_edges)
    _delete_keys(engine, "nodes", namespace, gone_nodes)
    _delete_keys(engine, "observations", namespace, gone_obs)
    engine.tables.forget_node_rows()
    spaces.forget([namespace])


def purge(engine: Engine, namespace: str) -> None:
    """See `labile_lancedb.store.LanceStore.purge` (caller is inside `batch`, holding ``lock``)."""
    if namespace not in engine.tables.namespaces_with_rows() and not engine.uncommitted(namespace):
        return
    engine.begin_removal(namespace)
    for table in ("edges", "nodes", "observations"):
        engine.tables.delete(table, _sql.namespace_is(namespace))
    engine.tables.forget_node_rows()
    engine.spaces.forget([namespace])


def erase_history(engine: Engine) -> None:
    """Rewrite the tables from their current rows, rebuild the indexes and drop every
    earlier version (caller holds the write locks). Costs a full rewrite of the store.

    Crash-safe by its order: the marker `ERASE_PENDING` is set first; the
    rewritten versions are committed and every namespace's pin moved to them
    (one ``meta`` commit) before any version is deleted; the marker is cleared
    last. A process killed at any point leaves every pin on a version that
    exists, and ``labile repair`` (`Engine.repair_storage`) completes the erase.

    Raises:
        StoreError: a namespace's batch is still open (its writer could not be
            confirmed gone); nothing was done. Other errors (LanceDB's, the OS's)
            propagate: the engine wraps them.
    """
    tables = engine.tables
    with engine.file_lock.holding():
        engine.recover_all()  # no batch is in flight: undo dead writers' intents first
        _refuse_open_intents(tables)
        rebuilt_ann = tables.has_ann_index()
        tables.meta_put({ERASE_PENDING: "1"})
        with tables.writing():  # on exit: every pin moves to the rewritten versions
            # Compaction rewrites only fragments with many deletions; a removed row in
            # a large fragment would stay in its data file. Rewrite every data table.
            for name in DATA_TABLES:
                table = tables.handles[name]
                table.add(table.to_arrow(), mode="overwrite")
            tables.ensure_indexes()
            # Index files may still hold tokens of removed rows: rebuild from what remains.
            tables.handles["nodes"].create_index("search_text", config=tables.fts_config(),
                                                 replace=True)
            # Any compaction happens here, under the pins' move: the cleanup pass
            # below must find nothing to compact, so it makes no version no pin names.
            for name in DATA_TABLES:
                tables.handles[name].optimize(cleanup_older_than=_KEEP_ALL)
        if rebuilt_ann:
            train_ann_index(tables, engine.file_lock)
        # Only now that no pin names an older version may the older versions go.
        _cleanup(engine)
        tables.meta_put({ERASE_PENDING: ""})
    tables.forget_counts()
    tables.meta_version = tables.meta_table.version
    log.info("lancedb_history_erased", path=str(tables.path), ann_rebuilt=rebuilt_ann)


def erase_interrupted(meta: dict[str, str]) -> bool:
    """Whether ``meta`` shows an `erase_history` that never finished."""
    return bool(meta.get(ERASE_PENDING))


def _refuse_open_intents(tables: LanceTables) -> None:
    # `recover_all` leaves alone an intent whose writer it could not confirm gone (an
    # object-store lease not yet expired): its pin names the versions the erase drops.
    meta = tables.latest_meta()
    left = sorted(k[len(NS_KEY):] for k in meta if k.startswith(NS_KEY)
                  and ns_state(meta, k[len(NS_KEY):]).get("intent"))
    if left:
        raise StoreError(
            f"cannot erase the history of {tables.path}: a batch of namespace(s) "
            f"{', '.join(map(repr, left))} is still open and its writer may be alive; "
            "nothing was erased: try again once it has finished (or its lease expired)")


def _cleanup(engine: Engine) -> None:
    # LanceDB warns that readers of an older version will fail: erasing is what
    # was asked for, and other processes re-read the pins and retry (`_retry`).
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"optimize\(cleanup_older_than=0\)")
        for table in engine.tables.handles.values():
            table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
