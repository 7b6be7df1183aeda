"""labile: long-term memory for LLM agents.

The application surface: `Memory` and `AsyncMemory`, the data model, the
config helpers and the errors. Plugin authors import from `labile.plugin`
(which re-exports the data model and errors it shares with this module), store
authors from `labile.testing`.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import Any

from labile._async import AsyncMemory
from labile._config import (
    PipelineConfig,
    merge_tables,
    plugins_disabled,
    preset_table,
    read_toml,
    resolve,
)
from labile._errors import (
    ConfigError,
    DuplicateComponentError,
    HistoryNotErasedWarning,
    InputError,
    LabileError,
    LLMError,
    LLMOutputError,
    MissingDependencyError,
    PluginLoadError,
    SchemaError,
    StoreError,
    UnknownComponentError,
)
from labile._limits import MAX_BATCH_CHARS, MAX_OBSERVATION_CHARS, Limits, chunk_observation
from labile._logconfig import quiet_by_default
from labile._memory import Memory
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
)

#: What `Memory.search` returns, by the name the docs use for it.
SearchResult = RetrievalResult

__all__ = [
    "MAX_BATCH_CHARS", "MAX_OBSERVATION_CHARS",
    "AddReport", "Answer", "AsyncMemory", "ConfigError",
    "DuplicateComponentError", "Edge", "Feedback", "HistoryNotErasedWarning", "Hit",
    "InputError", "LLMError", "LLMOutputError", "LabileError", "Layer", "Limits", "Memory",
    "MissingDependencyError", "Node", "NodeFilter", "NodeKind", "Observation", "OperationReport",
    "Origin", "PipelineConfig", "PluginLoadError", "Predicate", "Query", "Reach",
    "RetrievalResult", "SchemaError", "SearchResult", "StoreError", "UnknownComponentError",
    "chunk_observation", "merge_tables",
    "plugins_disabled", "preset_table", "read_toml", "resolve",
]

quiet_by_default()  # quiet: events go to stdlib logging under "labile", unhandled


#: Plugin machinery this module exported before 0.2.0; it lives in `labile.plugin`.
_MOVED_TO_PLUGIN = frozenset({"Deps", "NoConfig", "build_registries", "collect",
                              "get_plugin_manager", "hookimpl"})


def __getattr__(name: str) -> Any:
    if name == "__version__":
        try:
            return _version("labile")
        except PackageNotFoundError:
            return "0+unknown"
    if name in _MOVED_TO_PLUGIN:
        import warnings

        import labile.plugin

        warnings.warn(f"labile.{name} moved to labile.plugin.{name} (labile 0.2.0)",
                      DeprecationWarning, stacklevel=2)
        return getattr(labile.plugin, name)
    raise AttributeError(name)
