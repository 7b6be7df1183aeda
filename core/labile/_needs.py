"""What components need from the pipeline, checked once when a pipeline is built.

A component registered with ``needs=("llm",)`` calls the LLM client. A
pipeline whose client is the ``none`` one ("no model") cannot run it: the
check walks every component of the pipeline, the ones nested in other
components' options included, and fails with a `ConfigError` naming the
component, its config path and the fix — before anything is built.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import attrs

from labile._config import PipelineConfig
from labile._convert import ComponentSpec
from labile._errors import ConfigError
from labile._registry import Registries

#: The name of the LLM client that stands for "no model".
NO_LLM: Final = "none"


def component_refs(
    config: PipelineConfig, registries: Registries
) -> Iterator[tuple[str, ComponentSpec]]:
    """Every component of ``config`` with its path, nested ones after their host.

    Paths read like config paths: ``$.extractor``, ``$.retrieval.seed[0]``,
    ``$.reconsolidate[0].decider``.
    """
    for kind, value in config.components.items():
        where = "$." + ".".join(config.sections[kind])
        if isinstance(value, ComponentSpec):
            yield from _walk_spec(attrs.evolve(value, kind=kind), where, registries)
        else:
            for i, spec in enumerate(value):
                yield from _walk_spec(attrs.evolve(spec, kind=kind), f"{where}[{i}]", registries)


def _walk_spec(
    spec: ComponentSpec, where: str, registries: Registries
) -> Iterator[tuple[str, ComponentSpec]]:
    yield where, spec
    config = spec.config
    if config is None:  # a name given in Python: its defaults may nest components too
        config = registries.component(spec).config()
    yield from _walk_value(config, where, registries)


def _walk_value(
    value: Any, where: str, registries: Registries
) -> Iterator[tuple[str, ComponentSpec]]:
    if isinstance(value, ComponentSpec):
        yield from _walk_spec(value, where, registries)
    elif attrs.has(type(value)):
        for field in attrs.fields(type(value)):
            yield from _walk_value(getattr(value, field.name), f"{where}.{field.name}",
                                   registries)
    elif isinstance(value, tuple | list):
        for i, item in enumerate(value):
            yield from _walk_value(item, f"{where}[{i}]", registries)


def check_needs(config: PipelineConfig, registries: Registries, *, llm_name: str) -> None:
    """Refuse a pipeline whose components need what it does not provide.

    Args:
        config: The resolved pipeline.
        registries: Its registries.
        llm_name: The ``name`` of the LLM client the pipeline runs with (the
            built client's, which a ready instance passed to `Memory.open`
            may change; ``config.llm.type`` to check a config file alone).

    Raises:
        ConfigError: listing every such component with its path and the fix.
    """
    problems = []
    for where, spec in component_refs(config, registries):
        component = registries.component(spec)
        if "llm" in component.needs and llm_name == NO_LLM:
            offline = [c.name for c in registries[spec.kind] if "llm" not in c.needs]
            alternative = (f", or choose a {spec.kind} that needs none: {', '.join(offline)}"
                           if offline else "")
            problems.append(
                f"{spec.kind} {component.name!r} @ {where} needs an LLM, but the pipeline's "
                f"llm is {NO_LLM!r}: set [llm] type = \"litellm\" (or pass llm=…){alternative}"
            )
    if problems:
        raise ConfigError("invalid config:\n  " + "\n  ".join(problems))
