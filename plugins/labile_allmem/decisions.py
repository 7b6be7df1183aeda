"""All-Mem's decisions as component kinds: one Protocol and one declaration each.

Three decisions of All-Mem can be made by the LLM (the paper's behaviour) or
offline (rules, embeddings, lexical signals): descriptor compression,
diagnosis and repair planning. Each is a kind with two bundled
implementations, ``<kind>.offline`` and ``<kind>.llm``; a third party can
register its own. ``"offline"`` and ``"llm"`` are aliases kept for configs
written before the decisions became kinds.

Factories are called ``factory(config, deps)``, with ``config`` the
component's own options (an LLM variant that falls back on offline rules
carries their options in its own config class); a repair planner also gets
the consolidator's `Describer`, a component rather than an option. Decisions
that call the LLM are registered with ``needs=("llm",)``; the kernel refuses
them in a pipeline without a model.

This module is imported when the plugin loads: it defines types only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Protocol

from labile.plugin import KindSpec, Node

if TYPE_CHECKING:
    from labile_allmem.consolidate.records import (
        DescriptorPlan,
        Neighbourhood,
        Proposal,
        SplitPlan,
    )
    from labile_allmem.describe import Descriptor, Evidence

DESCRIPTOR: Final = "allmem.descriptor"
DIAGNOSER: Final = "allmem.diagnoser"
REPAIR_PLANNER: Final = "allmem.repair_planner"


class Describer(Protocol):
    """Descriptor compression: evidence in, one descriptor per item out.

    Attributes:
        fallbacks: Items described by a fallback because the primary way
            failed (an unusable LLM reply); read before and after a call.
    """

    fallbacks: int

    def describe(self, items: Sequence[Evidence]) -> list[Descriptor]:
        """Return one descriptor per item, in order (never fails for an item)."""
        ...


class Diagnoser(Protocol):
    """Turns neighbourhoods into edit proposals without touching the store.

    Attributes:
        failures: Neighbourhoods that yielded nothing because a call failed.
    """

    failures: int

    def diagnose(self, hoods: Sequence[Neighbourhood]) -> list[Proposal]:
        """All proposals for ``hoods``, in neighbourhood order."""
        ...


class RepairPlanner(Protocol):
    """Produces repair plans; it never edits the graph (the executor does).

    Each method raises `labile_allmem.consolidate.records.PlanError` when it
    cannot produce a usable plan (the target is then Skipped).
    """

    def plan_split(self, unit: Node) -> SplitPlan:
        """Evidence segments for one conflated unit."""
        ...

    def plan_merge(self, units: Sequence[Node]) -> DescriptorPlan:
        """The canonical descriptor of a redundant set (oldest first)."""
        ...

    def plan_update(self, current: Node, old: Node) -> DescriptorPlan:
        """The refreshed descriptor of ``current``, which supersedes ``old``."""
        ...


def _kind(name: str, plural: str, protocol: type, context: str, what: str) -> KindSpec:
    return KindSpec(
        name=name, plural=plural, protocol=protocol, placement="nested",
        aliases={"offline": f"{name}.offline", "llm": f"{name}.llm"},
        doc=f"""Add {what}.

        ``factory({context})`` returns a `labile_allmem.decisions.{protocol.__name__}`.
        Chosen by name in the host's options; ``"offline"`` and ``"llm"`` name
        the bundled pair.
        """,
    )


#: The kinds the All-Mem bundle declares.
KINDS: Final = (
    _kind(DESCRIPTOR, "allmem.descriptors", Describer, "config, deps",
          "All-Mem descriptor compressors (used by ``allmem.write`` and ``allmem.atc``)"),
    _kind(DIAGNOSER, "allmem.diagnosers", Diagnoser, "config, deps",
          "All-Mem diagnosers (Split / Merge / Update proposals)"),
    _kind(REPAIR_PLANNER, "allmem.repair_planners", RepairPlanner,
          "config, deps, describer: Describer",
          "All-Mem repair planners (the plan of each accepted edit)"),
)
