"""Arrow schemas of the store's tables and conversions between records and rows.

Every table carries a ``key`` column, ``namespace + KEY_SEP + id``: the primary
key of upserts (``merge_insert("key")``), unique across namespaces. Namespaces
may not contain `KEY_SEP`, so the first separator splits a key unambiguously.
``seq`` is a store-wide counter assigned at first insert and kept on update; it
gives the insertion order that `Store.iter_*` promise (Lance itself reorders
rows on update and compaction).

Free-form dictionaries (``Observation.metadata``, ``Node.attrs``,
``Edge.attrs``) are stored as JSON text: they must be JSON-serialisable, and
tuples come back as lists.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np
from numpy.typing import NDArray

from labile.plugin import Edge, Node, Observation, Origin, StoreError, get_logger

if TYPE_CHECKING:
    import pyarrow as pa

KEY_SEP: Final = "\x1f"
#: Version of the on-disk layout; bump it (and add a migration) on any change.
SCHEMA_VERSION: Final = 1
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
log = get_logger(__name__)
_US: Final = timedelta(microseconds=1)


def key(namespace: str, record_id: str) -> str:
    """The primary key of a record: its namespace and id joined by `KEY_SEP`."""
    return f"{namespace}{KEY_SEP}{record_id}"


def to_us(value: datetime) -> int:
    """Microseconds since the epoch, exactly (no float rounding)."""
    return (value - EPOCH) // _US


def schemas(dim: int) -> dict[str, pa.Schema]:
    """The arrow schema of each table, for vectors of ``dim`` floats."""
    import pyarrow as pa

    ts = pa.timestamp("us", tz="UTC")
    strs = pa.list_(pa.string())
    return {
        "observations": pa.schema([
            ("key", pa.string()), ("id", pa.string()), ("namespace", pa.string()),
            ("seq", pa.int64()), ("text", pa.string()), ("speaker", pa.string()),
            ("session", pa.string()), ("timestamp", ts), ("metadata", pa.string()),
        ]),
        "nodes": pa.schema([
            ("key", pa.string()), ("id", pa.string()), ("namespace", pa.string()),
            ("seq", pa.int64()), ("kind", pa.string()), ("content", pa.string()),
            ("description", pa.string()), ("keywords", strs), ("time_start", ts),
            ("time_end", ts), ("created_at", ts), ("updated_at", ts),
            ("visible", pa.bool_()), ("sources", strs), ("attrs", pa.string()),
            ("embedding", pa.list_(pa.float32(), dim)), ("has_embedding", pa.bool_()),
            ("search_text", pa.string()),
        ]),
        "edges": pa.schema([
            ("key", pa.string()), ("id", pa.string()), ("namespace", pa.string()),
            ("seq", pa.int64()), ("src", pa.string()), ("dst", pa.string()),
            ("predicate", pa.string()), ("weight", pa.float64()),
            ("description", pa.string()), ("origin", pa.string()), ("created_at", ts),
            ("updated_at", ts), ("attrs", pa.string()),
        ]),
        "meta": pa.schema([("key", pa.string()), ("value", pa.string())]),
    }


# -- validation -----------------------------------------------------------------
def dumps(value: dict[str, Any], what: str) -> str:
    """``value`` as JSON text, or `StoreError` saying which record is not serialisable."""
    if not value:
        return "{}"  # the common case, without the encoder's overhead
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=True)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{what} must be JSON-serialisable to be stored: {exc}") from None


def check_text(what: str, *values: str | None) -> None:
    """Refuse strings that are not valid Unicode scalar sequences.

    Arrow strings are UTF-8, and a lone surrogate (``"\\udcff"``, what Python's
    ``surrogateescape`` makes of undecodable bytes) has no UTF-8 encoding.
    Replacing it would silently alter a verbatim log, so such text is refused
    with the record named, before anything is buffered.
    """
    for value in values:
        if value is None:
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StoreError(
                f"{what} contains text that is not valid Unicode (a lone surrogate "
                f"{value[exc.start:exc.end]!r} at position {exc.start}); decode your input "
                "with errors='replace' or fix it before storing"
            ) from None


def check_observation(obs: Observation) -> str:
    """Validate ``obs`` for storage; returns its metadata as JSON."""
    meta = dumps(obs.metadata, f"observation {obs.id!r} metadata")
    check_text(f"observation {obs.id!r}", obs.id, obs.text, obs.speaker, obs.session, meta)
    return meta


def check_node(node: Node, dim: int) -> None:
    """Validate ``node`` for storage (text, attrs, embedding shape)."""
    what = f"node {node.id!r}"
    attrs_json = dumps(node.attrs, f"{what} attrs")
    check_text(what, node.id, node.kind, node.content, node.description, attrs_json,
               *node.keywords, *node.sources)
    if node.embedding is not None:
        emb = np.asarray(node.embedding)
        if emb.shape != (dim,):
            raise StoreError(
                f"{what} has an embedding of shape {emb.shape}; this store holds "
                f"{dim}-d vectors"
            )


class NodeLookup(Protocol):
    """What `check_edges` reads of a namespace's node table
    (`labile_lancedb._cache.NodeTable`)."""

    def get(self, node_id: str) -> Node | None:
        """The node with that id, or ``None``."""
        ...


def check_edges(nodes: NodeLookup, edges: Sequence[Edge]) -> None:
    """Refuse a call (before any write) if one of ``edges`` is unstorable or dangling:
    both ends must be nodes of ``nodes``, the namespace's node table."""
    for edge in edges:
        for end in (edge.src, edge.dst):
            if nodes.get(end) is None:
                raise StoreError(f"edge {edge.id!r} references unknown node {end!r}")
        check_edge(edge)


def check_edge(edge: Edge) -> None:
    """Validate ``edge`` for storage."""
    what = f"edge {edge.id!r}"
    attrs_json = dumps(edge.attrs, f"{what} attrs")
    check_text(what, edge.id, edge.src, edge.dst, edge.predicate, edge.description, attrs_json)


# -- records -> arrow -------------------------------------------------------------
def observations_table(
    namespace: str, rows: Sequence[tuple[Observation, int]], schema: pa.Schema
) -> pa.Table:
    """Arrow rows for ``(observation, seq)`` pairs of one namespace."""
    import pyarrow as pa

    obs = [o for o, _ in rows]
    return pa.table({
        "key": [key(namespace, o.id) for o in obs],
        "id": [o.id for o in obs],
        "namespace": [namespace] * len(obs),
        "seq": [s for _, s in rows],
        "text": [o.text for o in obs],
        "speaker": [o.speaker for o in obs],
        "session": [o.session for o in obs],
        "timestamp": [o.timestamp for o in obs],
        "metadata": [dumps(o.metadata, "metadata") for o in obs],
    }, schema=schema)


def nodes_table(
    namespace: str, rows: Sequence[tuple[Node, int]], schema: pa.Schema, dim: int
) -> pa.Table:
    """Arrow rows for ``(node, seq)`` pairs of one namespace.

    A node without an embedding is stored with zeros and ``has_embedding``
    false (the column is a fixed-size list, which cannot hold nulls cheaply).
    """
    import pyarrow as pa

    nodes = [n for n, _ in rows]
    mat = np.zeros((len(nodes), dim), dtype=np.float32)
    has = np.zeros(len(nodes), dtype=bool)
    for i, n in enumerate(nodes):
        if n.embedding is not None:
            mat[i] = n.embedding
            has[i] = True
    emb = pa.FixedSizeListArray.from_arrays(pa.array(mat.ravel(), pa.float32()), dim)
    return pa.table({
        "key": [key(namespace, n.id) for n in nodes],
        "id": [n.id for n in nodes],
        "namespace": [namespace] * len(nodes),
        "seq": [s for _, s in rows],
        "kind": [n.kind for n in nodes],
        "content": [n.content for n in nodes],
        "description": [n.description for n in nodes],
        "keywords": [list(n.keywords) for n in nodes],
        "time_start": [n.time_start for n in nodes],
        "time_end": [n.time_end for n in nodes],
        "created_at": [n.created_at for n in nodes],
        "updated_at": [n.updated_at for n in nodes],
        "visible": [n.visible for n in nodes],
        "sources": [list(n.sources) for n in nodes],
        "attrs": [dumps(n.attrs, "attrs") for n in nodes],
        "embedding": emb,
        "has_embedding": has,
        "search_text": [n.search_text for n in nodes],
    }, schema=schema)


def edges_table(
    namespace: str, rows: Sequence[tuple[Edge, int]], schema: pa.Schema
) -> pa.Table:
    """Arrow rows for ``(edge, seq)`` pairs of one namespace."""
    import pyarrow as pa

    edges = [e for e, _ in rows]
    return pa.table({
        "key": [key(namespace, e.id) for e in edges],
        "id": [e.id for e in edges],
        "namespace": [namespace] * len(edges),
        "seq": [s for _, s in rows],
        "src": [e.src for e in edges],
        "dst": [e.dst for e in edges],
        "predicate": [e.predicate for e in edges],
        "weight": [float(e.weight) for e in edges],
        "description": [e.description for e in edges],
        "origin": [str(e.origin) for e in edges],
        "created_at": [e.created_at for e in edges],
        "updated_at": [e.updated_at for e in edges],
        "attrs": [dumps(e.attrs, "attrs") for e in edges],
    }, schema=schema)


# -- arrow -> records -------------------------------------------------------------
# Loading is the cold-start cost of a namespace (a million nodes), so it avoids the
# per-record overheads that dominate: sorting whole tables (the embedding column is
# most of the bytes), zoneinfo-aware datetimes (`utcoffset` is slow and attrs'
# validator calls it for every field), validators re-checking what was validated when
# written, JSON-decoding empty objects, and one copy of every embedding.

#: Sentinel µs value of a missing timestamp in the int64 views of timestamp columns.
NULL_US: Final = np.iinfo(np.int64).min


def _in_seq_order(table: pa.Table) -> pa.Table:
    """``table`` ordered by ``seq``, without touching the embedding column."""
    import pyarrow.compute as pc

    if table.num_rows < 2:
        return table
    seq = table.column("seq").to_numpy()
    if bool(np.all(seq[1:] >= seq[:-1])):
        return table
    return table.take(pc.sort_indices(table.column("seq")))


def micros(table: pa.Table, column: str) -> NDArray[np.int64]:
    """A timestamp column as µs since the epoch, `NULL_US` for nulls."""
    import pyarrow as pa

    col = table.column(column).cast(pa.int64()).fill_null(NULL_US)
    return col.to_numpy()  # type: ignore[no-any-return]


def _datetimes(us: NDArray[np.int64], memo: dict[int, datetime]) -> list[datetime | None]:
    out: list[datetime | None] = []
    for v in us.tolist():
        if v == NULL_US:
            out.append(None)
            continue
        d = memo.get(v)
        if d is None:
            d = memo[v] = _datetime_or_clamped(v)
        out.append(d)
    return out


def _datetime_or_clamped(us: int) -> datetime:
    """The UTC time ``us`` µs after the epoch; one outside years 1-9999 (written
    before writes were checked) is clamped to the nearest end and reported, so the
    namespace still reads instead of failing on every load."""
    try:
        return EPOCH + timedelta(microseconds=us)
    except OverflowError:
        clamped = datetime.max.replace(tzinfo=UTC) if us > 0 else datetime.min.replace(tzinfo=UTC)
        log.warning("timestamp_out_of_range", stored_us=us, read_as=clamped.isoformat())
        return clamped


def _json(text: str) -> dict[str, Any]:
    if text == "{}":
        return {}
    value: dict[str, Any] = json.loads(text)
    return value


def _record(cls: type, values: dict[str, Any]) -> Any:
    """An attrs record from stored (already validated) values, skipping validators."""
    obj: Any = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(obj, name, value)
    return obj


def observations_from(table: pa.Table) -> list[Observation]:
    """Observations from arrow rows, in ``seq`` order."""
    t = _in_seq_order(table)
    c = {name: t.column(name).to_pylist()
         for name in ("id", "namespace", "text", "speaker", "session", "metadata")}
    stamps = _datetimes(micros(t, "timestamp"), {})
    return [
        _record(Observation, {"id": c["id"][i], "text": c["text"][i], "timestamp": stamps[i],
                              "speaker": c["speaker"][i], "session": c["session"][i],
                              "metadata": _json(c["metadata"][i]),
                              "namespace": c["namespace"][i]})
        for i in range(t.num_rows)
    ]


def nodes_from(table: pa.Table, dim: int) -> tuple[list[Node], list[int], NDArray[np.int64],
                                                   NDArray[np.int64]]:
    """Nodes from arrow rows in ``seq`` order, with their seqs and µs time columns.

    Returns ``(nodes, seqs, time_start_us, time_end_us)``; the µs arrays hold
    `NULL_US` for missing times. Embeddings are read-only views of one matrix
    (callers get copies from the store, which never writes them in place).
    """
    t = _in_seq_order(table)
    n = t.num_rows
    names = ("id", "namespace", "seq", "kind", "content", "description", "keywords",
             "visible", "sources", "attrs", "has_embedding")
    c = {name: t.column(name).to_pylist() for name in names}
    memo: dict[int, datetime] = {}
    ts_us, te_us = micros(t, "time_start"), micros(t, "time_end")
    ts, te = _datetimes(ts_us, memo), _datetimes(te_us, memo)
    created, updated = (_datetimes(micros(t, col), memo) for col in ("created_at", "updated_at"))
    emb = t.column("embedding").combine_chunks().values.to_numpy(zero_copy_only=False)
    mat = emb.reshape(n, dim) if n else np.zeros((0, dim), np.float32)
    nodes = [
        _record(Node, {
            "id": c["id"][i], "kind": c["kind"][i], "content": c["content"][i],
            "description": c["description"][i], "keywords": tuple(c["keywords"][i] or ()),
            "time_start": ts[i], "time_end": te[i], "created_at": created[i],
            "updated_at": updated[i], "visible": c["visible"][i],
            "sources": tuple(c["sources"][i] or ()),
            "embedding": mat[i] if c["has_embedding"][i] else None,
            "namespace": c["namespace"][i], "attrs": _json(c["attrs"][i]),
        })
        for i in range(n)
    ]
    return nodes, c["seq"], ts_us, te_us


def edges_from(table: pa.Table) -> list[tuple[Edge, int]]:
    """``(edge, seq)`` pairs from arrow rows, in ``seq`` order."""
    t = _in_seq_order(table)
    names = ("id", "namespace", "seq", "src", "dst", "predicate", "weight", "description",
             "origin", "attrs")
    c = {name: t.column(name).to_pylist() for name in names}
    memo: dict[int, datetime] = {}
    created, updated = (_datetimes(micros(t, col), memo) for col in ("created_at", "updated_at"))
    origins = {o.value: o for o in Origin}
    return [
        (_record(Edge, {
            "id": c["id"][i], "src": c["src"][i], "dst": c["dst"][i],
            "predicate": c["predicate"][i], "weight": c["weight"][i],
            "description": c["description"][i], "origin": origins[c["origin"][i]],
            "created_at": created[i], "updated_at": updated[i],
            "namespace": c["namespace"][i], "attrs": _json(c["attrs"][i]),
        }), c["seq"][i])
        for i in range(t.num_rows)
    ]
