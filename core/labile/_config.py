"""Pipeline configuration: TOML (or the same structure in Python) → typed config.

A pipeline names one component of each single kind (store, embedder, llm,
extractor) and lists of atoms and operators; where each kind sits follows
from its declaration (`labile._kinds.KindSpec.section`). Each component table
has a ``type`` key naming a registered component, plus options that are
structured into that component's frozen attrs config class by one strict
converter (`labile._convert`): unknown keys and wrong types are errors, and
every error names its path, e.g. ``$.retrieval.seed[0].top_k``. Options may
themselves name nested components (``planner = "realm.seed_planner.llm"``).

Shape::

    preset = "hybrid"            # optional: start from a registered preset
    [store]
    type = "lancedb"
    path = "./memory"
    [embedder]
    type = "minilm"
    [llm]
    type = "none"
    [extractor]
    type = "baseline.turns"
    [[retrieval.seed]]
    type = "baseline.dense"
    [[retrieval.expand]] / [[retrieval.filter]] / [[reconsolidate]] / [[consolidate]]
    [plugins]
    disable = ["allmem"]
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from labile._convert import (
    CONVERTER,
    ComponentSpec,
    parse_ref,
    strict_str_sequence,
    structure_options,
)
from labile._errors import ConfigError
from labile._kinds import KERNEL_KINDS, RESERVED_KEYS, KindSpec, KindTable
from labile._registry import Registries

#: Presets tried, in order, when a config names none.
DEFAULT_PRESETS: Final = ("realm", "hybrid")

#: How deeply a config may nest tables and arrays. The deepest legitimate one
#: (a nested component's options inside a list section) is 5 levels; a far deeper
#: table is a mistake or an attack, and would exhaust Python's recursion limit.
MAX_DEPTH: Final = 32

#: Attribute name (``store``, ``seeders`` …) → kind, for the kernel's pipeline kinds.
_KERNEL_ATTRIBUTES: Final = {k.attribute: k.name for k in KERNEL_KINDS if k.in_pipeline}

SpecOrList = ComponentSpec | tuple[ComponentSpec, ...]


@attrs.frozen(init=False)
class PipelineConfig:
    """A fully resolved pipeline: every component named and configured.

    ``components`` maps each pipeline kind (`labile._kinds.KindSpec.in_pipeline`)
    to its `ComponentSpec` (single kinds) or tuple of specs (list kinds), in
    declaration order; ``sections`` says where a bundle-declared kind sits in
    a config table. The kernel's kinds are also attributes named after them
    (``config.store``, ``config.extractor``, ``config.seeders`` …), and the
    constructor (so also ``attrs.evolve``) accepts them by those names.
    """

    components: Mapping[str, SpecOrList]
    preset: str | None
    disable_plugins: tuple[str, ...]
    sections: Mapping[str, tuple[str, ...]]

    def __init__(
        self,
        *,
        components: Mapping[str, SpecOrList] | None = None,
        preset: str | None = None,
        disable_plugins: Iterable[str] = (),
        sections: Mapping[str, tuple[str, ...]] | None = None,
        **by_attribute: SpecOrList,
    ) -> None:
        merged = dict(components or {})
        for name, value in by_attribute.items():
            kind_name = _KERNEL_ATTRIBUTES.get(name)
            if kind_name is None:
                raise TypeError(
                    f"PipelineConfig() got an unexpected keyword {name!r} (allowed: components, "
                    f"preset, disable_plugins, sections, {', '.join(_KERNEL_ATTRIBUTES)})"
                )
            merged[kind_name] = value if isinstance(value, ComponentSpec) else tuple(value)
        for kind in _KERNEL_PIPELINE:
            if kind.placement == "list":
                merged.setdefault(kind.name, ())
            elif kind.name not in merged and not kind.default:
                raise TypeError(f"PipelineConfig() needs the {kind.name!r} component")
        self.__attrs_init__(
            components=merged, preset=preset, disable_plugins=tuple(disable_plugins),
            sections={**_KERNEL_SECTIONS, **(sections or {})},
        )

    def __getattr__(self, name: str) -> Any:
        kind = _KERNEL_ATTRIBUTES.get(name)
        if kind is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.components.get(kind)

    def with_component(self, kind: str, value: SpecOrList) -> PipelineConfig:
        """A copy with kind ``kind``'s component(s) replaced by ``value``."""
        return PipelineConfig(components={**self.components, kind: value}, preset=self.preset,
                              disable_plugins=self.disable_plugins, sections=self.sections)

    def single(self, kind: str) -> ComponentSpec:
        """The spec of the single kind ``kind`` (``"store"``, ``"extractor"`` …)."""
        spec = self.components[kind]
        if not isinstance(spec, ComponentSpec):
            raise TypeError(f"{kind!r} is a list kind: use listed({kind!r})")
        return spec

    def listed(self, kind: str) -> tuple[ComponentSpec, ...]:
        """The specs of the list kind ``kind`` (``"seeder"`` …), in order."""
        specs = self.components.get(kind, ())
        if isinstance(specs, ComponentSpec):
            raise TypeError(f"{kind!r} is a single kind: use single({kind!r})")
        return specs

    def to_table(self) -> dict[str, Any]:
        """The equivalent config table with all defaults written out."""
        table: dict[str, Any] = {}
        if self.preset:
            table["preset"] = self.preset
        for kind, value in self.components.items():
            written = value.to_table() if isinstance(value, ComponentSpec) else \
                [s.to_table() for s in value]
            _put(table, self.sections[kind], written)
        table["plugins"] = {"disable": list(self.disable_plugins)}
        return table


_KERNEL_PIPELINE: Final = tuple(k for k in KERNEL_KINDS if k.in_pipeline)
_KERNEL_SECTIONS: Final = {k.name: k.section for k in _KERNEL_PIPELINE}


def _put(table: dict[str, Any], section: tuple[str, ...], value: Any) -> None:
    for key in section[:-1]:
        table = table.setdefault(key, {})
    table[section[-1]] = value


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse a TOML config file, with a `ConfigError` naming the file on failure
    (missing, not UTF-8, not TOML, or nested deeper than `MAX_DEPTH`)."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            table = tomllib.load(fh)
        check_depth(table)
        return table
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # the parser recurses once per nested array or inline table
        raise ConfigError(f"{path}: arrays or inline tables are nested too deeply to parse; "
                          f"a config nests at most {MAX_DEPTH} levels") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start} is "
                          f"{exc.object[exc.start:exc.start + 1]!r}); a config file must be "
                          "UTF-8 encoded TOML") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {path} is a directory, not a TOML file") from None


def check_depth(table: Mapping[str, Any]) -> None:
    """Refuse a table nesting tables or arrays more than `MAX_DEPTH` levels deep.

    Checked without recursion, so a table of any depth gets a `ConfigError`
    naming where it goes too deep, never a ``RecursionError``.
    """
    stack: list[tuple[Any, str, int]] = [(table, "$", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            shown = where if len(where) <= 80 else where[:77] + "..."
            raise ConfigError(f"the config nests more than {MAX_DEPTH} levels of tables or "
                              f"arrays @ {shown}; a config nests at most {MAX_DEPTH}")
        if isinstance(value, Mapping):
            stack.extend((v, f"{where}.{k}", depth + 1) for k, v in value.items())
        elif isinstance(value, list | tuple):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))


def plugins_disabled(table: Mapping[str, Any]) -> tuple[str, ...]:
    """The ``[plugins] disable`` list of a raw table (validated)."""
    plugins = table.get("plugins", {})
    if not isinstance(plugins, Mapping):
        raise ConfigError("expected a table @ $.plugins")
    extra = set(plugins) - {"disable"}
    if extra:
        raise ConfigError(f"unknown option(s) {', '.join(sorted(extra))} @ $.plugins")
    try:
        return tuple(strict_str_sequence(plugins.get("disable", []), list[str]))
    except TypeError as exc:
        raise ConfigError(f"{exc} @ $.plugins.disable") from None


def merge_tables(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge ``override`` onto ``base`` the way presets are overridden.

    Tables merge key by key, except that a component table whose ``type``
    differs from the base's replaces it whole (the base's options belong to
    another component); lists replace lists.
    """
    out = copy.deepcopy(dict(base))
    for key, value in override.items():
        old = out.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            if "type" in value and value.get("type") != old.get("type"):
                out[key] = copy.deepcopy(dict(value))
            else:
                out[key] = merge_tables(old, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def preset_table(registries: Registries, name: str) -> dict[str, Any]:
    """The raw table of the registered preset ``name`` (a mapping or a callable's result)."""
    value = registries["preset"].get(name).factory
    table = value() if callable(value) else value
    if not isinstance(table, Mapping):
        raise ConfigError(f"preset {name!r} is not a table: {type(table).__name__}")
    return dict(table)


def top_level_keys(kinds: KindTable) -> frozenset[str]:
    """The keys a config table may have: the kernel's own and each pipeline kind's."""
    return frozenset(RESERVED_KEYS | {k.section[0] for k in kinds.in_pipeline()})


def resolve(table: Mapping[str, Any], registries: Registries) -> PipelineConfig:  # noqa: C901, PLR0912
    """Turn a raw config table into a `PipelineConfig`, checking everything.

    Raises:
        ConfigError: listing every problem, each with its path.
    """
    if not isinstance(table, Mapping):
        raise ConfigError(f"a config must be a table, got {type(table).__name__}")
    check_depth(table)
    allowed = top_level_keys(registries.kinds)
    unknown = set(table) - allowed
    if unknown:
        raise ConfigError(
            f"unknown top-level key(s) {', '.join(sorted(unknown))} @ $ "
            f"(allowed: {', '.join(sorted(allowed))})"
        )
    preset_name = table.get("preset")
    if preset_name is None:
        preset_name = next((p for p in DEFAULT_PRESETS if p in registries["preset"]), None)
    if preset_name is not None:
        if not isinstance(preset_name, str):
            raise ConfigError(f"expected a string, got {preset_name!r} @ $.preset")
        base = preset_table(registries, preset_name)
        table = merge_tables(base, {k: v for k, v in table.items() if k != "preset"})

    errors: list[str] = []
    placed = registries.kinds.in_pipeline()
    components: dict[str, SpecOrList] = {}
    for kind in placed:
        if kind.placement != "single":
            continue
        raw = _at(table, kind.section)
        where = _path(kind.section)
        if raw is _MISSING and kind.default:
            if kind.default not in registries[kind.name]:
                continue  # the kind is optional and its default is not installed
            raw = kind.default
        if raw is None or raw is _MISSING:
            errors.append(f"required table missing @ {where}")
            continue
        spec = _build_spec(kind, raw, where, registries, errors)
        if spec is not None:
            components[kind.name] = spec
    bad_groups = _check_groups(table, placed, errors)
    for kind in placed:
        if kind.placement != "list":
            continue
        where = _path(kind.section)
        if kind.section[:-1] in bad_groups:
            components[kind.name] = ()
            continue
        raw_list = _at(table, kind.section)
        if raw_list is _MISSING:
            raw_list = []
        if not isinstance(raw_list, list):
            errors.append(f"expected an array of tables @ {where}")
            continue
        specs = [
            _build_spec(kind, raw, f"{where}[{i}]", registries, errors)
            for i, raw in enumerate(raw_list)
        ]
        components[kind.name] = tuple(s for s in specs if s is not None)
    try:
        disabled = plugins_disabled(table)
    except ConfigError as exc:
        errors.append(str(exc))
        disabled = ()
    _check_disabled_known(disabled, registries, errors)
    if errors:
        raise ConfigError("invalid config:\n  " + "\n  ".join(errors))
    ordered = {k.name: components[k.name] for k in placed if k.name in components}
    return PipelineConfig(components=ordered, preset=preset_name, disable_plugins=disabled,
                          sections={k.name: k.section for k in placed})


def _check_disabled_known(disabled: Sequence[str], registries: Registries,
                          errors: list[str]) -> None:
    """A plugin to disable must exist: a misspelt name would disable nothing, silently."""
    from labile._plugins import installed_plugin_names

    if not disabled:
        return
    known = installed_plugin_names() | {c.plugin for c in registries.all()}
    for name in disabled:
        if name not in known:
            errors.append(f"unknown plugin {name!r} @ $.plugins.disable "
                          f"(installed: {', '.join(sorted(known))})")


def _path(section: tuple[str, ...]) -> str:
    return "$." + ".".join(section)


_MISSING: Final = object()


def _at(table: Mapping[str, Any], section: tuple[str, ...]) -> Any:
    """The value at ``section`` of ``table``, or ``_MISSING`` if absent or unreachable."""
    value: Any = table
    for key in section:
        if not isinstance(value, Mapping) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _check_groups(
    table: Mapping[str, Any], kinds: list[KindSpec], errors: list[str]
) -> set[tuple[str, ...]]:
    """Check the tables that group list sections (``[retrieval]``); return the bad ones."""
    children: dict[tuple[str, ...], list[str]] = {}
    for kind in kinds:
        for depth in range(1, len(kind.section)):
            children.setdefault(kind.section[:depth], [])
            child = kind.section[depth]
            if child not in children[kind.section[:depth]]:
                children[kind.section[:depth]].append(child)
    bad: set[tuple[str, ...]] = set()
    for group, keys in children.items():
        value = _at(table, group)
        if value is _MISSING:
            continue
        if not isinstance(value, Mapping):
            errors.append(f"expected a table @ {_path(group)}")
            bad.add(group)
            continue
        extra = set(value) - set(keys)
        if extra:
            errors.append(
                f"unknown option(s) {', '.join(sorted(extra))} @ {_path(group)} "
                f"(allowed: {', '.join(keys)})"
            )
    return bad


def _build_spec(
    kind: KindSpec, raw: Any, where: str, registries: Registries, errors: list[str]
) -> ComponentSpec | None:
    try:  # a table, or the shorthand `embedder = "minilm"`
        name, options = parse_ref(kind.name, raw)
    except (TypeError, ValueError) as exc:
        errors.append(f"{exc} @ {where}")
        return None
    try:
        component = registries[kind.name].get(name)
    except LookupError as exc:
        errors.append(f"{exc} @ {where}.type")
        return None
    try:
        config = structure_options(component, options, where, registries)
    except ConfigError as exc:
        errors.extend(str(exc).splitlines())
        return None
    return ComponentSpec(kind=kind.name, type=component.name, config=config)


__all__ = [
    "CONVERTER", "DEFAULT_PRESETS", "MAX_DEPTH", "PipelineConfig", "check_depth", "merge_tables",
    "plugins_disabled", "preset_table", "read_toml", "resolve", "structure_options",
]
