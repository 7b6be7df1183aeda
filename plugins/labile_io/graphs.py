"""A namespace's graph as a picture-ready structure: JSON Graph, GraphML and DOT.

`GraphView` holds nodes and edges as flat attribute dicts (kind, text,
dates, validity, sources; predicate, weight, origin, reconsolidation edits),
the same for ``labile export --format graphml|dot|json-graph``, the HTTP
API's subgraph and neighbourhood, and the web app. GraphML and DOT are written
by igraph (already a kernel dependency); their attributes are strings and
numbers only, so lists (sources, superseded_by) are joined with spaces.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from typing import Any, Final

import attrs

from labile.plugin import Edge, Node, Store
from labile_io.hits import node_validity

__all__ = ["GRAPH_FORMATS", "GraphView", "edge_dict", "neighbourhood", "node_dict",
           "subgraph_of"]

#: ``labile export --format`` values besides the default ``jsonl``.
GRAPH_FORMATS: Final = ("graphml", "dot", "json-graph")

#: How many characters of a node's text a graph label carries.
LABEL_CHARS: Final = 80


def node_dict(node: Node) -> dict[str, Any]:
    """A node's attributes for a graph (no embedding)."""
    text = node.description or node.content
    return {"id": node.id, "kind": node.kind, "label": text[:LABEL_CHARS],
            "text": text, "content": node.content, "visible": node.visible,
            "time_start": node.time_start.isoformat() if node.time_start else None,
            "time_end": node.time_end.isoformat() if node.time_end else None,
            "sources": list(node.sources), **node_validity(node),
            "origin": node.attrs.get("origin"),
            "lineage": _lineage(node)}


def _lineage(node: Node) -> list[str]:
    """The units a derived All-Mem unit (split sibling, merged unit) was made from."""
    value = node.attrs.get("derived_from")
    return [str(v) for v in value] if isinstance(value, list | tuple) else []


def edge_dict(edge: Edge) -> dict[str, Any]:
    """An edge's attributes for a graph, with its reconsolidation edits (``history``)."""
    history = edge.attrs.get("history")
    return {"id": edge.id, "src": edge.src, "dst": edge.dst, "predicate": edge.predicate,
            "weight": round(edge.weight, 6), "origin": str(edge.origin),
            "description": edge.description,
            "active": edge.attrs.get("active", True) is not False
            and not edge.attrs.get("retired", False),
            "history": list(history) if isinstance(history, list | tuple) else []}


@attrs.frozen
class GraphView:
    """Nodes and edges as dicts (`node_dict`, `edge_dict`); edges whose ends are both
    present only."""

    nodes: tuple[dict[str, Any], ...]
    edges: tuple[dict[str, Any], ...]

    @classmethod
    def of(cls, nodes: Iterable[Node], edges: Iterable[Edge]) -> GraphView:
        """The view of these records (edges to absent nodes dropped, each edge once)."""
        by_id = {n.id: node_dict(n) for n in nodes}
        seen: dict[str, dict[str, Any]] = {}
        for e in edges:
            if e.src in by_id and e.dst in by_id:
                seen.setdefault(e.id, edge_dict(e))
        return cls(tuple(by_id.values()), tuple(seen.values()))

    def to_json(self) -> dict[str, Any]:
        """The plain ``{"nodes": [...], "edges": [...]}`` the HTTP API serves."""
        return {"nodes": list(self.nodes), "edges": list(self.edges)}

    def to_json_graph(self, label: str) -> dict[str, Any]:
        """JSON Graph Format (v2): nodes keyed by id, edges with ``relation``."""
        return {"graph": {
            "label": label, "directed": True,
            "nodes": {n["id"]: {"label": n["label"], "metadata": {
                k: v for k, v in n.items() if k not in ("id", "label")}} for n in self.nodes},
            "edges": [{"id": e["id"], "source": e["src"], "target": e["dst"],
                       "relation": e["predicate"], "metadata": {
                           k: v for k, v in e.items()
                           if k not in ("id", "src", "dst", "predicate")}}
                      for e in self.edges],
        }}

    def write(self, fmt: str) -> str:
        """The graph as GraphML or DOT text (igraph's writers)."""
        import igraph as ig

        if fmt not in ("graphml", "dot"):
            raise ValueError(f"unknown graph format {fmt!r}")
        index = {n["id"]: i for i, n in enumerate(self.nodes)}
        g = ig.Graph(n=len(self.nodes), directed=True,
                     edges=[(index[e["src"]], index[e["dst"]]) for e in self.edges])
        for key in ("id", "kind", "label", "visible", "time_start", "time_end", "sources",
                    "current", "valid_to", "superseded_by"):
            g.vs[key if key != "id" else "name"] = [_flat(n[key]) for n in self.nodes]
        for key in ("id", "predicate", "weight", "origin", "active"):
            g.es[key if key != "id" else "edge_id"] = [_flat(e[key]) for e in self.edges]
        g.es["edits"] = [len(e["history"]) for e in self.edges]
        if fmt == "dot":
            g.vs["label"] = [f"{n['kind']}: {n['label']}" for n in self.nodes]
            g.es["label"] = [f"{e['predicate']} {e['weight']:.2f}" for e in self.edges]
        fd, path = tempfile.mkstemp(suffix=f".{fmt}")
        os.close(fd)
        try:  # igraph writes to a path or a real file, not to a text buffer
            (g.write_graphml if fmt == "graphml" else g.write_dot)(path)
            with open(path, encoding="utf-8") as fh:
                return fh.read()
        finally:
            os.unlink(path)


def _flat(value: Any) -> str | float | int:
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return value if isinstance(value, int | float | str) else str(value)


def subgraph_of(store: Store, namespace: str, node_ids: Sequence[str]) -> GraphView:
    """The nodes ``node_ids`` (the hits and their expansion paths) and the edges among them."""
    ids = list(dict.fromkeys(node_ids))
    nodes = store.get_nodes(namespace, ids)
    return GraphView.of(nodes, store.edges_of(namespace, ids, direction="out"))


def neighbourhood(store: Store, namespace: str, node_id: str, *, hops: int = 1,
                  limit: int = 200) -> GraphView:
    """``node_id`` and the nodes within ``hops`` edges of it (either direction), at most
    ``limit`` nodes, nearest first."""
    order = [node_id]
    frontier = [node_id]
    for _ in range(hops):
        if not frontier or len(order) >= limit:
            break
        found = []
        for e in store.edges_of(namespace, frontier, direction="both"):
            for other in (e.src, e.dst):
                if other not in order and other not in found:
                    found.append(other)
        room = limit - len(order)
        order += found[:room]
        frontier = found[:room]
    nodes = store.get_nodes(namespace, order)
    return GraphView.of(nodes, store.edges_of(namespace, order, direction="out"))


def whole(store: Store, namespace: str) -> GraphView:
    """Every node and edge of ``namespace``."""
    return GraphView.of(store.iter_nodes(namespace), store.iter_edges(namespace))
