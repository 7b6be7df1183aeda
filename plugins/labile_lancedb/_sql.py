"""SQL filter text for LanceDB queries: quoting, namespaces, `NodeFilter`.

Every string that reaches a filter goes through `quote`, so a namespace or id
containing ``'`` cannot end the literal early (SQL injection through a user
id would otherwise read or write another namespace's rows).
"""

from __future__ import annotations

from collections.abc import Iterable

from labile.plugin import NodeFilter
from labile_lancedb._rows import to_us


def quote(value: str) -> str:
    """``value`` as an SQL string literal (single quotes doubled)."""
    return "'" + value.replace("'", "''") + "'"


def in_list(column: str, values: Iterable[str]) -> str:
    """``column IN (...)``; ``FALSE`` for an empty collection (SQL has no empty IN)."""
    items = sorted(set(values))
    if not items:
        return "FALSE"
    return f"{column} IN ({', '.join(quote(v) for v in items)})"


def namespace_is(namespace: str) -> str:
    """The clause that confines a query to one namespace."""
    return f"namespace = {quote(namespace)}"


def _timestamp(us: int) -> str:
    return f"arrow_cast({us}, 'Timestamp(Microsecond, Some(\"UTC\"))')"


def node_filter(
    namespace: str | None, where: NodeFilter | None, *, embedded: bool = False
) -> str:
    """A filter equivalent to ``namespace`` plus `NodeFilter.accepts`; ``""`` if none.

    ``namespace=None`` leaves the namespace clause out: only for a caller that
    knows the namespace owns every row and checks the namespace of what comes
    back. ``embedded`` also requires the node to have an embedding (vector
    search). The time clause mirrors ``accepts``: nodes without
    ``time_start`` pass, and a node's span ends at ``time_end`` or, when that
    is missing, at ``time_start``.
    """
    parts = [] if namespace is None else [namespace_is(namespace)]
    if embedded:
        parts.append("has_embedding = true")
    if where is not None:
        if where.kinds is not None:
            parts.append(in_list("kind", where.kinds))
        if where.visible is not None:
            parts.append(f"visible = {'true' if where.visible else 'false'}")
        if where.ids is not None:
            parts.append(in_list("id", where.ids))
        if where.time_range is not None:
            lo, hi = (to_us(t) for t in where.time_range)
            parts.append(
                f"(time_start IS NULL OR (COALESCE(time_end, time_start) >= {_timestamp(lo)}"
                f" AND time_start <= {_timestamp(hi)}))"
            )
    return " AND ".join(parts)
