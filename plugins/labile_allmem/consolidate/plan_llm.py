"""The LLM repair planner: one strict-JSON call per target, no retries.

The reply is validated against the schema by the client; an invalid reply, a
failed call or a reply of the wrong shape raises `PlanError` and the target is
Skipped (fail closed). Whether the plan's content is acceptable (grounded
segments, supported descriptors) is decided afterwards by
`labile_allmem.consolidate.validate`, the same checks the offline plans pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from labile.plugin import Deps, LLMClient, LLMError, NoConfig, Node
from labile_allmem import prompts
from labile_allmem.consolidate.records import DescriptorPlan, PlanError, SplitPlan
from labile_allmem.schema import unit_order

if TYPE_CHECKING:
    from labile_allmem.decisions import Describer

__all__ = ["LLMPlanner", "build_llm_planner"]


class LLMPlanner:
    """``allmem.repair_planner.llm``: plans from an LLM (see the module doc)."""

    def __init__(self, llm: LLMClient) -> None:
        """Create the planner around ``llm``."""
        self._llm = llm

    def _ask(self, prompt: str, schema: dict[str, Any], operation: str) -> dict[str, Any]:
        try:
            reply = self._llm.complete_json(prompt, schema, operation=operation,
                                            system=prompts.SYSTEM)
        except LLMError as exc:
            raise PlanError(f"planner output rejected: {str(exc)[:200]}") from exc
        if not isinstance(reply, dict):
            raise PlanError("planner reply is not a JSON object")
        return reply

    def plan_split(self, unit: Node) -> SplitPlan:
        """Ask for exact evidence segments."""
        reply = self._ask(prompts.split_plan_prompt(prompts.unit_block("U1", unit)),
                          prompts.SPLIT_SCHEMA, "allmem.plan_split")
        return SplitPlan(segments=tuple(str(s) for s in reply["segments"]),
                         reason=str(reply.get("reason", ""))[:300])

    def plan_merge(self, units: Sequence[Node]) -> DescriptorPlan:
        """Ask for the canonical descriptor of the set."""
        ordered = sorted(units, key=unit_order)
        blocks = [prompts.unit_block(f"U{i + 1}", u) for i, u in enumerate(ordered)]
        reply = self._ask(prompts.merge_plan_prompt(blocks), prompts.DESCRIPTOR_PLAN_SCHEMA,
                          "allmem.plan_merge")
        return _descriptor_plan(reply)

    def plan_update(self, current: Node, old: Node) -> DescriptorPlan:
        """Ask for the refreshed descriptor of the current unit."""
        prompt = prompts.update_plan_prompt(prompts.unit_block("CURRENT", current),
                                            prompts.unit_block("OLD", old))
        reply = self._ask(prompt, prompts.DESCRIPTOR_PLAN_SCHEMA, "allmem.plan_update")
        return _descriptor_plan(reply)


def _descriptor_plan(reply: dict[str, Any]) -> DescriptorPlan:
    return DescriptorPlan(
        summary=str(reply["summary"]),
        keywords=tuple(str(k) for k in reply["keywords"]),
        decline=bool(reply.get("decline", False)),
        reason=str(reply.get("reason", ""))[:300],
    )


def build_llm_planner(config: NoConfig, deps: Deps, describer: Describer) -> LLMPlanner:
    """Factory of ``allmem.repair_planner.llm`` (plans without ``describer``)."""
    del config, describer
    return LLMPlanner(deps.llm)
