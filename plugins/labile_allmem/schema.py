"""The All-Mem graph schema: memory units, run records and five link predicates.

The paper's memory bank: units with immutable evidence, and typed links.

A *unit* (``allmem.unit``) is one piece of memory:

* ``content`` is the immutable evidence: for a turn, exactly the turn's text;
  for a split sibling, an exact substring of its source's evidence; for a
  merged unit, the evidence of its members joined by newlines (oldest first);
* ``description`` and ``keywords`` are the regenerable descriptor (summary and
  keywords), and ``embedding`` is the embedding of their concatenation;
* ``time_start`` is the unit's time, ``visible`` is the paper's a_v;
* ``sources`` are the observation (turn) ids the unit stands for;
* ``attrs`` holds the speaker, the session, the image caption (never part of
  the evidence, see ``docs/allmem.md``), the write sequence number, the origin
  (``turn`` / ``split`` / ``merge``) and the ``buffered`` flag: the
  consolidation buffer is the set of units whose ``buffered`` flag is true, so
  it survives a restart of the process with the store.

A *run record* (``allmem.run``) is one consolidation run's compact report, an
invisible node without an embedding; the ordered run records are the edit log.

Link families. The paper names four (temporal, semantic, version, sibling);
its sibling family covers both the coherence of split siblings and the
lineage from a derived unit back to the units it replaced. Those two need
different directions, so they are two predicates here:

* ``allmem.temporal``: later turn -> the previous turn of the same session;
* ``allmem.semantic``: unit -> a similar unit; written in both directions,
  each node's *active* out-degree capped at d_σ;
* ``allmem.version``: current unit -> the unit it superseded;
* ``allmem.sibling``: between split siblings (symmetric);
* ``allmem.lineage``: derived unit (split sibling, merged unit) -> each
  archived unit it was derived from.

The store protocol has no edge deletion, so a semantic link removed by
degree-cap pruning or rewiring is *deactivated*: weight 0 and
``attrs["active"] = False``. Every reader of this bundle ignores inactive
links (`is_active`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Final

from labile.plugin import Edge, Layer, Node, NodeFilter, NodeKind, Predicate, Store

PREFIX: Final = "allmem."

UNIT: Final = "allmem.unit"
RUN: Final = "allmem.run"

TEMPORAL: Final = "allmem.temporal"
SEMANTIC: Final = "allmem.semantic"
VERSION: Final = "allmem.version"
SIBLING: Final = "allmem.sibling"
LINEAGE: Final = "allmem.lineage"

#: Short link-type names (as configs spell them) -> registered predicate names.
PREDICATE_BY_SHORT: Final[dict[str, str]] = {
    "temporal": TEMPORAL,
    "semantic": SEMANTIC,
    "version": VERSION,
    "sibling": SIBLING,
    "lineage": LINEAGE,
}
SHORT_BY_PREDICATE: Final[dict[str, str]] = {v: k for k, v in PREDICATE_BY_SHORT.items()}
ALL_PREDICATES: Final[tuple[str, ...]] = tuple(PREDICATE_BY_SHORT.values())

#: Origins of a unit.
ORIGIN_TURN: Final = "turn"
ORIGIN_SPLIT: Final = "split"
ORIGIN_MERGE: Final = "merge"

NODE_KINDS: Final[tuple[NodeKind, ...]] = (
    NodeKind(
        name=UNIT,
        fields=(
            "speaker", "session", "caption", "date_text", "seq", "origin", "buffered",
            "reply_to", "derived_from", "supersedes",
        ),
        summary="All-Mem memory unit: immutable evidence + regenerable summary/keywords",
    ),
    NodeKind(
        name=RUN,
        fields=("seq", "counts", "visible_units", "total_units", "history", "ms"),
        summary="one consolidation run's compact report (the edit log); never visible",
    ),
)

PREDICATES: Final[tuple[Predicate, ...]] = (
    Predicate(name=TEMPORAL, layer=Layer.STRUCTURAL,
              summary="a turn points back to the previous turn of its session"),
    Predicate(name=SEMANTIC, layer=Layer.ASSOCIATIVE,
              summary="similar units; active out-degree capped (d_σ)"),
    Predicate(name=VERSION, layer=Layer.TAXONOMIC,
              summary="the current unit points to the unit it superseded"),
    Predicate(name=SIBLING, layer=Layer.STRUCTURAL, symmetric=True,
              summary="units split from the same source"),
    Predicate(name=LINEAGE, layer=Layer.TAXONOMIC,
              summary="a split sibling or merged unit points to the unit it replaced"),
)

def node_filter(
    kinds: Iterable[str] | None = None,
    *,
    visible: bool | None = None,
    ids: Iterable[str] | None = None,
) -> NodeFilter:
    """A `NodeFilter` on kinds, visibility and ids (``None``: no restriction)."""
    fields: dict[str, Any] = {"visible": visible}
    # Built through a dict: the kernel's frozenset converters are generic and do
    # not type-check when called with a literal.
    if kinds is not None:
        fields["kinds"] = frozenset(kinds)
    if ids is not None:
        fields["ids"] = frozenset(ids)
    return NodeFilter(**fields)


UNIT_FILTER: Final = node_filter([UNIT])
VISIBLE_UNITS: Final = node_filter([UNIT], visible=True)
RUN_FILTER: Final = node_filter([RUN])


def unit_id(observation_id: str) -> str:
    """The id of the unit written for one observation."""
    return f"u:{observation_id}"


def is_active(edge: Edge) -> bool:
    """Whether a link is live (not deactivated by pruning or rewiring)."""
    return bool(edge.attrs.get("active", True))


def is_unit(node: Node) -> bool:
    """Whether ``node`` is an All-Mem memory unit."""
    return node.kind == UNIT


def unit_order(node: Node) -> tuple[Any, int, str]:
    """A total order of units by time, then write sequence, then id (oldest first)."""
    ts = node.time_start.timestamp() if node.time_start is not None else float("-inf")
    return (ts, int(node.attrs.get("seq", 0)), node.id)


def session_key(node: Node) -> str:
    """The session a unit belongs to (its ``session`` attr, else its UTC day)."""
    session = node.attrs.get("session")
    if session:
        return str(session)
    if node.time_start is not None:
        return "day:" + node.time_start.date().isoformat()
    return "day:?"


def iter_units(store: Store, namespace: str, *, visible: bool | None = None) -> Iterator[Node]:
    """Every unit of ``namespace`` (optionally only visible or only archived ones)."""
    where = node_filter([UNIT], visible=visible)
    yield from store.iter_nodes(namespace, where)
