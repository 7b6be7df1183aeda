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
`Deps`, `Registries`), the config helpers (`NoConfig`, `ComponentSpec`,
`component_field`, `nested_kind`, `runtime_field`, `runtime_only`), the
data model, the errors a component raises, and what commands use (`echo`,
`open_memory`, `BUNDLED`: the bundles that ship with labile). The other
kernel modules are the kernel's own business.
"""

from __future__ import annotations

from labile._commands import (
    CommandRun,
    Configure,
    RegisterCommand,
    add_memory_options,
    echo,
    open_memory,
)
from labile._config import structure_options
from labile._convert import (
    ComponentSpec,
    component_field,
    nested_kind,
    runtime_field,
    runtime_only,
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
from labile._model import (
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
from labile._plugins import BUNDLED
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
)
from labile._recorded import holds_store
from labile._registry import NoConfig, Register, Registries
from labile._usage import UsageMeter
from labile._vectors import cosine

__all__ = [
    "BUNDLED", "AddReport", "Answer", "Answerer", "CommandRun", "ComponentSpec", "ConfigError",
    "Configure", "Consolidator", "CoreDeps", "Declare", "DeferredStore", "Deps", "Direction",
    "Edge", "Embedder",
    "Expander", "Extractor", "Feedback", "Filter", "ForgetPlan", "Hit", "InputError", "KindSpec",
    "LLMClient", "LLMError", "LLMOutputError", "Layer", "MissingDependencyError", "NoConfig",
    "Node", "NodeFilter", "NodeKind", "Observation", "OperationReport", "Origin", "Placement",
    "Predicate", "Query", "Reach", "Reconsolidator", "Register", "RegisterCommand", "Registries",
    "RetrievalResult", "RollbackAware", "SchemaError", "Scored", "Seeder", "SharedStore", "Store",
    "StoreDeps", "StoreError",
    "Subgraph", "UsageMeter", "Vector", "add_memory_options", "as_known_at", "component_field",
    "cosine", "echo",
    "edge_id", "holds_store", "hookimpl", "nested_kind", "open_memory", "rrf", "runtime_field",
    "runtime_only", "structure_options", "superseded", "utcnow", "zscores",
]
