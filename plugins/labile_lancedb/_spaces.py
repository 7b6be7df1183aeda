"""`SpaceCache`: which namespaces the store holds in memory, and loading them.

Each namespace's `labile_lancedb._cache.Space` is filled part by part on
first use (nodes, edges, observation ids), each with one scan of its table
confined to the namespace. The store writes through it afterwards, so it stays
equal to the committed rows plus the open transaction's writes. It is dropped
whenever that may no longer hold: for the namespaces a rolled-back transaction
touched, and entirely when another process commits.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from labile.plugin import Edge, get_logger
from labile_lancedb import _rows, _sql
from labile_lancedb._cache import EdgeGraph, NodeTable, Space
from labile_lancedb._tables import LanceTables

__all__ = ["SpaceCache"]

log = get_logger(__name__)

#: Loading a namespace of more nodes than this is logged with its duration.
_LOG_LOADS_OVER: int = 1000


class SpaceCache:
    """The per-namespace caches of one store, loaded from its tables on first use.

    Attributes:
        known_namespaces: Every namespace holding a row (committed or in the
            open transaction), once `labile_lancedb.store.LanceStore.namespaces`
            has scanned for them; ``None`` until then and after `forget`.
    """

    def __init__(self, tables: LanceTables) -> None:
        self._tables = tables
        self._spaces: dict[str, Space] = {}
        self.known_namespaces: set[str] | None = None
        #: Edges written but not committed yet (`labile_lancedb._carry`), put
        #: over the committed ones whenever a namespace's edges are (re)loaded.
        self.edge_overlay: Callable[[str], Iterable[tuple[Edge, int]]] | None = None

    def __len__(self) -> int:
        """How many namespaces have a cache."""
        return len(self._spaces)

    def _space(self, namespace: str) -> Space:
        space = self._spaces.get(namespace)
        if space is None:
            space = self._spaces[namespace] = Space()
        return space

    def nodes(self, namespace: str) -> NodeTable:
        """The namespace's nodes (the live cache: callers copy what they hand out)."""
        space = self._space(namespace)
        if space.nodes is None:
            t0 = time.perf_counter()
            schema = self._tables.schemas["nodes"]
            cols = [f.name for f in schema if f.name not in ("key", "search_text")]
            data = self._tables.scan("nodes", _sql.namespace_is(namespace), cols, namespace)
            table = NodeTable(self._tables.dim)
            nodes, seqs, t_start, t_end = _rows.nodes_from(data, self._tables.dim)
            del data  # the arrow copy of every embedding: free it before the next step
            table.load(nodes, seqs, t_start, t_end, _rows.NULL_US)
            space.nodes = table
            if len(table) > _LOG_LOADS_OVER:
                log.info("lancedb_nodes_loaded", namespace=namespace, nodes=len(table),
                         ms=round((time.perf_counter() - t0) * 1000, 1))
        return space.nodes

    def edges(self, namespace: str) -> EdgeGraph:
        """The namespace's edges and topology (the live cache)."""
        space = self._space(namespace)
        if space.edges is None:
            cols = [f.name for f in self._tables.schemas["edges"] if f.name != "key"]
            graph = EdgeGraph()
            rows = self._tables.scan("edges", _sql.namespace_is(namespace), cols, namespace)
            for edge, seq in _rows.edges_from(rows):
                graph.put(edge, seq)
            if self.edge_overlay is not None:
                for edge, seq in self.edge_overlay(namespace):
                    graph.put(edge, seq)
            space.edges = graph
        return space.edges

    def observation_ids(self, namespace: str) -> set[str]:
        """The ids in the namespace's observation log (the live set)."""
        space = self._space(namespace)
        if space.obs_ids is None:
            data = self._tables.scan("observations", _sql.namespace_is(namespace), ["id"],
                                    namespace)
            space.obs_ids = set(data.column("id").to_pylist())
        return space.obs_ids

    def wrote(self, namespace: str) -> None:
        """Note a write to ``namespace`` (it now holds a row)."""
        if self.known_namespaces is not None:
            self.known_namespaces.add(namespace)

    def forget(self, namespaces: Iterable[str]) -> None:
        """Drop the caches of ``namespaces`` and the namespace list."""
        for ns in namespaces:
            self._spaces.pop(ns, None)
        self.known_namespaces = None

    def clear(self) -> None:
        """Drop every cache."""
        self._spaces.clear()
        self.known_namespaces = None
