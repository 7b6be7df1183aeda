"""A fixed search result that the context tests render (dates, spans, undated, long text)."""

from __future__ import annotations

from datetime import UTC, datetime

from labile import Hit, Node, Reach


def node(nid: str, text: str, *, start: datetime | None = None, end: datetime | None = None,
         sources: tuple[str, ...] = (), **attrs: object) -> Node:
    """A node with the fields the context reads."""
    return Node(id=nid, kind="baseline.turn", content=text, time_start=start, time_end=end,
                sources=sources, attrs=attrs)


def hits_of(*nodes: Node) -> list[Hit]:
    """Hits in the given order, scores falling."""
    return [Hit(node=n, score=1.0 - i / 100, via=Reach(atom="test")) for i, n in enumerate(nodes)]


MAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
JUNE = datetime(2023, 6, 1, 9, 0, tzinfo=UTC)
APRIL = datetime(2023, 4, 1, tzinfo=UTC)

FIXED_NODES = (
    node("n1", "Caroline went to the LGBTQ support group.", start=MAY, sources=("D1:3",),
         said_at=MAY.isoformat()),
    node("n2", "Melanie  painted\n a  sunrise   last year.", start=APRIL, end=JUNE,
         sources=("D2:1", "D2:2"), said_at=JUNE.isoformat()),
    node("n3", "An undated note about pottery.", sources=("D3:7",)),
    node("n1", "duplicate of n1 is shown once", start=MAY),
    node("n4", "Caroline is researching adoption agencies " * 12, start=JUNE,
         sources=("D4:1",)),
)
