"""How an entity node records its type, and the index key of a name typed apart.

Kept apart from `labile_realm.construct.identity` (the merge rules, which read
the conversation state) so that the state itself can use them without an
import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["entity_type", "typed_key"]


def entity_type(node_attrs: Mapping[str, Any]) -> tuple[str, str]:
    """``(category, cue)`` of an entity node or unit (cue "" where none was recorded)."""
    return str(node_attrs.get("category", "")), str(node_attrs.get("category_cue", ""))


def typed_key(key: str, category: str) -> str:
    """The index key of a name that shares its spelling with a referent of another type."""
    return f"{key}|{category}"
