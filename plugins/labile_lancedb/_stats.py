"""`store_stats`: what `labile_lancedb.store.LanceStore.stats` reports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labile_lancedb._tables import disk_usage

if TYPE_CHECKING:
    from labile_lancedb._engine import Engine

__all__ = ["store_stats"]


def store_stats(engine: Engine, namespace: str | None,
                namespaces: Callable[[], list[str]]) -> dict[str, Any]:
    """Counts, table fragments, storage bytes and index state (caller holds ``lock``
    and has checked freshness).

    With a namespace, the counts are that namespace's (uncommitted writes of an
    open batch included); without, they are the committed rows of every
    namespace. ``disk_bytes`` counts every file under a local directory (old
    versions included); on an object store, the bytes of the tables' current
    versions.
    """
    spaces, lance = engine.spaces, engine.tables
    out: dict[str, Any] = {"store": "lancedb", "path": str(engine.path),
                           "embedder": engine.embedder_name, "dim": engine.dim}
    if namespace is not None:
        nodes = spaces.nodes(namespace)
        obs_ids = spaces.observation_ids(namespace)
        out.update(
            namespaces=int(bool(len(nodes) or obs_ids)),
            observations=len(obs_ids),
            nodes=len(nodes),
            visible_nodes=nodes.visible_count,
            edges=len(spaces.edges(namespace)),
        )
    else:
        t = lance.handles
        out.update(
            namespaces=len(namespaces()),
            observations=t["observations"].count_rows(),
            nodes=t["nodes"].count_rows(),
            visible_nodes=t["nodes"].count_rows("visible = true"),
            edges=t["edges"].count_rows(),
        )
    tables = lance.table_stats()
    out["tables"] = tables
    out["fragments"] = {name: v["fragments"] for name, v in tables.items()}
    path = engine.path
    out["disk_bytes"] = (disk_usage(path) if isinstance(path, Path)
                         else sum(v["bytes"] for v in tables.values()))
    out["ann_index"] = lance.has_ann_index()
    out["ann_trained_rows"] = lance.ann_trained_rows
    out["cached_namespaces"] = len(spaces)
    return out
