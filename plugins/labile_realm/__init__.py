"""REALM: an agentic cognitive graph with retrieval-driven reconsolidation (the REALM paper, §3).

Registers the schema (4 node kinds, 15 predicates), the ``realm.construct``
extractor, the seed atoms ``realm.query_match`` / ``realm.keywords_match`` /
``realm.hybrid_match``, the expansion atoms ``realm.subgraph_beam`` /
``realm.path_search``, the ``realm.aggregate`` filter, the
``realm.reconsolidate`` operator (also registered as ``realm.topology_update``)
and the presets ``realm`` and ``realm-llm``. It declares one kind per agentic
decision (`labile_realm.decisions`) and registers the offline and LLM
implementation of each. Components are imported inside the hooks so loading
the plugin stays cheap.
"""

from __future__ import annotations

from labile.plugin import Declare, Register, hookimpl


@hookimpl
def labile_declare_kinds(declare: Declare) -> None:
    """One kind per REALM decision: units, write decisions, seed plans, sufficiency,
    expansion actions, reconsolidation."""
    from labile_realm.decisions import KINDS

    for kind in KINDS:
        declare(kind)


@hookimpl
def labile_register_node_kinds(register: Register) -> None:
    """``realm.entity``, ``realm.event``, ``realm.episode``, ``realm.fact``."""
    from labile_realm.schema import NODE_KINDS

    for kind in NODE_KINDS:
        register(kind.name, kind, summary=kind.summary)


@hookimpl
def labile_register_predicates(register: Register) -> None:
    """The 15 predicates in 4 layers; contradicts, correlates, analogous_to are symmetric."""
    from labile_realm.schema import PREDICATES

    for pred in PREDICATES:
        register(pred.name, pred, summary=f"{pred.layer.value}: {pred.summary}")


@hookimpl
def labile_register_extractors(register: Register) -> None:
    """``realm.construct``: Algorithm 1 (offline or LLM units and decisions)."""
    from labile_realm.construct.config import RealmConstructConfig
    from labile_realm.construct.extractor import build

    register("realm.construct", build, config=RealmConstructConfig,
             summary="cognitive graph construction: units, neighbourhood, node and edge decisions")


@hookimpl
def labile_register_seeders(register: Register) -> None:
    """The three seed matching modes, each its own atom."""
    from labile_realm.retrieve.seed import SeedConfig, make_seeder

    register("realm.query_match", make_seeder("realm.query_match", "query_match"),
             config=SeedConfig, summary="seed by cosine of the plan's query embedding")
    register("realm.keywords_match", make_seeder("realm.keywords_match", "keywords_match"),
             config=SeedConfig, summary="seed by BM25 over the plan's keywords")
    register("realm.hybrid_match", make_seeder("realm.hybrid_match", "hybrid_match"),
             config=SeedConfig, summary="seed by 0.6 embedding + 0.4 keyword, time range enforced")


@hookimpl
def labile_register_expanders(register: Register) -> None:
    """``realm.subgraph_beam`` and ``realm.path_search`` (with the sufficiency loop)."""
    from labile_realm.retrieve.expand import ExpandConfig, make_expander

    register("realm.subgraph_beam", make_expander("realm.subgraph_beam", "subgraph_beam"),
             config=ExpandConfig, summary="beam expansion with a per-seed node budget")
    register("realm.path_search", make_expander("realm.path_search", "path_search"),
             config=ExpandConfig, summary="path expansion keeping the best paths per hop")


@hookimpl
def labile_register_filters(register: Register) -> None:
    """``realm.aggregate``: eq. 9 reranking, top-K evidence, activated subgraph."""
    from labile_realm.retrieve.aggregate import AggregateConfig, build

    register("realm.aggregate", build, config=AggregateConfig,
             summary="alpha-weighted access score + query similarity; top-K evidence")


@hookimpl
def labile_register_reconsolidators(register: Register) -> None:
    """``realm.reconsolidate`` (alias ``realm.topology_update``): eq. 11–12 edge updates."""
    from labile_realm.reconsolidate import ReconsolidateConfig, make_reconsolidator

    for name in ("realm.reconsolidate", "realm.topology_update"):
        register(name, make_reconsolidator(name), config=ReconsolidateConfig,
                 summary="strengthen / weaken / add edges among recalled nodes from feedback")


@hookimpl
def labile_register_presets(register: Register) -> None:
    """``realm`` (offline, the default) and ``realm-llm``."""
    from labile_realm.presets import PRESETS

    for name, (summary, table) in PRESETS.items():
        register(name, table, summary=summary)


@hookimpl
def labile_register_realm_unit_extractors(register: Register) -> None:
    """``realm.unit_extractor.offline`` and ``realm.unit_extractor.llm``."""
    from labile_realm.construct.extract_llm import LLMUnitsConfig, build_llm_units
    from labile_realm.construct.extract_offline import OfflineUnitsConfig, build_offline_units

    register("realm.unit_extractor.offline", build_offline_units, config=OfflineUnitsConfig,
             summary="events, facts and entities from rules, keyphrases and time parsing")
    register("realm.unit_extractor.llm", build_llm_units, config=LLMUnitsConfig, needs=("llm",),
             summary="the model types the units of a turn (several turns of one add in one "
                     "call) and rewrites the running summary")


@hookimpl
def labile_register_realm_write_deciders(register: Register) -> None:
    """``realm.write_decider.offline`` and ``realm.write_decider.llm``."""
    from labile_realm.construct.decide_llm import LLMDecisionConfig, build_llm_decider
    from labile_realm.construct.decide_offline import OfflineDeciderConfig, build_offline_decider

    register("realm.write_decider.offline", build_offline_decider, config=OfflineDeciderConfig,
             summary="merge near-duplicates, else add; correlates edges by similarity")
    register("realm.write_decider.llm", build_llm_decider, config=LLMDecisionConfig,
             needs=("llm",),
             summary="the model decides add / modify / skip (when a candidate is close) and "
                     "the edges to related nodes")


@hookimpl
def labile_register_realm_seed_planners(register: Register) -> None:
    """``realm.seed_planner.offline`` and ``realm.seed_planner.llm``."""
    from labile_realm.retrieve.plan import PlannerConfig, build_offline_seed_planner
    from labile_realm.retrieve.plan_llm import build_llm_seed_planner

    register("realm.seed_planner.offline", build_offline_seed_planner, config=PlannerConfig,
             summary="one plan from the question: keywords, node types, time range")
    register("realm.seed_planner.llm", build_llm_seed_planner, config=PlannerConfig,
             needs=("llm",),
             summary="the model writes the seed plans (offline plan if the reply is invalid)")


@hookimpl
def labile_register_realm_sufficiency_controllers(register: Register) -> None:
    """``realm.sufficiency_controller.offline`` and ``realm.sufficiency_controller.llm``."""
    from labile_realm.retrieve.sufficiency import (
        ControllerConfig,
        build_llm_controller,
        build_offline_controller,
    )

    register("realm.sufficiency_controller.offline", build_offline_controller,
             config=ControllerConfig,
             summary="stop when the top-K evidence stops changing; expand the best nodes")
    register("realm.sufficiency_controller.llm", build_llm_controller, config=ControllerConfig,
             needs=("llm",),
             summary="the model judges sufficiency and picks the frontier")


@hookimpl
def labile_register_realm_expansion_policies(register: Register) -> None:
    """``realm.expansion_policy.offline`` and ``realm.expansion_policy.llm``."""
    from labile_realm.retrieve.plan import PlannerConfig, build_offline_policy
    from labile_realm.retrieve.plan_llm import build_llm_policy

    register("realm.expansion_policy.offline", build_offline_policy, config=PlannerConfig,
             summary="the configured default action, the plan's time range as a soft decay")
    register("realm.expansion_policy.llm", build_llm_policy, needs=("llm",),
             summary="the model chooses each frontier node's action")


@hookimpl
def labile_register_realm_reconsolidation_deciders(register: Register) -> None:
    """``realm.reconsolidation_decider.offline`` and ``realm.reconsolidation_decider.llm``."""
    from labile_realm.reconsolidate_decide import (
        OfflineReconsolidationConfig,
        build_llm_decider,
        build_offline_decider,
    )

    register("realm.reconsolidation_decider.offline", build_offline_decider,
             config=OfflineReconsolidationConfig,
             summary="lexical support against the answer: strengthen, link, weaken")
    register("realm.reconsolidation_decider.llm", build_llm_decider, needs=("llm",),
             summary="the model audits the recalled subgraph and proposes edge edits")


@hookimpl
def labile_register_forget_handlers(register: Register) -> None:
    """``realm.forget``: what forgetting an observation does to the bundle's nodes."""
    from labile_realm.forget import forget_realm

    register("realm.forget", forget_realm,
             summary="rebuild or drop the nodes that lose a forgotten source")
