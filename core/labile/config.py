"""Pipeline configuration: TOML (or the same structure in Python) → typed config.

A pipeline names one component of each single kind (store, embedder, llm,
extractor) and lists of atoms and operators. Each component table has a
``type`` key naming a registered component, plus options that are structured
into that component's frozen attrs config class by one strict cattrs
converter: unknown keys and wrong types are errors (cattrs would otherwise
turn ``5.5`` into ``5`` and ``"abc"`` into ``['a', 'b', 'c']``), and every
error names its path, e.g. ``$.retrieval.seed[0].top_k``.

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
import enum
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError

from labile.errors import ConfigError
from labile.registry import Component, Registries

SINGLE_KINDS: Final = ("store", "embedder", "llm", "extractor")
#: config key -> component kind, for the list-valued sections.
LIST_SECTIONS: Final = {
    ("retrieval", "seed"): "seeder",
    ("retrieval", "expand"): "expander",
    ("retrieval", "filter"): "filter",
    ("reconsolidate",): "reconsolidator",
    ("consolidate",): "consolidator",
}
TOP_LEVEL_KEYS: Final = frozenset(
    {"preset", "plugins", "retrieval", "reconsolidate", "consolidate", *SINGLE_KINDS}
)
#: Presets tried, in order, when a config names none.
DEFAULT_PRESETS: Final = ("realm", "hybrid")


def _strict_int(value: Any, _t: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {type(value).__name__} {value!r}")
    return value


def _strict_float(value: Any, _t: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {type(value).__name__} {value!r}")
    return float(value)


def _strict_str(value: Any, _t: type) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__} {value!r}")
    return value


def _strict_bool(value: Any, _t: type) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {type(value).__name__} {value!r}")
    return value


def _is_str_sequence(t: Any) -> bool:
    origin = get_origin(t)
    return origin in (list, tuple, frozenset, set) and all(
        a is str or a is Ellipsis for a in get_args(t)
    )


def _strict_str_sequence(value: Any, t: Any) -> Any:
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        raise TypeError(f"expected a list of strings, got {type(value).__name__} {value!r}")
    bad = [v for v in value if not isinstance(v, str)]
    if bad:
        raise TypeError(f"expected a list of strings, found {bad[0]!r}")
    origin = get_origin(t)
    return origin(value) if origin is not tuple else tuple(value)


def _format_exception(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, ForbiddenExtraKeysError):
        return f"unknown option(s) {', '.join(sorted(exc.extra_fields))}"
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, TypeError | ValueError):
        return str(exc)
    return cattrs.v.format_exception(exc, type_)


def make_converter() -> cattrs.Converter:
    """The one converter for configs: strict scalar types, no extra keys."""
    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_structure_hook(int, _strict_int)
    conv.register_structure_hook(float, _strict_float)
    conv.register_structure_hook(str, _strict_str)
    conv.register_structure_hook(bool, _strict_bool)
    conv.register_structure_hook_func(_is_str_sequence, _strict_str_sequence)
    conv.register_unstructure_hook(enum.Enum, lambda e: e.value)
    return conv


CONVERTER: Final = make_converter()


@attrs.frozen(kw_only=True)
class ComponentSpec:
    """A resolved component reference: its registered name and structured config."""

    type: str
    config: Any = None

    def to_table(self) -> dict[str, Any]:
        """The TOML table for this spec, with every default filled in."""
        return {"type": self.type, **CONVERTER.unstructure(self.config)}


@attrs.frozen(kw_only=True)
class PipelineConfig:
    """A fully resolved pipeline: every component named and configured."""

    store: ComponentSpec
    embedder: ComponentSpec
    llm: ComponentSpec
    extractor: ComponentSpec
    seeders: tuple[ComponentSpec, ...] = ()
    expanders: tuple[ComponentSpec, ...] = ()
    filters: tuple[ComponentSpec, ...] = ()
    reconsolidators: tuple[ComponentSpec, ...] = ()
    consolidators: tuple[ComponentSpec, ...] = ()
    preset: str | None = None
    disable_plugins: tuple[str, ...] = ()

    def to_table(self) -> dict[str, Any]:
        """The equivalent config table with all defaults written out."""
        table: dict[str, Any] = {}
        if self.preset:
            table["preset"] = self.preset
        for kind in SINGLE_KINDS:
            table[kind] = getattr(self, kind).to_table()
        table["retrieval"] = {
            "seed": [s.to_table() for s in self.seeders],
            "expand": [s.to_table() for s in self.expanders],
            "filter": [s.to_table() for s in self.filters],
        }
        table["reconsolidate"] = [s.to_table() for s in self.reconsolidators]
        table["consolidate"] = [s.to_table() for s in self.consolidators]
        table["plugins"] = {"disable": list(self.disable_plugins)}
        return table


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse a TOML config file, with a `ConfigError` naming the file on failure."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def plugins_disabled(table: Mapping[str, Any]) -> tuple[str, ...]:
    """The ``[plugins] disable`` list of a raw table (validated)."""
    plugins = table.get("plugins", {})
    if not isinstance(plugins, Mapping):
        raise ConfigError("expected a table @ $.plugins")
    extra = set(plugins) - {"disable"}
    if extra:
        raise ConfigError(f"unknown option(s) {', '.join(sorted(extra))} @ $.plugins")
    try:
        return tuple(_strict_str_sequence(plugins.get("disable", []), list[str]))
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


def resolve(table: Mapping[str, Any], registries: Registries) -> PipelineConfig:
    """Turn a raw config table into a `PipelineConfig`, checking everything.

    Raises:
        ConfigError: listing every problem, each with its path.
    """
    if not isinstance(table, Mapping):
        raise ConfigError(f"a config must be a table, got {type(table).__name__}")
    unknown = set(table) - TOP_LEVEL_KEYS
    if unknown:
        raise ConfigError(
            f"unknown top-level key(s) {', '.join(sorted(unknown))} @ $ "
            f"(allowed: {', '.join(sorted(TOP_LEVEL_KEYS))})"
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
    singles: dict[str, ComponentSpec] = {}
    for kind in SINGLE_KINDS:
        raw = table.get(kind)
        if raw is None:
            errors.append(f"required table missing @ $.{kind}")
            continue
        spec = _build_spec(kind, raw, f"$.{kind}", registries, errors)
        if spec is not None:
            singles[kind] = spec

    lists: dict[str, tuple[ComponentSpec, ...]] = {}
    retrieval = table.get("retrieval", {})
    if not isinstance(retrieval, Mapping):
        errors.append("expected a table @ $.retrieval")
        retrieval = {}
    extra = set(retrieval) - {"seed", "expand", "filter"}
    if extra:
        errors.append(
            f"unknown option(s) {', '.join(sorted(extra))} @ $.retrieval "
            "(allowed: seed, expand, filter)"
        )
    for keys, kind in LIST_SECTIONS.items():
        raw_list = retrieval.get(keys[1], []) if keys[0] == "retrieval" else table.get(keys[0], [])
        where = "$." + ".".join(keys)
        if not isinstance(raw_list, list):
            errors.append(f"expected an array of tables @ {where}")
            continue
        specs = [
            _build_spec(kind, raw, f"{where}[{i}]", registries, errors)
            for i, raw in enumerate(raw_list)
        ]
        lists[kind] = tuple(s for s in specs if s is not None)
    try:
        disabled = plugins_disabled(table)
    except ConfigError as exc:
        errors.append(str(exc))
        disabled = ()
    if errors:
        raise ConfigError("invalid config:\n  " + "\n  ".join(errors))
    return PipelineConfig(
        **singles,
        seeders=lists["seeder"],
        expanders=lists["expander"],
        filters=lists["filter"],
        reconsolidators=lists["reconsolidator"],
        consolidators=lists["consolidator"],
        preset=preset_name,
        disable_plugins=disabled,
    )


def _build_spec(
    kind: str, raw: Any, where: str, registries: Registries, errors: list[str]
) -> ComponentSpec | None:
    if isinstance(raw, str):  # shorthand: `embedder = "minilm"`
        raw = {"type": raw}
    if not isinstance(raw, Mapping):
        errors.append(f"expected a table with a 'type' key, got {raw!r} @ {where}")
        return None
    name = raw.get("type")
    if not isinstance(name, str):
        errors.append(f"missing 'type' (a registered {kind} name) @ {where}")
        return None
    try:
        component = registries[kind].get(name)
    except LookupError as exc:
        errors.append(f"{exc} @ {where}.type")
        return None
    options = {k: v for k, v in raw.items() if k != "type"}
    try:
        config = structure_options(component, options, where)
    except ConfigError as exc:
        errors.extend(str(exc).splitlines())
        return None
    return ComponentSpec(type=name, config=config)


def structure_options(component: Component[Any], options: Mapping[str, Any], where: str) -> Any:
    """Structure ``options`` into ``component``'s config class, or raise `ConfigError`."""
    try:
        return CONVERTER.structure(dict(options), component.config)
    except (ClassValidationError, IterableValidationError) as exc:
        lines = cattrs.transform_error(exc, path=where, format_exception=_format_exception)
        raise ConfigError("\n".join(lines)) from None
    except (TypeError, ValueError) as exc:  # raised by the class's own validators
        raise ConfigError(f"{exc} @ {where}") from None


def config_fields(config_cls: type) -> list[tuple[str, str, Any]]:
    """``(name, type, default)`` for every field of an attrs config class."""
    hints = typing.get_type_hints(config_cls)
    out = []
    for field in attrs.fields(config_cls):
        default = field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            default = default.factory()
        out.append((field.name, _type_name(hints.get(field.name, field.type)), default))
    return out


def _type_name(t: Any) -> str:
    if isinstance(t, type) and not get_args(t):
        return t.__name__
    if isinstance(t, types.UnionType | typing._UnionGenericAlias):  # type: ignore[attr-defined]
        return " | ".join(_type_name(a) for a in get_args(t))
    return str(t).replace("typing.", "")
