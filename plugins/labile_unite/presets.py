"""The ``labile`` preset (REALM and All-Mem together) and its ablation.

* ``labile``: REALM's offline graph construction, seeding on the visible
  surface (``unite.visible_match``), REALM's typed expansion and aggregation,
  REALM's reconsolidation, and All-Mem's non-destructive consolidation over
  REALM's events (``unite.atc``).
* ``labile-no-consolidation``: the same without consolidation (the surface is
  then every event, so seeding equals REALM's).
* ``labile-eager``: the gate at θ = 0.5, so that consolidation acts on every
  kind of proposal judged right at least half the time: what consolidation
  does to retrieval when it acts (at θ = 0.9 offline it admits nothing yet;
  docs/unite.md).
"""

from __future__ import annotations

from typing import Any, Final

from labile_realm.presets import realm

#: θ of the ``labile-eager`` ablation.
EAGER_THETA: Final = 0.5


def labile() -> dict[str, Any]:
    """REALM's typed graph and reconsolidation with All-Mem's consolidation."""
    table = realm()
    table["retrieval"]["seed"][0]["type"] = "unite.visible_match"
    table["consolidate"] = [{"type": "unite.atc"}]
    return table


def labile_eager() -> dict[str, Any]:
    """Ablation: ``labile`` whose consolidation gate admits every kind of
    proposal judged right at least half the time (θ = 0.5 instead of 0.9)."""
    table = labile()
    table["consolidate"] = [{"type": "unite.atc", "split_threshold": EAGER_THETA,
                             "merge_threshold": EAGER_THETA, "update_threshold": EAGER_THETA}]
    return table


def labile_no_consolidation() -> dict[str, Any]:
    """Ablation: ``labile`` without consolidation."""
    table = labile()
    table["consolidate"] = []
    return table


#: name -> (summary, table)
PRESETS: Final[dict[str, tuple[str, dict[str, Any]]]] = {
    "labile": ("REALM's typed graph and reconsolidation with All-Mem's non-destructive "
               "consolidation and visible-surface seeding, offline", labile()),
    "labile-no-consolidation": ("ablation: labile without consolidation",
                                labile_no_consolidation()),
    "labile-eager": ("ablation: labile whose consolidation gate is θ = 0.5, not 0.9",
                     labile_eager()),
}
