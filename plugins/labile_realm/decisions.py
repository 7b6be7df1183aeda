"""REALM's decisions as component kinds: one Protocol and one declaration each.

Every agentic decision of REALM has two bundled implementations, one that
asks the LLM (the paper's behaviour) and one offline (rules, embeddings,
lexical signals), registered as ``<kind>.llm`` and ``<kind>.offline``; a third
party can register its own. A host component names its decision in its
options (``planner = "realm.seed_planner.llm"``); ``"offline"`` and ``"llm"``
are aliases kept for configs written before the decisions became kinds.

Each kind's factories are called ``factory(config, deps)``: ``config`` is
the component's own options (its thresholds included: an LLM variant that
falls back on offline rules carries their options in its own config class),
``deps`` the pipeline's `Deps`. Decisions that call the LLM are registered
with ``needs=("llm",)``; the kernel refuses them in a pipeline without a model.

This module is imported when the plugin loads: it defines types only.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from labile.plugin import Edge, Feedback, Hit, KindSpec, Node, Observation, Query, RetrievalResult

if TYPE_CHECKING:
    from labile_realm.construct.extract_offline import Extraction
    from labile_realm.construct.neighbourhood import Candidate
    from labile_realm.construct.ops import EdgeOp, NodeDecision
    from labile_realm.construct.units import ConversationState, Unit
    from labile_realm.reconsolidate_decide import Classification, EdgeDecision
    from labile_realm.retrieve.plan import ExpansionAction, SeedPlan
    from labile_realm.retrieve.sufficiency import ControlDecision

UNIT_EXTRACTOR: Final = "realm.unit_extractor"
WRITE_DECIDER: Final = "realm.write_decider"
SEED_PLANNER: Final = "realm.seed_planner"
SUFFICIENCY_CONTROLLER: Final = "realm.sufficiency_controller"
EXPANSION_POLICY: Final = "realm.expansion_policy"
RECONSOLIDATION_DECIDER: Final = "realm.reconsolidation_decider"


class UnitExtractor(Protocol):
    """Proposes the candidate units of one observation (Algorithm 1, step 1)."""

    def extract(self, obs: Observation, state: ConversationState) -> Extraction:
        """The units of ``obs`` (event first), its questions and terms.

        May update ``state.summary`` (s_t). Raises `LLMError` when a model's
        reply is unusable: the host counts the failure and the observation
        stays in the log as evidence only.
        """
        ...

    def refresh_summary(self, state: ConversationState, sessions: Sequence[str]) -> None:
        """Refresh the running summary once per ``add`` call (a no-op for
        extractors that rewrite it per turn). ``sessions`` are every session
        key seen so far, oldest first."""
        ...


@runtime_checkable
class BatchUnitExtractor(UnitExtractor, Protocol):
    """A `UnitExtractor` that can take several turns at once (one model call for a batch).

    The host cuts an ``add`` call's observations with `batches` and calls
    `extract_batch` on each run in order, remembering each run's turns
    before the next one is asked.
    """

    def batches(self, observations: Sequence[Observation]) -> list[list[Observation]]:
        """``observations`` cut into consecutive runs asked together, in order."""
        ...

    def extract_batch(
        self, observations: Sequence[Observation], state: ConversationState
    ) -> list[Extraction]:
        """One `Extraction` per observation of the run, in order (see `UnitExtractor.extract`)."""
        ...


class EdgeLookup(Protocol):
    """What the host tells an edge decision about the graph around a new node."""

    def existing(self, node_id: str, others: Sequence[str]) -> list[Edge]:
        """Live edges between ``node_id`` and any of ``others`` (stored or pending)."""
        ...

    def degrees(self, ids: Sequence[str]) -> dict[str, int]:
        """Current ``correlates`` out-degree of each of ``ids``."""
        ...


class WriteDecider(Protocol):
    """Decides what a unit becomes and how its node links (Algorithm 1, steps 3–4).

    Attributes:
        links_entities: Entity nodes get semantic edges too (not only
            structural ones).
    """

    links_entities: bool

    def decide_node(
        self, unit: Unit, candidates: Sequence[Candidate], state: ConversationState
    ) -> NodeDecision:
        """Add, modify (merge into a candidate) or skip ``unit``; raises `LLMError`
        when a model's reply is unusable (the unit is then dropped and counted)."""
        ...

    def neighbours_to_link(
        self, decision: NodeDecision, candidates: Sequence[Candidate], node: Node
    ) -> list[Candidate]:
        """The candidates the edge decision for ``node`` considers."""
        ...

    def decide_edges(
        self, node: Node, candidates: Sequence[Candidate], edges: EdgeLookup
    ) -> list[EdgeOp]:
        """Edge operations between ``node`` and ``candidates``; raises `LLMError`
        when a model's reply is unusable (no edge is then written)."""
        ...


class SeedPlanner(Protocol):
    """Writes the seed plans p = (Q, K, T, τ) of one search (Algorithm 2)."""

    def seed_plans(self, query: Query, max_plans: int, state: dict[str, Any]) -> list[SeedPlan]:
        """At most ``max_plans`` plans; never raises (falls back, counting in ``state``)."""
        ...


class SufficiencyController(Protocol):
    """Before each expansion round: is the evidence enough, and what to expand?"""

    def decide(
        self, query: Query, hits: Sequence[Hit], expanded: Collection[str],
        round_: int, state: dict[str, Any],
    ) -> ControlDecision:
        """The round's decision: stop, or the frontier node ids (at most five)."""
        ...


class ExpansionPolicy(Protocol):
    """Gives every frontier node its expansion action a_v."""

    def actions(
        self, query: Query, frontier: Sequence[str], reached: Mapping[str, Hit],
        plan: SeedPlan, defaults: ExpansionAction, state: dict[str, Any],
    ) -> dict[str, ExpansionAction]:
        """One action per frontier node id (``defaults`` carry the configured knobs)."""
        ...


class ReconsolidationDecider(Protocol):
    """Reads the recalled subgraph after an answer and proposes edge edits (Algorithm 3)."""

    def decide(
        self, result: RetrievalResult, feedback: Feedback, edges: Sequence[Edge]
    ) -> tuple[Classification, list[EdgeDecision]]:
        """Classify the recalled nodes and propose decisions; raises `LLMError`
        (or `KeyError`) when a model's reply is unusable: nothing is applied."""
        ...


def _kind(name: str, plural: str, protocol: type, host: str, what: str) -> KindSpec:
    return KindSpec(
        name=name, plural=plural, protocol=protocol, placement="nested",
        aliases={"offline": f"{name}.offline", "llm": f"{name}.llm"},
        doc=f"""Add {what}.

        ``factory(config, deps)`` returns a `labile_realm.decisions.{protocol.__name__}`.
        Chosen by name (or as a table with its options) in the options of a
        `{host}`; ``"offline"`` and ``"llm"`` name the bundled pair.
        """,
    )


#: The kinds the REALM bundle declares, in pipeline order.
KINDS: Final = (
    _kind(UNIT_EXTRACTOR, "realm.unit_extractors", UnitExtractor,
          "labile_realm.construct.extractor.RealmConstructConfig",
          "REALM unit extractors (the units of a turn and the running summary)"),
    _kind(WRITE_DECIDER, "realm.write_deciders", WriteDecider,
          "labile_realm.construct.extractor.RealmConstructConfig",
          "REALM write deciders (add / modify / skip a unit, and its edges)"),
    _kind(SEED_PLANNER, "realm.seed_planners", SeedPlanner,
          "labile_realm.retrieve.seed.SeedConfig", "REALM seed planners"),
    _kind(SUFFICIENCY_CONTROLLER, "realm.sufficiency_controllers", SufficiencyController,
          "labile_realm.retrieve.expand.ExpandConfig",
          "REALM sufficiency controllers (stop, or which nodes to expand)"),
    _kind(EXPANSION_POLICY, "realm.expansion_policies", ExpansionPolicy,
          "labile_realm.retrieve.expand.ExpandConfig",
          "REALM expansion policies (the action for each frontier node)"),
    _kind(RECONSOLIDATION_DECIDER, "realm.reconsolidation_deciders", ReconsolidationDecider,
          "labile_realm.reconsolidate.ReconsolidateConfig",
          "REALM reconsolidation deciders (classify recalled nodes, propose edge edits)"),
)
