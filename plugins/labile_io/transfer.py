"""Export a namespace to versioned JSON lines, and import it into an empty namespace.

The file's first line is a header (``format``, ``version``, the namespace, the
exporting pipeline, the embedder's name and dimension, counts); then one line
per observation, node and edge, in the store's insertion order. Nodes keep
their embeddings, visibility, sources and attrs (All-Mem lineage and
``supersedes``); edges keep their weights, origin and attrs (reconsolidation
history). Importing checks every record first (`labile_io.import_checks`), then
writes them as they are, in one batch, so the imported namespace answers
searches exactly as the exported one did.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from labile.plugin import Edge, InputError, Node, Observation, check_namespace
from labile_io.import_checks import ImportCheck

if TYPE_CHECKING:
    from labile import Memory

__all__ = ["FORMAT", "VERSION", "export_records", "import_records"]

FORMAT: Final = "labile-export"
VERSION: Final = 1


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def export_records(memory: Memory, namespace: str) -> Iterator[dict[str, Any]]:
    """The header, then every observation, node and edge of ``namespace`` as JSON-able dicts."""
    store = memory.store
    stats = store.stats(namespace)
    yield {"format": FORMAT, "version": VERSION, "namespace": namespace,
           "pipeline": memory.config.to_table(),
           "embedder": {"name": memory.embedder.name, "dim": memory.embedder.dim},
           "counts": {k: stats.get(k) for k in ("observations", "nodes", "edges")}}
    for obs in store.iter_observations(namespace):
        yield {"type": "observation", "id": obs.id, "text": obs.text,
               "timestamp": _time(obs.timestamp), "speaker": obs.speaker,
               "session": obs.session, "metadata": obs.metadata}
    for node in store.iter_nodes(namespace):
        yield {"type": "node", "id": node.id, "kind": node.kind, "content": node.content,
               "description": node.description, "keywords": list(node.keywords),
               "time_start": _time(node.time_start), "time_end": _time(node.time_end),
               "created_at": _time(node.created_at), "updated_at": _time(node.updated_at),
               "visible": node.visible, "sources": list(node.sources),
               "embedding": None if node.embedding is None else
               [float(x) for x in np.asarray(node.embedding, dtype=np.float32)],
               "attrs": node.attrs}
    for edge in store.iter_edges(namespace):
        yield {"type": "edge", "id": edge.id, "src": edge.src, "dst": edge.dst,
               "predicate": edge.predicate, "weight": edge.weight,
               "description": edge.description, "origin": str(edge.origin),
               "created_at": _time(edge.created_at), "updated_at": _time(edge.updated_at),
               "attrs": edge.attrs}


def import_records(
    memory: Memory, records: Iterable[dict[str, Any]], namespace: str | None = None, *,
    lines: Sequence[int] | None = None,
) -> dict[str, int]:
    """Write exported records into ``namespace`` (default: the exported one); returns counts.

    Every record is read and checked first (`labile_io.import_checks`: sources,
    edge ends, kinds, predicates, vectors, time spans, unique ids), so a bad
    file writes nothing and is reported in one error naming each problem's line
    and field. ``lines[i]`` is the file line of ``records[i]`` for those
    messages (default: its position, the header being line 1).

    Raises:
        InputError: no header or an unknown format version, another embedder,
            the namespace already holds data, malformed records (the message
            names their lines), or an observation over ``memory.limits``;
            nothing is written then.
    """
    stream = iter(records)
    header = next(stream, None)
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise InputError(f"not a labile export: the first line must be a {FORMAT!r} header")
    if header.get("version") != VERSION:
        raise InputError(f"export format version {header.get('version')!r} is not supported "
                         f"(this labile reads version {VERSION})")
    embedder = header.get("embedder") or {}
    if embedder.get("name") != memory.embedder.name:
        raise InputError(f"the export holds vectors of {embedder.get('name')!r}; this memory "
                         f"embeds with {memory.embedder.name!r}: open it with the exporting "
                         "pipeline")
    ns = namespace or header.get("namespace")
    if not isinstance(ns, str) or not ns:
        raise InputError("no namespace: the header names none and none was given")
    check_namespace(ns)
    store = getattr(memory.store, "inner", memory.store)  # verbatim: reverse edges included
    if store.stats(ns).get("observations") or store.count_nodes(ns):
        raise InputError(f"namespace {ns!r} already holds data; import into an empty one")
    check = ImportCheck(dim=memory.embedder.dim, node_kinds=memory.schema.node_kinds,
                        predicates=memory.schema.predicates)
    obs, nodes, edges = [], [], []
    for position, row in enumerate(stream, 1):
        record = check.record(lines[position] if lines else position + 1, row)
        if isinstance(record, Observation):
            obs.append(record)
        elif isinstance(record, Node):
            nodes.append(record)
        elif isinstance(record, Edge):
            edges.append(record)
    check.finish()
    check.raise_if_any()
    for one in obs:  # the batch limit does not apply: an export is one batch, whatever its size
        memory.limits.check_one(one, f"exported observation {one.id!r}")
    with memory.write_lock, store.batch(ns):
        store.add_observations(ns, obs)
        store.upsert_nodes(ns, nodes)
        store.upsert_edges(ns, edges)
    memory.reload_components()
    return {"observations": len(obs), "nodes": len(nodes), "edges": len(edges)}
