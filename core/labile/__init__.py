"""labile: long-term memory for LLM agents.

The public API: `Memory` (the facade), the data model, `hookimpl` for
plugins, and the errors.
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
from labile._hookspecs import hookimpl
from labile._logconfig import configure_library
from labile._memory import Memory, build_registries
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
from labile._plugins import get_plugin_manager
from labile._protocols import Deps
from labile._registry import NoConfig, collect

__all__ = [
    "AddReport", "Answer", "AsyncMemory", "ConfigError", "Deps", "DuplicateComponentError",
    "Edge", "Feedback", "HistoryNotErasedWarning", "Hit", "InputError", "LLMError",
    "LLMOutputError", "LabileError", "Layer",
    "Memory",
    "MissingDependencyError", "NoConfig", "Node", "NodeFilter", "NodeKind", "Observation",
    "OperationReport", "Origin", "PipelineConfig", "PluginLoadError", "Predicate", "Query",
    "Reach", "RetrievalResult", "SchemaError", "StoreError", "UnknownComponentError",
    "build_registries", "collect", "get_plugin_manager", "hookimpl", "merge_tables",
    "plugins_disabled", "preset_table", "read_toml", "resolve",
]

configure_library()  # quiet: events go to stdlib logging under "labile", unhandled


def __getattr__(name: str) -> Any:
    if name == "__version__":
        try:
            return _version("labile")
        except PackageNotFoundError:
            return "0+unknown"
    raise AttributeError(name)
