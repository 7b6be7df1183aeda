"""The outcomes of REALM's write decisions: a node operation and edge operations.

Kept apart from the deciders so that rule modules (`labile_realm.construct.relations`)
and the deciders can both build them without importing each other.
"""

from __future__ import annotations

from typing import Literal

import attrs

NodeOp = Literal["add", "modify", "skip"]
EdgeAction = Literal["add", "modify", "delete", "no_change"]


@attrs.frozen(kw_only=True)
class NodeDecision:
    """The outcome of the node operation decision for one unit.

    Attributes:
        op: ``add`` a new node, ``modify`` (merge into) ``target``, or ``skip``.
        target: The existing node merged into or already covering the unit.
        related: Neighbour ids the edge decision should consider.
        description: A refined description (LLM mode), else ``None``.
        keywords: Refined keywords (LLM mode), else ``None``.
        reason: Why, in a few words (logged).
    """

    op: NodeOp
    target: str | None = None
    related: tuple[str, ...] = ()
    description: str | None = None
    keywords: tuple[str, ...] | None = None
    reason: str = ""


@attrs.frozen(kw_only=True)
class EdgeOp:
    """One edge operation between the new node and a neighbour.

    ``delete`` retires an edge (weight 0, ``attrs["retired"] = True``): the
    store contract has no edge deletion, and retired edges are never
    traversed.
    """

    action: EdgeAction
    src: str
    dst: str
    predicate: str
    description: str = ""
    weight: float = 0.5
