"""What forgetting an observation does to All-Mem's memory (the ``allmem.forget`` handler).

The kernel drops every unit built from forgotten turns alone (a turn's unit,
its split siblings) and every unit that also has other sources (a merged
unit: its content joins its members' texts), with their edges, lineage
included. This handler repairs what that leaves behind:

* the surviving members of a dropped merged unit are made visible again
  (they were archived by the merge), and so are the units a dropped unit had
  superseded through an update;
* a surviving unit that recorded a dropped unit in ``supersedes`` or
  ``derived_from`` forgets that id, and when its description quotes a word
  only forgotten turns contain, the description falls back to its own text
  (re-embedded).
"""

from __future__ import annotations

import attrs

from labile.plugin import ForgetPlan, Node
from labile_allmem.schema import UNIT

__all__ = ["forget_allmem"]

_LINKS = ("supersedes", "derived_from")


def forget_allmem(plan: ForgetPlan) -> None:
    """Re-surface and clean the All-Mem units a forget leaves behind (see the module docs)."""
    store, ns = plan.deps.store, plan.namespace
    gone = plan.drop_nodes | set(plan.affected)
    units = [n for n in store.iter_nodes(ns) if n.kind == UNIT]
    dropped = [n for n in units if n.id in gone]
    resurface = {m for n in dropped for key in _LINKS for m in n.attrs.get(key, [])} - gone
    changed: list[Node] = []
    for unit in units:
        if unit.id in gone:
            continue
        links = {k: [m for m in unit.attrs.get(k, []) if m not in gone] for k in _LINKS
                 if k in unit.attrs}
        visible = unit.visible or unit.id in resurface
        description = unit.description
        if plan.leaks(description) or plan.leaks(" ".join(unit.keywords)):
            description = unit.content
        if (links == {k: unit.attrs[k] for k in links} and visible == unit.visible
                and description == unit.description):
            continue
        changed.append(attrs.evolve(
            unit, visible=visible, description=description,
            keywords=() if description != unit.description else unit.keywords,
            attrs={**unit.attrs, **links}))
    redescribed = [n for n in changed if n.description == n.content]
    if redescribed:
        vectors = plan.deps.embedder.embed([n.content for n in redescribed])
        for node, vec in zip(redescribed, vectors, strict=True):
            node.embedding = vec
    plan.rebuilt.update((n.id, n) for n in changed)
