"""Executing a ``modify`` decision: merging a unit into the node it is the same thing as."""

from __future__ import annotations

from datetime import datetime

import attrs

from labile.plugin import Node
from labile_realm.construct.decide_offline import NodeDecision
from labile_realm.construct.units import Unit
from labile_realm.schema import ENTITY


def merge_unit(
    target: Node, unit: Unit, decision: NodeDecision, max_sources: int, now: datetime
) -> Node:
    """Merge ``unit`` into ``target`` without touching its content (evidence)."""
    sources = list(target.sources)
    sources.extend(s for s in unit.sources if s not in sources)
    if target.kind == ENTITY:
        sources = sources[:max_sources]
    keywords = list(target.keywords)
    for k in (decision.keywords or unit.keywords):
        if k.casefold() not in {x.casefold() for x in keywords}:
            keywords.append(k)
    node_attrs = dict(target.attrs)
    if target.kind == ENTITY:
        aliases = list(node_attrs.get("aliases", []))
        name = str(node_attrs.get("name", target.content))
        for alias in (unit.name, *unit.attrs.get("aliases", ())):
            if alias and alias != name and alias not in aliases:
                aliases.append(alias)
        node_attrs["aliases"] = aliases
    node_attrs["merged"] = int(node_attrs.get("merged", 0)) + 1
    return attrs.evolve(
        target, description=decision.description or target.description,
        keywords=tuple(keywords[:12]), sources=tuple(sources), updated_at=now, attrs=node_attrs,
    )
