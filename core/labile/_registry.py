"""Typed registries of components, filled by the plugins' registration hooks.

A component is a name bound to a factory (or, for value kinds, to a value),
the attrs config class its options are structured into, the plugin that
registered it, and what it needs from the pipeline (``needs=("llm",)``).
Names are global per kind: a second registration of the same name raises
`DuplicateComponentError` naming both plugins. There is one `Registry` per
declared kind (`labile._kinds`); a kind's aliases resolve to registered names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol, TypeVar

import attrs

from labile._errors import DuplicateComponentError, PluginLoadError, UnknownComponentError
from labile._kinds import KERNEL_KINDS, KindSpec, KindTable

if TYPE_CHECKING:
    import pluggy

    from labile._convert import ComponentSpec
    from labile._protocols import CoreDeps

T = TypeVar("T")

#: What a registration binds to a name: for a buildable kind, its factory
#: ``factory(config, deps, *context)`` (a class or a function); for a value kind
#: (node kinds, predicates, presets), the value itself. Each kind's contract
#: (`labile._kinds.KindSpec.doc`) says which, and what the factory returns.
Registrable = Callable[..., object] | object

#: What a component may declare it needs from the pipeline.
NEEDS: Final = frozenset({"llm"})
_KERNEL: Final = {kind.name: kind for kind in KERNEL_KINDS}


@attrs.frozen
class NoConfig:
    """The config class of components that take no options."""


def _frozen_needs(value: Iterable[str]) -> frozenset[str]:
    if isinstance(value, str):
        raise TypeError(f"needs must be a collection of names such as ('llm',), got {value!r}")
    return frozenset(value)


@attrs.frozen(kw_only=True)
class Component(Generic[T]):
    """One registered component.

    Attributes:
        kind: The component kind (``"seeder"``, ``"store"``, ``"realm.seed_planner"`` …).
        name: Its registered name, ``<bundle>.<component>`` by convention.
        factory: ``factory(config, deps, *context)`` for buildable kinds; the
            value itself for value kinds (node kinds, predicates, presets).
        config: The attrs class its options structure into.
        plugin: The name of the plugin that registered it.
        summary: One line for listings.
        needs: What it needs from the pipeline: ``{"llm"}`` for a component
            that calls the LLM client. The kernel checks it when a pipeline is
            built (`labile._needs`).
    """

    kind: str
    name: str
    factory: Callable[..., T] | T
    config: type = NoConfig
    plugin: str = "?"
    summary: str = ""
    needs: frozenset[str] = attrs.field(default=frozenset(), converter=_frozen_needs)

    def build(self, config: object, deps: CoreDeps, *context: object) -> T:
        """Call the factory with a structured config, the pipeline deps and any
        context its host passes (see the kind's contract).

        Raises:
            TypeError: the component is a value of a value kind, which is never built.
        """
        if not callable(self.factory):
            raise TypeError(f"{self.kind} {self.name!r} is a value, not a factory: it is "
                            "looked up, never built")
        factory: Callable[..., T] = self.factory
        return factory(config, deps, *context)


class Register(Protocol):
    """The callback a registration hook receives.

    ``register(name, factory, config=ConfigClass, summary="…", needs=("llm",))``
    records one component; call it once per component. ``needs`` is optional:
    name ``"llm"`` when the component calls the LLM client.
    """

    def __call__(
        self, name: str, factory: Registrable, *, config: type = ..., summary: str = ...,
        needs: Iterable[str] = ...,
    ) -> None: ...


class Registry(Generic[T]):
    """The components of one kind, by name.

    Args:
        kind: The kind's declaration, or the name of one of the kernel's kinds.
    """

    def __init__(self, kind: KindSpec | str) -> None:
        self.spec = kind if isinstance(kind, KindSpec) else _KERNEL[kind]
        self.kind = self.spec.name
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

    def canonical(self, name: str) -> str:
        """``name`` with the kind's aliases resolved (``"offline"`` → its registered name)."""
        return self.spec.aliases.get(name, name)

    def get(self, name: str) -> Component[T]:
        """The component called ``name`` (or an alias of it).

        An unknown name raises `UnknownComponentError` listing the registered ones.
        """
        try:
            return self._items[self.canonical(name)]
        except KeyError:
            err = UnknownComponentError(self.kind, name, self._items)
            if self.load_errors:
                notes = "; ".join(str(e) for e in self.load_errors)
                err.args = (f"{err.args[0]} [note: some plugins failed to load: {notes}]",)
            raise err from None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.canonical(name) in self._items

    def names(self) -> list[str]:
        """Registered names, sorted (aliases are not listed)."""
        return sorted(self._items)

    def __iter__(self) -> Iterator[Component[T]]:
        return iter([self._items[n] for n in self.names()])

    def __len__(self) -> int:
        return len(self._items)


class Registries:
    """One `Registry` per declared kind, in declaration order.

    Args:
        kinds: The declared kinds (default: the kernel's own).
    """

    def __init__(self, kinds: KindTable | None = None) -> None:
        self.kinds = kinds if kinds is not None else KindTable()
        self.by_kind: dict[str, Registry[Any]] = {k.name: Registry(k) for k in self.kinds}
        #: The plugins' ``labile_render_context`` hook (`RetrievalResult.context`).
        self.render_context: Callable[..., Any] | None = None

    def __getitem__(self, kind: str) -> Registry[Any]:
        try:
            return self.by_kind[kind]
        except KeyError:
            raise UnknownComponentError("component kind", kind, self.by_kind) from None

    def all(self) -> Iterator[Component[Any]]:
        """Every component of every kind."""
        for registry in self.by_kind.values():
            yield from registry

    def component(self, spec: ComponentSpec) -> Component[Any]:
        """The registered component a resolved reference names."""
        return self[spec.kind].get(spec.type)

    def build(self, spec: ComponentSpec, deps: CoreDeps, *context: object) -> Any:
        """Build the component ``spec`` names, as a host does for a nested one.

        A spec without a structured config (a name given in Python) builds
        with the component's default options.

        Args:
            spec: A resolved reference (`labile._convert.ComponentSpec`).
            deps: The pipeline deps to hand the factory.
            *context: What the kind's contract says its host passes.

        Raises:
            UnknownComponentError: nothing of that kind is registered under the name.
            TypeError: the spec's config is not the component's config class.
        """
        component = self.component(spec)
        config = spec.config if spec.config is not None else component.config()
        if not isinstance(config, component.config):
            raise TypeError(
                f"{spec.kind} {component.name!r} takes a {component.config.__name__} config, "
                f"got {type(config).__name__}"
            )
        return component.build(config, deps, *context)


def collect(pm: pluggy.PluginManager) -> Registries:
    """Declare every kind, then run every registration hook, gathering components by kind.

    Implementations are called one by one (in pluggy's call order) so each
    component records the plugin that registered it.
    """
    from labile._plugins import declare_kinds, load_report

    registries = Registries(declare_kinds(pm))
    registries.render_context = pm.hook.labile_render_context
    load_errors = list(load_report(pm).errors)
    for kind in registries.kinds:
        registry = registries[kind.name]
        registry.load_errors = load_errors
        hook = getattr(pm.hook, kind.hook)
        for impl in reversed(hook.get_hookimpls()):
            if impl.hookwrapper or impl.wrapper:
                raise PluginLoadError(
                    f"plugin {impl.plugin_name!r}: registration hooks cannot be wrappers"
                )
            register = _make_register(registry, impl.plugin_name)
            impl.function(**{arg: register for arg in impl.argnames})
    return registries


def _make_register(registry: Registry[Any], plugin: str) -> Register:
    kind = registry.kind

    def register(
        name: str, factory: Registrable, *, config: type = NoConfig, summary: str = "",
        needs: Iterable[str] = (),
    ) -> None:
        if not attrs.has(config):
            raise TypeError(
                f"{kind} {name!r} from plugin {plugin!r}: config must be an attrs class, "
                f"got {config!r}"
            )
        wanted = _frozen_needs(needs)
        if not wanted <= NEEDS:
            raise TypeError(
                f"{kind} {name!r} from plugin {plugin!r}: unknown needs "
                f"{sorted(wanted - NEEDS)} (allowed: {', '.join(sorted(NEEDS))})"
            )
        if wanted and registry.spec.values:
            raise TypeError(f"{kind} {name!r} from plugin {plugin!r}: values are never built, "
                            "so they cannot need anything")
        registry.add(
            Component(
                kind=kind, name=name, factory=factory, config=config, plugin=plugin,
                summary=summary, needs=wanted,
            )
        )

    return register
