"""``unite.visible_match``: REALM's hybrid seeding anchored on the visible surface.

All-Mem anchors retrieval on the visible surface: an archived unit is
reached only through the links of what replaced it (the merged, split or
updated unit), never seeded directly, so a superseded statement does not
compete with the one that replaced it. This atom runs REALM's
``realm.hybrid_match`` (same options, same planner) and drops the archived
nodes from its seeds; REALM's typed expansion then reaches archived evidence
through ``summarizes`` / ``comprises`` / ``supersedes``.
"""

from __future__ import annotations

from typing import Any

from labile.plugin import Deps, Hit, Query
from labile_realm.retrieve.seed import RealmSeeder, SeedConfig

__all__ = ["VisibleSeeder", "build_visible_match"]


class VisibleSeeder(RealmSeeder):
    """``realm.hybrid_match`` without archived seeds (see the module doc)."""

    def seed(self, query: Query, state: dict[str, Any]) -> list[Hit]:
        """REALM's seeds, best first, archived nodes removed."""
        return [h for h in super().seed(query, state) if h.node.visible]


def build_visible_match(config: SeedConfig, deps: Deps) -> VisibleSeeder:
    """Factory of ``unite.visible_match`` (REALM's seed options)."""
    return VisibleSeeder("unite.visible_match", "hybrid_match", config, deps)
