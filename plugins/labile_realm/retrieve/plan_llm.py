"""LLM planning: seed plans and per-node expansion actions chosen by the model.

Replies are validated against their schemas and then against the prompt
(node numbers, predicates, layers, dates). An invalid reply is rejected whole,
counted in ``state["realm.llm_failures"]`` and logged; retrieval then uses the
offline plan or action, so a search never fails because of a bad reply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from labile.plugin import (
    Deps,
    Hit,
    LLMClient,
    LLMError,
    LLMOutputError,
    NoConfig,
    Node,
    Query,
    get_logger,
)
from labile_realm import prompts
from labile_realm.ids import IdMap
from labile_realm.retrieve.plan import (
    ExpansionAction,
    LayerFilter,
    OfflineExpansionPolicy,
    OfflinePlanner,
    PlannerConfig,
    SeedPlan,
    TemporalDecay,
    count_failure,
)
from labile_realm.schema import KIND_BY_SHORT, PREDICATES_BY_LAYER, predicate_name

log = get_logger(__name__)

_WHEN = re.compile(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T](\d{1,2}):(\d{2}))?)?)?$")
_UNIT_DAYS = {"hours": 1 / 24, "days": 1.0, "weeks": 7.0, "months": 30.0, "years": 365.0}


def parse_when(text: str) -> tuple[datetime, datetime]:
    """``"Y"``, ``"Y-M"``, ``"Y-M-D"`` or ``"Y-M-D H:M"`` as a UTC ``[start, end]`` span.

    Raises:
        LLMOutputError: another shape or an impossible date.
    """
    m = _WHEN.match(text.strip())
    if m is None:
        raise LLMOutputError(f"unreadable time {text!r}")
    try:
        y = int(m[1])
        if m[2] is None:
            return datetime(y, 1, 1, tzinfo=UTC), datetime(y, 12, 31, 23, 59, 59, tzinfo=UTC)
        mo = int(m[2])
        if m[3] is None:
            start = datetime(y, mo, 1, tzinfo=UTC)
            nxt = datetime(y + (mo == 12), mo % 12 + 1, 1, tzinfo=UTC)
            return start, nxt - timedelta(seconds=1)
        day = datetime(y, mo, int(m[3]), tzinfo=UTC)
        if m[4] is None:
            return day, day + timedelta(days=1) - timedelta(seconds=1)
        at = day.replace(hour=int(m[4]), minute=int(m[5]))
        return at, at
    except ValueError as exc:
        raise LLMOutputError(f"impossible time {text!r}") from exc


def parse_range(value: Any) -> tuple[datetime, datetime]:
    """A single time or a ``[start, end]`` pair as one span."""
    if isinstance(value, list):
        start, _ = parse_when(str(value[0]))
        _, end = parse_when(str(value[1]))
        if end < start:
            raise LLMOutputError(f"time range ends before it starts: {value!r}")
        return start, end
    return parse_when(str(value))


class LLMPlanner:
    """``realm.seed_planner.llm``: seed plans from the LLM, falling back to the offline planner."""

    def __init__(self, llm: LLMClient, offline: OfflinePlanner) -> None:
        self.llm = llm
        self.offline = offline

    def seed_plans(self, query: Query, max_plans: int, state: dict[str, Any]) -> list[SeedPlan]:
        """Up to ``max_plans`` plans (the offline plan if the reply is rejected)."""
        prompt = prompts.seed_plan_prompt(query.text, query.as_of, max_plans)
        try:
            reply = self.llm.complete_json(prompt, prompts.seed_schema(max_plans),
                                           operation="realm.seed_plan", system=prompts.SYSTEM)
            plans = [self._plan(p, query) for p in reply["plans"]]
        except LLMError as exc:
            count_failure(state, "seed_plan")
            log.warning("realm_llm_rejected", operation="seed_plan", error=str(exc)[:300])
            return self.offline.seed_plans(query, max_plans)
        return plans

    @staticmethod
    def _plan(raw: dict[str, Any], query: Query) -> SeedPlan:
        kinds = frozenset(KIND_BY_SHORT[k] for k in raw["allowed_node_types"]) or None
        window = raw.get("time_range")
        return SeedPlan(
            mode=raw["mode"], query=str(raw["query"]).strip() or query.text,
            keywords=tuple(str(k) for k in raw["keywords"] if str(k).strip()),
            node_types=kinds, time_range=parse_range(window) if window else None,
        )


class LLMExpansionPolicy:
    """``realm.expansion_policy.llm``: per-node expansion actions from the LLM (one
    call per round); a node the reply leaves out, or every node when the reply
    is rejected, gets the offline action."""

    def __init__(self, llm: LLMClient) -> None:
        self.llm = llm
        self.offline = OfflineExpansionPolicy()

    def actions(
        self, query: Query, frontier: Sequence[str], reached: Mapping[str, Hit],
        plan: SeedPlan, defaults: ExpansionAction, state: dict[str, Any],
    ) -> dict[str, ExpansionAction]:
        """One action per frontier node: the model's, else the offline one."""
        offline = self.offline.actions(query, frontier, reached, plan, defaults, state)
        nodes = [reached[i].node for i in frontier if i in reached]
        chosen = self.ask(query, nodes, defaults, state)
        return {i: chosen.get(i, offline[i]) for i in frontier}

    def ask(
        self, query: Query, nodes: Sequence[Node], defaults: ExpansionAction,
        state: dict[str, Any],
    ) -> dict[str, ExpansionAction]:
        """Node id -> action; empty when the reply is rejected (offline actions apply)."""
        if not nodes:
            return {}
        ids = IdMap(n.id for n in nodes)
        prompt = prompts.expansion_prompt(query.text, [(ids.short(n.id), n) for n in nodes])
        try:
            reply = self.llm.complete_json(prompt, prompts.expansion_schema(len(ids)),
                                           operation="realm.expansion", system=prompts.SYSTEM)
            out = {}
            for raw in reply["actions"]:
                node_id = ids.real(raw["seed_id"])
                out[node_id] = self._action(raw, defaults, query)
        except LLMError as exc:
            count_failure(state, "expansion")
            log.warning("realm_llm_rejected", operation="expansion", error=str(exc)[:300])
            return {}
        return out

    @staticmethod
    def _action(raw: dict[str, Any], defaults: ExpansionAction, query: Query) -> ExpansionAction:
        include = []
        for item in raw["layer_predicate_include"]:
            layer = item["layer"]
            pred_raw = str(item.get("predicate", "") or "").strip()
            pred = None
            if pred_raw:
                pred = predicate_name(pred_raw)
                if pred is None or pred not in PREDICATES_BY_LAYER[layer]:
                    raise LLMOutputError(f"predicate {pred_raw!r} is not in layer {layer!r}")
            include.append(LayerFilter(layer=layer, predicate=pred,
                                       direction=item.get("direction", "both")))
        decay = None
        raw_decay = raw.get("temporal_decay")
        if raw_decay:
            start, end = parse_range(raw_decay["time"])
            delta = raw_decay["delta_t"]
            decay = TemporalDecay(
                start=start, end=end,
                delta=timedelta(days=float(delta["value"]) * _UNIT_DAYS[delta["unit"]]),
                mode=raw_decay["mode"], missing_time_mode=raw_decay["missing_time_mode"],
            )
        return attrs.evolve(
            defaults,
            mode=raw["expansion_mode"],
            include=tuple(include),
            score_threshold=float(raw["score_threshold"]),
            subgraph_max_nodes=int(raw.get("subgraph_max_nodes", defaults.subgraph_max_nodes)),
            path_max_depth=int(raw.get("path_max_depth", defaults.path_max_depth)),
            path_top_k=int(raw.get("path_top_k", defaults.path_top_k)),
            temporal_decay=decay,
            conflict_inhibit=bool(raw["conflict_inhibit"]),
            reasoning=str(raw["reasoning"]).strip() or query.text,
        )


def build_llm_seed_planner(config: PlannerConfig, deps: Deps) -> LLMPlanner:
    """Factory of ``realm.seed_planner.llm`` (``planning`` shapes its offline fallback)."""
    return LLMPlanner(deps.llm, OfflinePlanner(config.planning))


def build_llm_policy(config: NoConfig, deps: Deps) -> LLMExpansionPolicy:
    """Factory of ``realm.expansion_policy.llm``."""
    del config
    return LLMExpansionPolicy(deps.llm)
