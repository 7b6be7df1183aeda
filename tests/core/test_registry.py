"""Registries: registration, attribution, duplicates, unknown names."""

from __future__ import annotations

import pluggy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile._errors import DuplicateComponentError, UnknownComponentError
from labile._kinds import KERNEL_KINDS
from labile._registry import Component, Registry, collect
from labile.plugin import hookimpl
from labile.testing import make_deps

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz._", min_size=1, max_size=20)


@given(st.sets(names, min_size=1, max_size=30))
def test_distinct_names_round_trip(ns: set[str]) -> None:
    """Every distinct registered name is found again, with its factory."""
    reg: Registry[object] = Registry("seeder")
    for n in ns:
        reg.add(Component(kind="seeder", name=n, factory=n, plugin="p"))
    assert reg.names() == sorted(ns)
    assert all(reg.get(n).factory == n for n in ns)


@given(names, st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8))
def test_repeat_raises_naming_both_plugins(name: str, first: str, second: str) -> None:
    """A repeated name always raises, and the message names both plugins."""
    reg: Registry[object] = Registry("filter")
    reg.add(Component(kind="filter", name=name, factory=1, plugin=first))
    with pytest.raises(DuplicateComponentError) as info:
        reg.add(Component(kind="filter", name=name, factory=2, plugin=second))
    assert repr(first) in str(info.value) and repr(second) in str(info.value)


def test_unknown_name_suggests_and_lists() -> None:
    reg: Registry[object] = Registry("seeder")
    for n in ("realm.query_match", "realm.hybrid_match"):
        reg.add(Component(kind="seeder", name=n, factory=None))
    with pytest.raises(UnknownComponentError) as info:
        reg.get("realm.hybrid_mach")
    msg = str(info.value)
    assert "did you mean 'realm.hybrid_match'" in msg
    assert "available: realm.hybrid_match, realm.query_match" in msg
    assert isinstance(info.value, LookupError)


def test_collect_attributes_each_component_to_its_plugin(pm: pluggy.PluginManager) -> None:
    class P:
        @hookimpl
        def labile_register_filters(self, register: object) -> None:
            register("test.keep_all", object)  # type: ignore[operator]

    pm.register(P(), name="p")
    reg = collect(pm)
    assert reg["filter"].get("test.keep_all").plugin == "p"
    assert reg["store"].get("memory").plugin == "labile._essentials"


def test_config_must_be_attrs(pm: pluggy.PluginManager) -> None:
    class P:
        @hookimpl
        def labile_register_seeders(self, register: object) -> None:
            register("test.bad", object, config=dict)  # type: ignore[operator]

    pm.register(P(), name="p")
    with pytest.raises(TypeError, match="config must be an attrs class"):
        collect(pm)


def test_duplicate_across_plugins(pm: pluggy.PluginManager) -> None:
    class A:
        @hookimpl
        def labile_register_seeders(self, register: object) -> None:
            register("same.name", object)  # type: ignore[operator]

    pm.register(A(), name="first")
    pm.register(A(), name="second")
    with pytest.raises(DuplicateComponentError, match="'first'|'second'"):
        collect(pm)


def test_every_kind_has_a_registry(pm: pluggy.PluginManager) -> None:
    reg = collect(pm)
    assert list(reg.by_kind) == [k.name for k in KERNEL_KINDS]
    with pytest.raises(UnknownComponentError, match="component kind"):
        reg["seeders"]


def test_a_component_builds_through_its_factory_with_config_deps_and_context() -> None:
    calls: list[tuple[object, ...]] = []

    def factory(config: object, deps: object, *context: object) -> str:
        calls.append((config, deps, *context))
        return "built"

    component: Component[str] = Component(kind="filter", name="acme.f", factory=factory)
    deps = make_deps()
    assert component.build("cfg", deps, "ctx") == "built"
    assert calls == [("cfg", deps, "ctx")]


def test_a_value_is_looked_up_never_built() -> None:
    """A value kind's component (a node kind, a predicate, a preset table) is no factory."""
    value: Component[dict[str, str]] = Component(kind="preset", name="acme.p",
                                                 factory={"store": "memory"})
    with pytest.raises(TypeError, match="'acme.p' is a value, not a factory"):
        value.build(None, make_deps())
