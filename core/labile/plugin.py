"""Everything a plugin author needs, in one place: ``from labile.plugin import …``.

A plugin is a module (or object) with ``@hookimpl`` functions::

    from labile.plugin import Deps, Hit, NoConfig, Query, Register, hookimpl

    class KeepAll:
        def __init__(self, config: NoConfig, deps: Deps) -> None:
            self.store = deps.store

        def filter(self, query: Query, hits: list[Hit], state: dict) -> list[Hit]:
            return hits

    @hookimpl
    def labile_register_filters(register: Register) -> None:
        register("acme.keep_all", KeepAll, summary="keeps every hit")

It exports the hook marker and callbacks (`hookimpl`, `Register`,
`Declare`), the kind declaration (`KindSpec`), the ports every component
satisfies (the Protocols), what factories receive (`CoreDeps`, `StoreDeps`,
`Deps`, `Registries`), the plugin system itself (`get_plugin_manager`,
`load_report`, `collect`, `build_registries`: for tools and tests that build
registries or list plugins), the config helpers (`NoConfig`, `ComponentSpec`,
`component_field`, `nested_kind`, `runtime_field`, `runtime_only`, `bounded`,
`upper_bound`), `check_namespace` (the memory's own check of a namespace),
the data model, the errors a component raises, and what commands use
(`RegisterCommand`, `echo`, `open_memory`, `NotFoundError`, `BUNDLED`: the
bundles that ship with labile). The other kernel modules are the kernel's own
business. The prompt context (`labile_llm.context`) and the hit schema
(`labile_io.hits`) are bundles' presentation, not part of this surface.
"""

from __future__ import annotations

from labile._commands import (
    DEFAULT_K,
    CommandRun,
    Configure,
    NotFoundError,
    RegisterCommand,
    add_limit_options,
    add_memory_options,
    echo,
    open_memory,
    require_namespace,
    time_option,
)
from labile._config import structure_options
from labile._convert import (
    ComponentSpec,
    bounded,
    component_field,
    nested_kind,
    option_range,
    runtime_field,
    runtime_only,
    upper_bound,
)
from labile._errors import (
    ConfigError,
    InputError,
    LLMError,
    LLMOutputError,
    MissingDependencyError,
    SchemaError,
    StoreError,
)
from labile._forget import ForgetPlan
from labile._fusion import rrf, zscores
from labile._hookspecs import hookimpl
from labile._kinds import Declare, KindSpec, Placement
from labile._limits import observation_chars
from labile._logconfig import get_logger
from labile._memory import build_registries
from labile._model import (
    HIDDEN_AT,
    AddReport,
    Answer,
    Edge,
    Feedback,
    Hit,
    Layer,
    Node,
    NodeFilter,
    NodeKind,
    Observation,
    OperationReport,
    Origin,
    Predicate,
    Query,
    Reach,
    RetrievalResult,
    Subgraph,
    Vector,
    as_known_at,
    edge_id,
    superseded,
    utcnow,
)
from labile._plugins import BUNDLED, get_plugin_manager, load_report
from labile._protocols import (
    Answerer,
    Consolidator,
    CoreDeps,
    DeferredStore,
    Deps,
    Direction,
    Embedder,
    Expander,
    Extractor,
    Filter,
    LLMClient,
    Reconsolidator,
    RollbackAware,
    Scored,
    Seeder,
    SharedStore,
    Store,
    StoreDeps,
    embed_queries,
)
from labile._recorded import holds_store
from labile._registry import NoConfig, Register, Registries, collect
from labile._usage import UsageMeter
from labile._validate import check_namespace
from labile._vectors import cosine

__all__ = [
    "BUNDLED", "DEFAULT_K", "HIDDEN_AT",
    "AddReport", "Answer", "Answerer", "CommandRun", "ComponentSpec", "ConfigError",
    "Configure", "Consolidator", "CoreDeps", "Declare", "DeferredStore", "Deps", "Direction",
    "Edge", "Embedder",
    "Expander", "Extractor", "Feedback", "Filter", "ForgetPlan", "Hit", "InputError", "KindSpec",
    "LLMClient", "LLMError", "LLMOutputError", "Layer", "MissingDependencyError", "NoConfig",
    "Node", "NodeFilter", "NodeKind", "NotFoundError", "Observation", "OperationReport",
    "Origin", "Placement", "Predicate", "Query", "Reach", "Reconsolidator",
    "Register", "RegisterCommand", "Registries",
    "RetrievalResult", "RollbackAware", "SchemaError", "Scored", "Seeder", "SharedStore", "Store",
    "StoreDeps", "StoreError",
    "Subgraph", "UsageMeter", "Vector", "add_limit_options",
    "add_memory_options", "as_known_at", "bounded", "build_registries", "check_namespace",
    "collect", "component_field", "cosine", "echo", "edge_id", "embed_queries",
    "get_logger", "get_plugin_manager", "holds_store", "hookimpl", "load_report",
    "nested_kind", "observation_chars", "open_memory", "option_range", "require_namespace",
    "rrf", "runtime_field", "runtime_only", "structure_options", "superseded", "time_option",
    "upper_bound",
    "utcnow", "zscores",
]
