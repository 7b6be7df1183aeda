"""REALM: an agentic cognitive graph with retrieval-driven reconsolidation (SPEC §3).

Registers the schema (4 node kinds, 15 predicates), the ``realm.construct``
extractor, the seed atoms ``realm.query_match`` / ``realm.keywords_match`` /
``realm.hybrid_match``, the expansion atoms ``realm.subgraph_beam`` /
``realm.path_search``, the ``realm.aggregate`` filter, the
``realm.reconsolidate`` operator (also registered as ``realm.topology_update``)
and the presets ``realm`` and ``realm-llm``. Components are imported inside
the hooks so loading the plugin stays cheap.
"""

from __future__ import annotations

from labile.hookspecs import hookimpl
from labile.registry import Register


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
    from labile_realm.construct.extractor import RealmConstructConfig, build

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
