"""Typed registries of components, filled by the plugins' registration hooks.

A component is a name bound to a factory (or, for schema kinds and presets, to
a value), the attrs config class its options are structured into, and the
plugin that registered it. Names are global per kind: a second registration of
the same name raises `DuplicateComponentError` naming both plugins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol, TypeVar

import attrs

from labile.errors import DuplicateComponentError, PluginLoadError, UnknownComponentError

if TYPE_CHECKING:
    import pluggy

T = TypeVar("T")


@attrs.frozen
class NoConfig:
    """The config class of components that take no options."""


@attrs.frozen(kw_only=True)
class Component(Generic[T]):
    """One registered component.

    Attributes:
        kind: The component kind (``"seeder"``, ``"store"`` …).
        name: Its registered name, ``<bundle>.<component>`` by convention.
        factory: ``factory(config, deps)`` for buildable kinds; the value itself
            for node kinds, predicates and presets.
        config: The attrs class its options structure into.
        plugin: The name of the plugin that registered it.
        summary: One line for listings.
    """

    kind: str
    name: str
    factory: Any
    config: type = NoConfig
    plugin: str = "?"
    summary: str = ""

    def build(self, config: Any, deps: Any) -> T:
        """Call the factory with a structured config and the pipeline deps."""
        return self.factory(config, deps)  # type: ignore[no-any-return]


class Register(Protocol):
    """The callback a registration hook receives.

    ``register(name, factory, config=ConfigClass, summary="…")`` records one
    component; call it once per component.
    """

    def __call__(
        self, name: str, factory: Any, *, config: type = ..., summary: str = ...
    ) -> None: ...


class Registry(Generic[T]):
    """The components of one kind, by name."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, Component[T]] = {}
        self.load_errors: list[PluginLoadError] = []

    def add(self, component: Component[T]) -> None:
        """Record ``component``; a repeated name raises naming both plugins."""
        if not component.name or not isinstance(component.name, str):
            raise ValueError(f"{self.kind} names must be non-empty strings, got {component.name!r}")
        existing = self._items.get(component.name)
        if existing is not None:
            raise DuplicateComponentError(
                self.kind, component.name, component.plugin, existing.plugin
            )
        self._items[component.name] = component

    def get(self, name: str) -> Component[T]:
        """The component called ``name``; an unknown name lists the registered ones."""
        try:
            return self._items[name]
        except KeyError:
            err = UnknownComponentError(self.kind, name, self._items)
            if self.load_errors:
                notes = "; ".join(str(e) for e in self.load_errors)
                err.args = (f"{err.args[0]} [note: some plugins failed to load: {notes}]",)
            raise err from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._items)

    def __iter__(self) -> Iterator[Component[T]]:
        return iter([self._items[n] for n in self.names()])

    def __len__(self) -> int:
        return len(self._items)


#: kind name -> hook name suffix (``labile_register_<suffix>``).
KINDS: Final[dict[str, str]] = {
    "extractor": "extractors",
    "store": "stores",
    "embedder": "embedders",
    "llm": "llms",
    "seeder": "seeders",
    "expander": "expanders",
    "filter": "filters",
    "reconsolidator": "reconsolidators",
    "consolidator": "consolidators",
    "node_kind": "node_kinds",
    "predicate": "predicates",
    "preset": "presets",
}


@attrs.define
class Registries:
    """One `Registry` per component kind."""

    by_kind: dict[str, Registry[Any]] = attrs.field(
        factory=lambda: {kind: Registry(kind) for kind in KINDS}
    )

    def __getitem__(self, kind: str) -> Registry[Any]:
        try:
            return self.by_kind[kind]
        except KeyError:
            raise UnknownComponentError("component kind", kind, self.by_kind) from None

    def all(self) -> Iterator[Component[Any]]:
        """Every component of every kind."""
        for registry in self.by_kind.values():
            yield from registry


def collect(pm: pluggy.PluginManager) -> Registries:
    """Run every registration hook and gather the components by kind.

    Implementations are called one by one (in pluggy's call order) so each
    component records the plugin that registered it.
    """
    registries = Registries()
    load_errors: list[PluginLoadError] = list(getattr(pm, "labile_load_errors", []))
    for kind, suffix in KINDS.items():
        registry = registries[kind]
        registry.load_errors = load_errors
        hook = getattr(pm.hook, f"labile_register_{suffix}")
        for impl in reversed(hook.get_hookimpls()):
            if impl.hookwrapper or impl.wrapper:
                raise PluginLoadError(
                    f"plugin {impl.plugin_name!r}: registration hooks cannot be wrappers"
                )
            register = _make_register(registry, kind, impl.plugin_name)
            impl.function(**{arg: register for arg in impl.argnames})
    return registries


def _make_register(registry: Registry[Any], kind: str, plugin: str) -> Callable[..., None]:
    def register(
        name: str, factory: Any, *, config: type = NoConfig, summary: str = ""
    ) -> None:
        if not attrs.has(config):
            raise TypeError(
                f"{kind} {name!r} from plugin {plugin!r}: config must be an attrs class, "
                f"got {config!r}"
            )
        registry.add(
            Component(
                kind=kind, name=name, factory=factory, config=config, plugin=plugin,
                summary=summary,
            )
        )

    return register
