"""Building a pipeline's components from a `PipelineConfig`, in dependency order.

The embedder and the LLM client come first, from a `CoreDeps`; then the
needs of every component are checked (`labile._needs`); then the store, from a
`StoreDeps`, wrapped so the schema is enforced; then every other pipeline kind
(`labile._kinds.KindTable.in_pipeline`) in declaration order, each from the
same `Deps`. Nothing here knows a particular extractor or atom: a kind
declared with a config section is built like the kernel's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from labile._config import PipelineConfig
from labile._convert import ComponentSpec
from labile._needs import NO_LLM, check_needs
from labile._protocols import CoreDeps, Deps, Embedder, LLMClient, Store, StoreDeps
from labile._registry import Registries
from labile._schema import CheckedStore, Schema
from labile._usage import UsageMeter

#: The kinds built before the others, in this order, because the others use them.
INFRASTRUCTURE: Final = ("embedder", "llm", "store")


@attrs.frozen(kw_only=True)
class Pipeline:
    """The built components of one pipeline.

    Attributes:
        embedder: The embedder.
        llm: The LLM client (the ``none`` client when there is no model).
        store: The schema-checked store.
        deps: What every component after the store was built with.
        components: Kind → the built component (single kinds) or a list of
            ``(registered name, component)`` (list kinds), infrastructure excluded.
    """

    embedder: Embedder
    llm: LLMClient
    store: Store
    deps: Deps
    components: Mapping[str, Any]

    def single(self, kind: str) -> Any:
        """The built component of the single kind ``kind``."""
        return self.components[kind]

    def listed(self, kind: str) -> list[tuple[str, Any]]:
        """``(name, component)`` of the list kind ``kind``, in config order."""
        built: list[tuple[str, Any]] = self.components.get(kind, [])
        return built


def build_pipeline(
    config: PipelineConfig,
    registries: Registries,
    *,
    schema: Schema,
    usage: UsageMeter,
    llm: LLMClient | None = None,
    embedder: Embedder | None = None,
    store: Store | None = None,
) -> Pipeline:
    """Build every component of ``config``.

    ``llm``, ``embedder`` and ``store`` replace the configured component with
    a ready instance.

    Raises:
        ConfigError: a component needs an LLM and the pipeline has none.
    """
    core = CoreDeps(schema=schema, usage=usage, registries=registries)
    embedder = embedder or _build(registries, "embedder", config.single("embedder"), core)
    llm = llm or _build(registries, "llm", config.single("llm"), core)
    if getattr(llm, "usage", False) is None:
        # A ready-made client (scripted, say) without a meter records into ours.
        llm.usage = usage  # type: ignore[union-attr]
    check_needs(config, registries, llm_name=getattr(llm, "name", NO_LLM))
    setup = StoreDeps(schema=schema, usage=usage, registries=registries, embedder=embedder,
                      llm=llm)
    raw_store: Store = store or _build(registries, "store", config.single("store"), setup)
    checked: Store = CheckedStore(raw_store, schema)
    deps = Deps(schema=schema, usage=usage, registries=registries, embedder=embedder, llm=llm,
                store=checked)
    components: dict[str, Any] = {}
    for kind in registries.kinds.in_pipeline():
        if kind.name in INFRASTRUCTURE or kind.name not in config.components:
            continue
        value = config.components[kind.name]
        if isinstance(value, ComponentSpec):
            components[kind.name] = _build(registries, kind.name, value, deps)
        else:
            components[kind.name] = [(s.type, _build(registries, kind.name, s, deps))
                                     for s in value]
    return Pipeline(embedder=embedder, llm=llm, store=checked, deps=deps, components=components)


def _build(registries: Registries, kind: str, spec: ComponentSpec, deps: CoreDeps) -> Any:
    return registries.build(attrs.evolve(spec, kind=kind), deps)
