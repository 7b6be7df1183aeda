"""Importing an adapter without its framework says which extra to install."""

from __future__ import annotations

import importlib
import sys

import pytest
from adapters_helpers import OFFLINE

from labile import MissingDependencyError


@pytest.mark.parametrize(("package", "framework", "extra"), [
    ("labile_langgraph", "langgraph.store.base", "langgraph"),
    ("labile_openai_agents", "agents", "openai-agents"),
    ("labile_llamaindex", "llama_index.core.memory", "llamaindex"),
])
def test_adapter_without_its_framework_names_the_install_line(
        monkeypatch: pytest.MonkeyPatch, package: str, framework: str, extra: str) -> None:
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, framework, None)  # import of it now fails
    with pytest.raises(MissingDependencyError, match=rf"pip install -e '\.\[{extra}\]'"):
        importlib.import_module(package)


def test_otel_without_opentelemetry_names_the_install_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from labile import Memory
    from labile_otel import instrument

    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with Memory.open(OFFLINE) as memory:
        with pytest.raises(MissingDependencyError, match=r"pip install -e '\.\[otel\]'"):
            instrument(memory)
        assert "add" not in vars(memory)  # nothing was wrapped
