"""Shared fixtures: fresh plugin managers per test, hypothesis profiles, offline LLM env."""

from __future__ import annotations

import os

# litellm reaches the network on import unless told not to; set before any import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from collections.abc import Iterator

import pluggy
import pytest
from hypothesis import HealthCheck, settings

from labile._plugins import get_plugin_manager
from labile._registry import Registries, collect
from labile_cli.logs import unconfigure

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("fast", max_examples=15, deadline=None)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    """CLI tests configure the ``labile`` logger; give every test the library defaults back."""
    yield
    unconfigure()


@pytest.fixture
def pm() -> pluggy.PluginManager:
    """A fresh manager with the kernel essentials only."""
    return get_plugin_manager(entry_points=False)


@pytest.fixture
def bundled_pm() -> pluggy.PluginManager:
    """A fresh manager with every discoverable plugin."""
    return get_plugin_manager()


@pytest.fixture
def registries(bundled_pm: pluggy.PluginManager) -> Registries:
    """Registries of every discoverable plugin."""
    return collect(bundled_pm)
