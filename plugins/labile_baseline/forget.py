"""What forgetting an observation does to the baseline bundle (the ``baseline.forget`` handler).

``baseline.turn`` nodes have one source each, so the kernel drops a forgotten
turn's node by itself. But ``baseline.context_turns`` copies the turns before
a turn into that turn's description (its index text): the *next* turn's node
still quotes the forgotten one. This handler rewrites such descriptions from
the turns that remain before it, so no forgotten text stays in the index.
"""

from __future__ import annotations

import attrs

from labile.plugin import ForgetPlan, Node
from labile_text.render import turn_text

__all__ = ["forget_baseline"]

_TURN = "baseline.turn"


def forget_baseline(plan: ForgetPlan) -> None:
    """Rebuild the context of every surviving turn whose description quotes a forgotten turn."""
    forgotten = [turn_text(o, dated=False) for o in plan.forgotten]
    order = [o.id for o in plan.remaining]
    plain = {o.id: turn_text(o, dated=False) for o in plan.remaining}
    position = {oid: i for i, oid in enumerate(order)}
    for node in plan.deps.store.iter_nodes(plan.namespace):
        if node.kind != _TURN or node.id in plan.drop_nodes or not node.description:
            continue
        if not any(text and text in node.description for text in forgotten):
            continue
        plan.rebuilt[node.id] = _recontext(node, order, plain, position)


def _recontext(node: Node, order: list[str], plain: dict[str, str],
               position: dict[str, int]) -> Node:
    # As many turns as the description held before (context_turns), counted in
    # remaining turns: the description is rebuilt as if the forgotten turn never came.
    at = position.get(node.sources[0]) if node.sources else None
    if at is None:
        return attrs.evolve(node, description="")
    held = max(1, sum(1 for oid in order[:at] if plain[oid] in node.description))
    before = order[max(0, at - held):at]
    return attrs.evolve(node, description=" ".join(plain[oid] for oid in before))
