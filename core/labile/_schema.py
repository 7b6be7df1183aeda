"""The graph schema (registered node kinds and predicates) and its enforcement.

`CheckedStore` wraps any `Store` so that every write is checked against the
schema: unknown kinds or predicates are rejected with the registered names,
nodes and edges are stamped with their namespace, and symmetric predicates
get their reverse edge. Components write through it (``deps.store``), so no
bundle can bypass the schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from labile._errors import SchemaError
from labile._model import Edge, Node, NodeKind, Predicate, edge_id

if TYPE_CHECKING:
    from labile._protocols import Store
    from labile._registry import Registries


@attrs.frozen
class Schema:
    """Registered node kinds and edge predicates, by name."""

    node_kinds: dict[str, NodeKind]
    predicates: dict[str, Predicate]

    @classmethod
    def from_registries(cls, registries: Registries) -> Schema:
        """Build the schema from the ``node_kind`` and ``predicate`` registries."""
        kinds = {c.name: _value(c.factory, NodeKind) for c in registries["node_kind"]}
        preds = {c.name: _value(c.factory, Predicate) for c in registries["predicate"]}
        return cls(kinds, preds)

    def check_node(self, node: Node) -> None:
        """Raise `SchemaError` if ``node.kind`` is not registered."""
        if node.kind not in self.node_kinds:
            raise SchemaError(
                f"node {node.id!r} has unknown kind {node.kind!r} "
                f"(registered: {', '.join(sorted(self.node_kinds)) or 'none'})"
            )

    def predicate(self, name: str) -> Predicate:
        """The registered predicate ``name``, or `SchemaError` listing the known ones."""
        try:
            return self.predicates[name]
        except KeyError:
            raise SchemaError(
                f"unknown predicate {name!r} "
                f"(registered: {', '.join(sorted(self.predicates)) or 'none'})"
            ) from None

    def with_reverse(self, edges: Sequence[Edge]) -> list[Edge]:
        """``edges`` plus the reverse of each symmetric one (deduplicated by id)."""
        out: dict[str, Edge] = {}
        for edge in edges:
            pred = self.predicate(edge.predicate)
            out[edge.id] = edge
            if pred.symmetric and edge.src != edge.dst:
                rid = edge_id(edge.dst, edge.predicate, edge.src)
                if rid not in out:
                    out[rid] = attrs.evolve(edge, id=rid, src=edge.dst, dst=edge.src)
        return list(out.values())


def _value(value: Any, cls: type) -> Any:
    if callable(value) and not isinstance(value, cls):
        value = value()
    if not isinstance(value, cls):
        raise SchemaError(f"expected a {cls.__name__}, got {value!r}")
    return value


class CheckedStore:
    """A `Store` proxy that enforces the schema on writes.

    Reads pass through unchanged (attribute access is delegated).
    """

    def __init__(self, inner: Store, schema: Schema) -> None:
        self.inner = inner
        self.schema = schema

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def upsert_nodes(self, namespace: str, nodes: Sequence[Node]) -> None:
        """Check kinds, then write copies stamped with the namespace."""
        for node in nodes:
            self.schema.check_node(node)
        self.inner.upsert_nodes(namespace, [attrs.evolve(n, namespace=namespace) for n in nodes])

    def upsert_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        """Check predicates, add reverse edges of symmetric ones, then write."""
        full = self.schema.with_reverse(edges)
        self.inner.upsert_edges(namespace, [attrs.evolve(e, namespace=namespace) for e in full])
