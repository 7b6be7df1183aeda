"""The united bundle: REALM's typed graph with All-Mem's non-destructive consolidation.

Registers ``unite.atc`` (All-Mem's Split / Merge / Update over REALM events,
writing REALM predicates), ``unite.visible_match`` (REALM seeding on the
visible surface) and the ``labile`` preset. See ``docs/unite.md``.
"""

from __future__ import annotations

from labile.plugin import Register, hookimpl


@hookimpl
def labile_register_node_kinds(register: Register) -> None:
    """``unite.run``: a consolidation run's record (the events it diagnosed)."""
    from labile_unite.evidence import RUN_KIND

    register(RUN_KIND.name, RUN_KIND, summary=RUN_KIND.summary)


@hookimpl
def labile_register_seeders(register: Register) -> None:
    """``unite.visible_match``: REALM hybrid seeding without archived nodes."""
    from labile_realm.retrieve.seed import SeedConfig
    from labile_unite.seed import build_visible_match

    register("unite.visible_match", build_visible_match, config=SeedConfig,
             summary="realm.hybrid_match over the visible surface (archived nodes not seeded)")


@hookimpl
def labile_register_consolidators(register: Register) -> None:
    """``unite.atc``: All-Mem consolidation over REALM's events."""
    from labile_unite.consolidate import UniteATC, UniteATCConfig

    register("unite.atc", UniteATC, config=UniteATCConfig,
             summary="All-Mem's calibrated Split/Merge/Update on REALM events, REALM links")


@hookimpl
def labile_register_presets(register: Register) -> None:
    """``labile`` and ``labile-no-consolidation``."""
    from labile_unite.presets import PRESETS

    for name, (summary, table) in PRESETS.items():
        register(name, table, summary=summary)
