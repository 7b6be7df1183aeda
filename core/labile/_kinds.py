"""Component kinds: what a kind is, declared once, and the kernel's own.

A *kind* is a family of interchangeable components (seeders, stores, the
offline and LLM versions of one REALM decision …). Everything the kernel does
with a kind follows from its `KindSpec`: the name of the registration hook
plugins implement (``labile_register_<plural>``), the registry its components
land in, where a pipeline config names them (a single table, a list section,
or only inside another component's options), the legacy names that still
resolve (``aliases``), and the contract its components keep (``protocol``,
``doc``).

The kernel declares its kinds in `KERNEL_KINDS`; a bundle declares its own
from the ``labile_declare_kinds`` hook, on the model of pytest's
``pytest_addhooks``. `KindTable` holds the kinds of one plugin manager and
refuses clashes, naming both plugins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Final, Literal, Protocol

import attrs

from labile._errors import DuplicateComponentError, PluginLoadError, UnknownComponentError
from labile._model import NodeKind, Predicate
from labile._protocols import (
    Consolidator,
    Embedder,
    Expander,
    Extractor,
    Filter,
    LLMClient,
    Reconsolidator,
    Seeder,
    Store,
)

#: Where a kind's components are named in a pipeline config:
#:
#: * ``"single"``: one table at ``section`` (``[store]``), required;
#: * ``"list"``: an array of tables at ``section`` (``[[retrieval.seed]]``);
#: * ``"nested"``: only inside another component's options (a field made with
#:   `labile._convert.component_field`); the host component builds it;
#: * ``"registry"``: never in a pipeline config; the kernel looks the
#:   components up by name (node kinds, predicates, presets).
Placement = Literal["single", "list", "nested", "registry"]
PLACEMENTS: Final = ("single", "list", "nested", "registry")

#: Top-level config keys that belong to the kernel, not to a kind.
RESERVED_KEYS: Final = frozenset({"preset", "plugins"})

_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
_KEY = re.compile(r"^[a-z][a-z0-9_]*$")


def _check_name(_inst: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not _NAME.match(value):
        raise ValueError(
            f"kind {attribute.name} must be lowercase words joined by dots "
            f"(e.g. 'seeder', 'realm.seed_planner'), got {value!r}"
        )


def _check_section(_inst: object, _attribute: object, value: tuple[str, ...]) -> None:
    if not all(isinstance(k, str) and _KEY.match(k) for k in value):
        raise ValueError(
            f"a kind's section is a path of lowercase config keys (e.g. ('retrieval', 'seed')), "
            f"got {value!r}"
        )


def _as_tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _frozen_aliases(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


@attrs.frozen(kw_only=True)
class KindSpec:
    """One component kind, declared once.

    Attributes:
        name: The kind's name: a bare word for the kernel's kinds
            (``"seeder"``), ``<bundle>.<kind>`` for a bundle's
            (``"realm.seed_planner"``).
        plural: Names the registration hook, ``labile_register_<plural>``
            (dots become underscores); for the kernel's list kinds, also the
            attribute under which `labile._config.PipelineConfig` and
            `labile._memory.Memory` hold the components (``seeders``).
        protocol: What a component is: the `typing.Protocol` a factory's
            product satisfies, or the class of a value kind's values
            (``None``: anything, e.g. presets).
        values: Components are values (node kinds, predicates, presets), not
            factories; they are never built.
        placement: Where a pipeline config names the components (see `Placement`).
        section: The config path of a ``single`` or ``list`` kind
            (``("store",)``, ``("retrieval", "seed")``); empty otherwise.
        aliases: Names that still resolve to a registered component, such as
            the ``"offline"`` / ``"llm"`` spellings of configs written before
            the decision became a kind; `labile check` prints the new name.
        doc: The contract of the kind's factories; it becomes the docstring of
            the registration hook (and so the hook reference).
    """

    name: str = attrs.field(validator=_check_name)
    plural: str = attrs.field(validator=_check_name)
    protocol: type | None = None
    values: bool = False
    placement: Placement = "nested"
    section: tuple[str, ...] = attrs.field(default=(), converter=_as_tuple,
                                         validator=_check_section)
    aliases: Mapping[str, str] = attrs.field(factory=dict, converter=_frozen_aliases,
                                             hash=False)
    doc: str = ""

    def __attrs_post_init__(self) -> None:
        if self.placement not in PLACEMENTS:
            raise ValueError(
                f"kind {self.name!r}: placement must be one of {', '.join(PLACEMENTS)}, "
                f"got {self.placement!r}"
            )
        placed = self.placement in ("single", "list")
        if placed and not self.section:
            raise ValueError(
                f"kind {self.name!r}: a {self.placement} kind needs the config section "
                "that names its components, e.g. section=('retrieval', 'seed')"
            )
        if self.section and self.section[0] in RESERVED_KEYS:
            raise ValueError(
                f"kind {self.name!r}: ${'.'.join(self.section)} is reserved "
                f"({', '.join(sorted(RESERVED_KEYS))} are the kernel's own keys)"
            )
        if not placed and self.section:
            raise ValueError(
                f"kind {self.name!r}: only single and list kinds have a config section "
                f"(placement is {self.placement!r})"
            )
        if self.values and self.placement != "registry":
            raise ValueError(
                f"kind {self.name!r}: value kinds are looked up by name, never built, so "
                f"their placement must be 'registry', got {self.placement!r}"
            )
        bad = [a for a in self.aliases if not isinstance(a, str) or not a]
        if bad or not all(isinstance(t, str) and t for t in self.aliases.values()):
            raise ValueError(f"kind {self.name!r}: aliases map names to names, got "
                             f"{dict(self.aliases)!r}")

    @property
    def hook(self) -> str:
        """The registration hook: ``labile_register_<plural>``."""
        return "labile_register_" + self.plural.replace(".", "_")

    @property
    def attribute(self) -> str:
        """Where `PipelineConfig` and `Memory` hold the components: the name or plural."""
        return self.plural if self.placement == "list" else self.name

    @property
    def in_pipeline(self) -> bool:
        """Whether a pipeline config names this kind's components at the top level."""
        return self.placement in ("single", "list")


class Declare(Protocol):
    """The callback ``labile_declare_kinds`` receives: ``declare(KindSpec(...))``."""

    def __call__(self, kind: KindSpec) -> None: ...


#: The kernel's kinds, in pipeline order. Their registration hooks are
#: generated in `labile._hookspecs` from these declarations.
KERNEL_KINDS: Final[tuple[KindSpec, ...]] = (
    KindSpec(
        name="store", plural="stores", protocol=Store, placement="single", section=("store",),
        doc="""Add storage backends.

        ``factory(config, deps)`` returns a `labile._protocols.Store`; ``deps`` is
        a `labile._protocols.StoreDeps`: ``deps.embedder`` says which vectors the
        store will hold (a store must refuse to open data written with another
        embedder) and ``deps.llm`` is the pipeline's client.
        """,
    ),
    KindSpec(
        name="embedder", plural="embedders", protocol=Embedder, placement="single",
        section=("embedder",),
        doc="""Add embedders. ``factory(config, deps)`` returns a `labile._protocols.Embedder`.

        Embedders are built first: ``deps`` is a `labile._protocols.CoreDeps`
        (schema, usage meter, registries, clock), with no store, embedder or
        LLM client.
        """,
    ),
    KindSpec(
        name="llm", plural="llms", protocol=LLMClient, placement="single", section=("llm",),
        doc="""Add LLM clients. ``factory(config, deps)`` returns a `labile._protocols.LLMClient`.

        ``deps`` is a `labile._protocols.CoreDeps`. A client must validate JSON
        output against the schema it is given and fail closed with
        `LLMOutputError`; it records every call in ``deps.usage``. A client
        named ``"none"`` means "no model": components registered with
        ``needs=("llm",)`` refuse to run with it.
        """,
    ),
    KindSpec(
        name="extractor", plural="extractors", protocol=Extractor, placement="single",
        section=("extractor",),
        doc="""Add extractors: the write path from observations to nodes and edges.

        ``factory(config, deps)`` returns a `labile._protocols.Extractor`; ``deps``
        is a `labile._protocols.Deps`. Its ``ingest`` runs inside one store batch
        per ``Memory.add`` call.
        """,
    ),
    KindSpec(
        name="seeder", plural="seeders", protocol=Seeder, placement="list",
        section=("retrieval", "seed"),
        doc="""Add seed atoms: the first stage of retrieval.

        ``factory(config, deps)`` returns a `labile._protocols.Seeder`; ``deps``
        is a `labile._protocols.Deps`. Seeders of one pipeline run independently
        and their hits merge by node id.
        """,
    ),
    KindSpec(
        name="expander", plural="expanders", protocol=Expander, placement="list",
        section=("retrieval", "expand"),
        doc="""Add expansion atoms that grow the hit set over the graph.

        ``factory(config, deps)`` returns a `labile._protocols.Expander`; ``deps``
        is a `labile._protocols.Deps`. Expanders run in the configured order,
        each receiving the previous one's output.
        """,
    ),
    KindSpec(
        name="filter", plural="filters", protocol=Filter, placement="list",
        section=("retrieval", "filter"),
        doc="""Add filter atoms that re-score, reorder or trim hits.

        ``factory(config, deps)`` returns a `labile._protocols.Filter`; ``deps`` is
        a `labile._protocols.Deps`. Filters run in the configured order after
        expansion.
        """,
    ),
    KindSpec(
        name="reconsolidator", plural="reconsolidators", protocol=Reconsolidator,
        placement="list", section=("reconsolidate",),
        doc="""Add reconsolidation operators, run by ``Memory.feedback`` after a retrieval.

        ``factory(config, deps)`` returns a `labile._protocols.Reconsolidator`;
        ``deps`` is a `labile._protocols.Deps`. It may change edge weights and add
        edges; it must not touch node content.
        """,
    ),
    KindSpec(
        name="consolidator", plural="consolidators", protocol=Consolidator, placement="list",
        section=("consolidate",),
        doc="""Add consolidation operators, run by ``Memory.consolidate`` (and after adds).

        ``factory(config, deps)`` returns a `labile._protocols.Consolidator`;
        ``deps`` is a `labile._protocols.Deps`. It must never delete a node or
        change its content.
        """,
    ),
    KindSpec(
        name="node_kind", plural="node_kinds", protocol=NodeKind, values=True,
        placement="registry",
        doc="""Add node kinds. ``factory`` is a `labile._model.NodeKind` (a value, not a callable).

        Nodes of unregistered kinds are rejected on write.
        """,
    ),
    KindSpec(
        name="predicate", plural="predicates", protocol=Predicate, values=True,
        placement="registry",
        doc="""Add edge predicates. ``factory`` is a `labile._model.Predicate` (a value).

        Edges with unregistered predicates are rejected on write; symmetric
        predicates get their reverse edge written automatically.
        """,
    ),
    KindSpec(
        name="forget_handler", plural="forget_handlers", values=True, placement="registry",
        doc="""Take part in forgetting: ``factory`` is a callable ``handler(plan)``.

        Every registered handler is called once per `labile.Memory.forget` with
        the `labile._forget.ForgetPlan`: it may rebuild the affected nodes its
        bundle made (``plan.rebuilt``), drop or rewrite edges, and scrub state
        of its own outside the store. Nodes left affected are dropped.
        """,
    ),
    KindSpec(
        name="preset", plural="presets", values=True, placement="registry",
        doc="""Add presets: named pipeline configurations.

        ``factory`` is a mapping shaped like a config file (``store``,
        ``embedder``, ``llm``, ``extractor``, ``retrieval.seed`` …), or a
        zero-argument callable returning one. A user config naming
        ``preset = "<name>"`` starts from it.
        """,
    ),
)

#: The plugin name recorded for the kernel's own kinds.
KERNEL: Final = "labile"


class KindTable:
    """The kinds of one plugin manager, in declaration order (the kernel's first).

    Args:
        kinds: Kinds declared by the kernel itself (default `KERNEL_KINDS`).
    """

    def __init__(self, kinds: Iterable[KindSpec] = KERNEL_KINDS) -> None:
        self._kinds: dict[str, KindSpec] = {}
        self._plugins: dict[str, str] = {}
        for kind in kinds:
            self.declare(kind, KERNEL)

    def declare(self, kind: KindSpec, plugin: str) -> None:
        """Add ``kind``, declared by ``plugin``.

        Raises:
            TypeError: ``kind`` is not a `KindSpec`.
            DuplicateComponentError: the name is taken (the message names both plugins).
            PluginLoadError: its hook or config section is already another kind's.
        """
        if not isinstance(kind, KindSpec):
            raise TypeError(
                f"plugin {plugin!r} declared {kind!r}: declare() takes a labile.plugin.KindSpec"
            )
        if kind.name in self._kinds:
            raise DuplicateComponentError("component kind", kind.name, plugin,
                                          self._plugins[kind.name])
        for other in self._kinds.values():
            if other.hook == kind.hook:
                raise PluginLoadError(
                    f"plugin {plugin!r}: kind {kind.name!r} would use the hook {kind.hook}, "
                    f"already the hook of kind {other.name!r} (plugin "
                    f"{self._plugins[other.name]!r}); choose another plural"
                )
            if kind.section and _overlaps(kind.section, other.section):
                raise PluginLoadError(
                    f"plugin {plugin!r}: kind {kind.name!r} places its components at "
                    f"$.{'.'.join(kind.section)}, which overlaps $.{'.'.join(other.section)} "
                    f"of kind {other.name!r}"
                )
        self._kinds[kind.name] = kind
        self._plugins[kind.name] = plugin

    def __getitem__(self, name: str) -> KindSpec:
        try:
            return self._kinds[name]
        except KeyError:
            raise UnknownComponentError("component kind", name, self._kinds) from None

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    def __iter__(self) -> Iterator[KindSpec]:
        return iter(list(self._kinds.values()))

    def __len__(self) -> int:
        return len(self._kinds)

    def names(self) -> list[str]:
        """Kind names in declaration order."""
        return list(self._kinds)

    def plugin_of(self, name: str) -> str:
        """The plugin that declared kind ``name`` (``"labile"`` for the kernel's)."""
        self[name]
        return self._plugins[name]

    def declared_by_plugins(self) -> list[KindSpec]:
        """The kinds bundles declared (not the kernel's own)."""
        return [k for k in self._kinds.values() if self._plugins[k.name] != KERNEL]

    def in_pipeline(self) -> list[KindSpec]:
        """Kinds a pipeline config names at the top level, in declaration order."""
        return [k for k in self._kinds.values() if k.in_pipeline]


def _overlaps(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether one config path is a prefix of the other (they would share keys)."""
    n = min(len(a), len(b))
    return n > 0 and a[:n] == b[:n]


__all__ = ["KERNEL_KINDS", "PLACEMENTS", "Declare", "KindSpec", "KindTable", "Placement"]
