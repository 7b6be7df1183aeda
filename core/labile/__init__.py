"""labile: long-term memory for LLM agents.

The public API: `Memory` (the facade), the data model, `hookimpl` for
plugins, and the errors.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import Any

from labile.config import PipelineConfig, resolve
from labile.errors import (
    ConfigError,
    DuplicateComponentError,
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
from labile.hookspecs import hookimpl
from labile.memory import Memory
from labile.model import (
    AddReport,
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
from labile.plugins import get_plugin_manager
from labile.protocols import Deps
from labile.registry import NoConfig, collect

__all__ = [
    "AddReport", "ConfigError", "Deps", "DuplicateComponentError", "Edge", "Feedback", "Hit",
    "InputError", "LLMError", "LLMOutputError", "LabileError", "Layer", "Memory",
    "MissingDependencyError", "NoConfig", "Node", "NodeFilter", "NodeKind", "Observation",
    "OperationReport", "Origin", "PipelineConfig", "PluginLoadError", "Predicate", "Query",
    "Reach", "RetrievalResult", "SchemaError", "StoreError", "UnknownComponentError",
    "collect", "get_plugin_manager", "hookimpl", "resolve",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        try:
            return _version("labile")
        except PackageNotFoundError:
            return "0+unknown"
    raise AttributeError(name)
