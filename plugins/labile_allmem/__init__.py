"""All-Mem bundle: non-destructive topology consolidation, visible-surface retrieval.

The All-Mem paper's method; `docs/allmem.md` maps its parts to modules.

This module only declares kinds (`labile_allmem.decisions`) and registers
components; see ``docs/allmem.md`` for the design.
"""

from __future__ import annotations

from labile.plugin import Declare, Register, RegisterCommand, hookimpl


@hookimpl
def labile_declare_kinds(declare: Declare) -> None:
    """``allmem.descriptor``, ``allmem.diagnoser`` and ``allmem.repair_planner``."""
    from labile_allmem.decisions import KINDS

    for kind in KINDS:
        declare(kind)


@hookimpl
def labile_register_node_kinds(register: Register) -> None:
    """``allmem.unit`` (memory unit) and ``allmem.run`` (edit-log record)."""
    from labile_allmem.schema import NODE_KINDS

    for kind in NODE_KINDS:
        register(kind.name, kind, summary=kind.summary)


@hookimpl
def labile_register_predicates(register: Register) -> None:
    """temporal, semantic, version, sibling and lineage links."""
    from labile_allmem.schema import PREDICATES

    for pred in PREDICATES:
        register(pred.name, pred, summary=pred.summary)


@hookimpl
def labile_register_extractors(register: Register) -> None:
    """``allmem.write``: online writing with descriptor compression."""
    from labile_allmem.write import WriteConfig, WriteExtractor

    register("allmem.write", WriteExtractor, config=WriteConfig,
             summary="one visible unit per turn: descriptor, temporal + capped semantic links")


@hookimpl
def labile_register_seeders(register: Register) -> None:
    """``allmem.visible_anchor``: Stage 1 anchors over the visible surface."""
    from labile_allmem.retrieve import AnchorConfig, VisibleAnchorSeeder

    register("allmem.visible_anchor", VisibleAnchorSeeder, config=AnchorConfig,
             summary="top-k visible units by cosine (or cosine+BM25 RRF)")


@hookimpl
def labile_register_expanders(register: Register) -> None:
    """``allmem.typed_expand``: Stage 2 typed-link expansion."""
    from labile_allmem.retrieve import ExpandConfig, TypedExpander

    register("allmem.typed_expand", TypedExpander, config=ExpandConfig,
             summary="hop (H) and candidate (L) budgeted expansion by link-type priority")


@hookimpl
def labile_register_filters(register: Register) -> None:
    """``allmem.rerank``: Stage 3 rerank."""
    from labile_allmem.retrieve import RerankConfig, Reranker

    register("allmem.rerank", Reranker, config=RerankConfig,
             summary="rerank candidates by query cosine (or cosine+BM25 RRF), keep top K")


@hookimpl
def labile_register_consolidators(register: Register) -> None:
    """``allmem.atc``: offline consolidation (Split, Merge, Update)."""
    from labile_allmem.consolidate.atc import ATC, ATCConfig

    register("allmem.atc", ATC, config=ATCConfig,
             summary="diagnose -> gate -> Norm -> Split/Merge/Update; every N sessions")


@hookimpl
def labile_register_presets(register: Register) -> None:
    """``allmem`` (offline default), ``allmem-paper`` and ``allmem-llm``."""
    from labile_allmem.presets import PRESETS

    for name, (summary, factory) in PRESETS.items():
        register(name, factory, summary=summary)


@hookimpl
def labile_register_allmem_descriptors(register: Register) -> None:
    """``allmem.descriptor.offline`` and ``allmem.descriptor.llm``."""
    from labile_allmem.describe import (
        DescriberConfig,
        build_llm_describer,
        build_offline_describer,
    )

    register("allmem.descriptor.offline", build_offline_describer, config=DescriberConfig,
             summary="extractive summary with speaker, caption and reply context; keyphrases")
    register("allmem.descriptor.llm", build_llm_describer, config=DescriberConfig,
             needs=("llm",),
             summary="the model writes summary and keywords (offline fallback per item)")


@hookimpl
def labile_register_allmem_diagnosers(register: Register) -> None:
    """``allmem.diagnoser.offline`` and ``allmem.diagnoser.llm``."""
    from labile_allmem.consolidate.diagnose import OfflineRulesConfig, build_offline_diagnoser
    from labile_allmem.consolidate.diagnose_llm import LLMDiagnosisConfig, build_llm_diagnoser

    register("allmem.diagnoser.offline", build_offline_diagnoser, config=OfflineRulesConfig,
             summary="near-duplicates, changed values and topic segments from rules")
    register("allmem.diagnoser.llm", build_llm_diagnoser, config=LLMDiagnosisConfig,
             needs=("llm",),
             summary="one model call per buffered neighbourhood past an offline pre-gate")


@hookimpl
def labile_register_allmem_repair_planners(register: Register) -> None:
    """``allmem.repair_planner.offline`` and ``allmem.repair_planner.llm``."""
    from labile_allmem.consolidate.diagnose import OfflineRulesConfig
    from labile_allmem.consolidate.plan_llm import build_llm_planner
    from labile_allmem.consolidate.plan_offline import build_offline_planner

    register("allmem.repair_planner.offline", build_offline_planner, config=OfflineRulesConfig,
             summary="topic segments; latest wording for Merge; regenerated Update descriptor")
    register("allmem.repair_planner.llm", build_llm_planner, needs=("llm",),
             summary="one strict-JSON model call per target, no retries")


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """``labile inspect allmem``: diagnostics of a namespace (its LoCoMo audit,
    ``labile bench atc``, is in `labile_bench`)."""
    from labile_allmem.commands import inspect_options, run_inspect

    register("inspect allmem", run=run_inspect, configure=inspect_options,
             help="All-Mem diagnostics of a namespace (JSON)")


@hookimpl
def labile_register_forget_handlers(register: Register) -> None:
    """``allmem.forget``: what forgetting an observation does to the bundle's nodes."""
    from labile_allmem.forget import forget_allmem

    register("allmem.forget", forget_allmem,
             summary="rebuild or drop the nodes that lose a forgotten source")
