"""Plugin discovery: entry points, bundled fallback, tolerant loading, blocking."""

from __future__ import annotations

import importlib.metadata as md
import sys
import tomllib
import types
from pathlib import Path

import pluggy
import pytest

from labile import _plugins as plugins_mod
from labile._plugins import BUNDLED, ESSENTIALS, get_plugin_manager, load_report
from labile._registry import collect
from labile.plugin import hookimpl

ROOT = Path(__file__).resolve().parents[2]


def _names(pm: pluggy.PluginManager) -> set[str]:
    return {name for name, plugin in pm.list_name_plugin() if plugin is not None}


def test_bundled_map_equals_pyproject_entry_points() -> None:
    """The source-checkout fallback must list exactly what pyproject declares."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["labile"] == BUNDLED


def test_bundled_plugins_are_found(bundled_pm: pluggy.PluginManager) -> None:
    names = _names(bundled_pm)
    assert ESSENTIALS in names
    assert {"offline", "lancedb", "baseline"} <= names


class _FakeEP:
    def __init__(self, name: str, value: str) -> None:
        self.name, self.value, self.dist = name, value, None


def test_broken_plugin_is_reported_and_others_load(monkeypatch: pytest.MonkeyPatch) -> None:
    good = types.ModuleType("labile_test_good")

    @hookimpl
    def labile_register_filters(register: object) -> None:
        register("good.filter", object)  # type: ignore[operator]

    good.labile_register_filters = labile_register_filters  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "labile_test_good", good)
    eps = [_FakeEP("broken", "labile_test_missing_module"), _FakeEP("good", "labile_test_good")]
    monkeypatch.setattr(md, "entry_points", lambda group: eps if group == "labile" else [])
    monkeypatch.setattr(plugins_mod, "BUNDLED", {})
    pm = get_plugin_manager()
    errors = load_report(pm).errors
    assert len(errors) == 1 and "plugin 'broken'" in str(errors[0])
    reg = collect(pm)
    assert "good.filter" in reg["filter"]
    with pytest.raises(LookupError, match="failed to load"):
        reg["filter"].get("broken.filter")


def test_block_by_env_and_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABILE_DISABLE_PLUGINS", "baseline")
    pm = get_plugin_manager(block=["offline"])
    names = _names(pm)
    assert "baseline" not in names and "offline" not in names
    assert "lancedb" in names


def test_essentials_cannot_be_blocked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABILE_DISABLE_PLUGINS", ESSENTIALS)
    pm = get_plugin_manager(entry_points=False)
    assert "memory" in collect(pm)["store"]


def test_misspelt_hook_fails_at_startup() -> None:
    class Typo:
        @hookimpl
        def labile_register_filter(self, register: object) -> None:  # missing "s"
            pass

    with pytest.raises(pluggy.PluginValidationError, match="unknown hook"):
        get_plugin_manager(entry_points=False, extra=[Typo()])

