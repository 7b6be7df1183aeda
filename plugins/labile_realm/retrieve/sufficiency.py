"""The sufficiency controller: before each expansion round, enough evidence or expand what?

Offline controller: the first round always expands (unless the depth is 0);
after that, retrieval stops as soon as a round leaves the top-K evidence set
unchanged (the set stopped improving). The frontier is the best-scoring
nodes not expanded yet, of the kinds allowed as frontier, at most five.

LLM controller (`LLMController`): the model sees the question and the
numbered candidate nodes and answers ``{"is_enough", "nodes_to_expand"}``.
An invalid reply is rejected whole (counted in the search state) and the
offline decision is used; an empty or unknown choice of nodes falls back to
the highest-scoring unexpanded nodes (the offline rule).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import attrs
from attrs.validators import ge, le

from labile.plugin import Deps, Hit, LLMClient, LLMError, Query, bounded, get_logger
from labile_realm import prompts
from labile_realm.ids import IdMap
from labile_realm.retrieve.plan import STATE_EXPANSION, count_failure
from labile_realm.schema import kind_name

log = get_logger(__name__)


@attrs.frozen(kw_only=True)
class ControlDecision:
    """The controller's answer for one round.

    Attributes:
        is_enough: Stop expanding.
        frontier: Node ids to expand this round (empty when ``is_enough``).
    """

    is_enough: bool
    frontier: tuple[str, ...] = ()


def best_unexpanded(
    hits: Sequence[Hit], expanded: Collection[str], kinds: Collection[str], limit: int
) -> tuple[str, ...]:
    """The ``limit`` best-scoring hits not yet expanded, of the given kinds."""
    ranked = sorted(hits, key=lambda h: (-h.score, h.node.id))
    out = [h.node.id for h in ranked if h.node.id not in expanded and h.node.kind in kinds]
    return tuple(out[:limit])


class OfflineController:
    """``realm.sufficiency_controller.offline``: stops when the top-K evidence set
    stops changing (see the module docstring).

    Args:
        top_k: Size of the evidence set watched for change.
        max_frontier: At most this many nodes expanded per round.
        frontier_kinds: Kinds that may be expanded.
    """

    def __init__(self, *, top_k: int, max_frontier: int, frontier_kinds: Collection[str]) -> None:
        self.top_k = top_k
        self.max_frontier = max_frontier
        self.frontier_kinds = frozenset(frontier_kinds)

    def decide(
        self, query: Query, hits: Sequence[Hit], expanded: Collection[str], round_: int,
        state: dict[str, Any],
    ) -> ControlDecision:
        """Expand the best unexpanded nodes unless the evidence stopped improving."""
        del query
        info = state.setdefault(STATE_EXPANSION, {})
        ranked = sorted(hits, key=lambda h: (-h.score, h.node.id))
        top = tuple(h.node.id for h in ranked[: self.top_k])
        previous = info.get("top")
        info["top"] = top
        if round_ > 0 and previous is not None and set(previous) == set(top):
            return ControlDecision(is_enough=True)
        frontier = best_unexpanded(hits, expanded, self.frontier_kinds, self.max_frontier)
        return ControlDecision(is_enough=not frontier, frontier=frontier)


class LLMController:
    """``realm.sufficiency_controller.llm``: asks the LLM whether the evidence
    suffices and what to expand next.

    Args:
        llm: The client.
        fallback: The offline controller used when the reply is invalid.
        shown: How many candidates (best first) the prompt shows.
    """

    def __init__(self, llm: LLMClient, fallback: OfflineController, *, shown: int = 20) -> None:
        self.llm = llm
        self.fallback = fallback
        self.shown = shown

    def decide(
        self, query: Query, hits: Sequence[Hit], expanded: Collection[str], round_: int,
        state: dict[str, Any],
    ) -> ControlDecision:
        """One round's decision (the offline one if the reply is rejected)."""
        ranked = sorted(hits, key=lambda h: (-h.score, h.node.id))[: self.shown]
        ids = IdMap(h.node.id for h in ranked)
        prompt = prompts.sufficiency_prompt(query.text, [
            (ids.short(h.node.id), h.node, h.node.id in expanded) for h in ranked
        ])
        try:
            reply = self.llm.complete_json(prompt, prompts.sufficiency_schema(len(ids)),
                                           operation="realm.sufficiency", system=prompts.SYSTEM)
            chosen = tuple(dict.fromkeys(ids.real(i) for i in reply["nodes_to_expand"]))
        except LLMError as exc:
            count_failure(state, "sufficiency")
            log.warning("realm_llm_rejected", operation="sufficiency", error=str(exc)[:300])
            return self.fallback.decide(query, hits, expanded, round_, state)
        if reply["is_enough"]:
            return ControlDecision(is_enough=True)
        frontier = tuple(i for i in chosen if i not in expanded)[: self.fallback.max_frontier]
        if not frontier:
            frontier = best_unexpanded(hits, expanded, self.fallback.frontier_kinds,
                                       self.fallback.max_frontier)
        return ControlDecision(is_enough=not frontier, frontier=frontier)


def _check_kinds(_inst: object, _attr: object, value: tuple[str, ...]) -> None:
    bad = [t for t in value if kind_name(t) is None]
    if bad:
        raise ValueError(f"unknown frontier kind(s) {bad!r}")


@attrs.frozen(kw_only=True)
class ControllerConfig:
    """Options of ``realm.sufficiency_controller.offline``, and of the offline
    fallback of ``realm.sufficiency_controller.llm``.

    Attributes:
        evidence_k: Size of the evidence set the offline controller watches.
        max_frontier: Frontier nodes per round (≤ 5).
        frontier_kinds: Kinds that may be expanded.
    """

    evidence_k: int = attrs.field(default=10, validator=bounded(1, 100_000))
    max_frontier: int = attrs.field(default=5, validator=[ge(1), le(5)])
    frontier_kinds: tuple[str, ...] = attrs.field(default=("event", "fact", "entity"),
                                                  validator=_check_kinds)


def offline_controller(config: ControllerConfig) -> OfflineController:
    """The offline controller ``config`` describes."""
    return OfflineController(
        top_k=config.evidence_k, max_frontier=config.max_frontier,
        frontier_kinds=[str(kind_name(k)) for k in config.frontier_kinds],
    )


def build_offline_controller(config: ControllerConfig, deps: Deps) -> OfflineController:
    """Factory of ``realm.sufficiency_controller.offline``."""
    del deps
    return offline_controller(config)


def build_llm_controller(config: ControllerConfig, deps: Deps) -> LLMController:
    """Factory of ``realm.sufficiency_controller.llm`` (its fallback is the offline one)."""
    return LLMController(deps.llm, offline_controller(config))
