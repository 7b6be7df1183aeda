"""Executing a ``modify`` decision: merging a unit into the node it is the same thing as."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import attrs

from labile.plugin import Node
from labile_realm.construct.decide_offline import NodeDecision
from labile_realm.construct.identity import adopt_type
from labile_realm.construct.units import Unit
from labile_realm.schema import ENTITY


def merge_unit(
    target: Node, unit: Unit, decision: NodeDecision, max_sources: int, now: datetime
) -> Node:
    """Merge ``unit`` into ``target`` without touching its content (evidence).

    For an entity, new aliases and ``same_as`` links are added and logged in
    ``attrs["merges"]`` (`labile_realm.construct.identity.undo_merge` takes
    one back), and a category the node only guessed gives way to one the
    unit has evidence for.
    """
    sources = list(target.sources)
    added = [s for s in unit.sources if s not in sources]
    sources.extend(added)
    if target.kind == ENTITY:
        sources = sources[:max_sources]
    keywords = list(target.keywords)
    for k in (decision.keywords or unit.keywords):
        if k.casefold() not in {x.casefold() for x in keywords}:
            keywords.append(k)
    node_attrs = dict(target.attrs)
    description = decision.description or target.description
    if target.kind == ENTITY:
        _merge_identity(node_attrs, target.id, unit, decision.reason,
                        [s for s in added if s in sources])
        description = adopt_type(node_attrs, description, unit.attrs)
    node_attrs["merged"] = int(node_attrs.get("merged", 0)) + 1
    return attrs.evolve(
        target, description=description,
        keywords=tuple(keywords[:12]), sources=tuple(sources), updated_at=now, attrs=node_attrs,
    )


def _merge_identity(
    node_attrs: dict[str, Any], node_id: str, unit: Unit, reason: str, added: list[str]
) -> None:
    """Add the unit's names as aliases and its ``same_as`` links; log each merge that did."""
    aliases = list(node_attrs.get("aliases", []))
    same_as = list(node_attrs.get("same_as", []))
    log = list(node_attrs.get("merges", []))
    name = str(node_attrs.get("name", ""))
    absorbed = [i for i in unit.attrs.get("same_as", ()) if i != node_id and i not in same_as]
    for alias in (unit.name, *unit.attrs.get("aliases", ())):
        if not alias or alias == name or alias in aliases:
            continue
        aliases.append(alias)
        why = unit.attrs.get("alias_reasons", {}).get(alias, reason)
        entry: dict[str, Any] = {"alias": alias, "reason": why, "sources": added}
        if absorbed:
            entry["same_as"] = absorbed.pop(0)
            same_as.append(entry["same_as"])
        log.append(entry)
    node_attrs["aliases"] = aliases
    if same_as:
        node_attrs["same_as"] = same_as
    if log:
        node_attrs["merges"] = log
