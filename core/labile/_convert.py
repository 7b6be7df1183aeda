"""Structuring component options: one strict converter, and references to components.

Options are structured into a component's frozen attrs config class by one
strict cattrs converter: unknown keys and wrong types are errors (cattrs would
otherwise turn ``5.5`` into ``5`` and ``"abc"`` into ``['a', 'b', 'c']``), and
every error names its path, e.g. ``$.retrieval.seed[0].top_k``.

A config field made with `component_field` holds a *nested* component of a
declared kind: in a config file it is a registered name (or one of the kind's
aliases) or a table ``{type = "<name>", <options>…}``, structured strictly
with that kind's registry into a `ComponentSpec`. The host component builds
it with ``deps.registries.build(spec, deps, …)``.

Every option that sets how much a component may use (threads, batch sizes,
cache sizes, timeouts, candidate counts, ``k``) is declared with `bounded`, an
upper bound included, so a config asking for a million threads fails at
``labile check`` with the option, the value and the allowed range; `upper_bound`
reads the declared bound back (the tests check every registered component).

A field made with `runtime_field` is *runtime-only*: it changes how fast a
component runs, never what it produces, so it is no part of the shape a
store records (`labile._recorded`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError
from cattrs.gen import make_dict_structure_fn, override

from labile._errors import ConfigError

if TYPE_CHECKING:
    from labile._registry import Component, Registries

#: attrs field metadata key naming the kind of a nested component field.
KIND_KEY: Final = "labile.kind"
#: attrs field metadata key marking a runtime-only option (see `runtime_field`).
RUNTIME_KEY: Final = "labile.runtime"
#: attrs field metadata key naming a host's keys that moved into its nested component.
MOVED_KEY: Final = "labile.moved"


@attrs.frozen(kw_only=True)
class ComponentSpec:
    """A reference to a component: its kind, registered name and structured config.

    ``config`` is ``None`` for a name given in Python and not structured yet;
    the component then builds with its default options.
    """

    type: str
    config: Any = None
    kind: str = ""

    def to_table(self) -> dict[str, Any]:
        """The TOML table for this spec, with every default filled in."""
        if self.config is None:
            return {"type": self.type}
        return {"type": self.type, **CONVERTER.unstructure(self.config)}

    def to_ref(self) -> str | dict[str, Any]:
        """How a nested reference is written: the bare name unless it has options."""
        table = self.to_table()
        return self.type if len(table) == 1 else table


def component_field(
    kind: str, default: str, *, moved: Collection[str] | Mapping[str, str] = ()
) -> Any:
    """A config field holding a nested component of the declared ``kind``.

    Use it in a host's config class, annotated `ComponentSpec`::

        planner: ComponentSpec = component_field("realm.seed_planner",
                                                 "realm.seed_planner.offline")

    In Python the field also takes a name (``SeedConfig(planner="llm")``).

    Args:
        kind: The declared kind of the component.
        default: The registered name used when the config names none.
        moved: Keys of the host's table that are options of the nested
            component now (they were the host's once), or a mapping of such
            keys to the option's new name. A config file may
            still write them in the host's table: structuring moves each into
            the component's table when the chosen component takes it (and
            drops it otherwise, as the host did for a component that did not
            read it); giving one in both places is an error. A key that is
            still an option of the host as well is copied, not moved.
    """

    def convert(value: Any) -> ComponentSpec:
        if isinstance(value, ComponentSpec):
            return value if value.kind == kind else attrs.evolve(value, kind=kind)
        if isinstance(value, str) and value:
            return ComponentSpec(kind=kind, type=value)
        raise TypeError(
            f"expected a {kind} name or a ComponentSpec, got {value!r} (tables of options "
            "are structured by labile._config.resolve)"
        )

    return attrs.field(default=ComponentSpec(kind=kind, type=default), converter=convert,
                       metadata={KIND_KEY: kind, MOVED_KEY: tuple(
                           moved.items() if isinstance(moved, Mapping) else zip(moved, moved,
                                                                                strict=True))})


def nested_kind(field: attrs.Attribute[Any]) -> str | None:
    """The kind of a `component_field`, ``None`` for any other field."""
    kind = field.metadata.get(KIND_KEY)
    return kind if isinstance(kind, str) else None


@attrs.frozen
class Bounds:
    """An attrs validator: a number (not a bool, not NaN) from ``low`` to ``high``,
    or ``None`` when ``or_none``.

    Make one with `bounded`; `upper_bound` finds it again in a field's validators.
    """

    low: float
    high: float
    or_none: bool = False

    def __call__(self, _inst: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None and self.or_none:
            return
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not self.low <= value <= self.high:
            unset = " or unset" if self.or_none else ""
            raise ValueError(f"{attribute.name} must be a number from {self.low!r} to "
                             f"{self.high!r}{unset}, got {value!r}")


def bounded(low: float, high: float, *, or_none: bool = False) -> Bounds:
    """A validator keeping an option within ``low``..``high`` (inclusive); with
    ``or_none``, ``None`` (unset) is allowed too.

    Use it for every option that sizes a resource, with an upper bound a real
    deployment never needs to pass::

        threads: int = runtime_field(default=2, validator=[instance_of(int), bounded(1, 256)])
    """
    if not low <= high:
        raise ValueError(f"bounded({low!r}, {high!r}): low must not exceed high")
    return Bounds(low, high, or_none)


def option_range(field: attrs.Attribute[Any]) -> tuple[float | None, float | None]:
    """The least and the largest value ``field``'s validators allow (``None`` where they
    set no bound).

    Understands `bounded`, ``attrs.validators.ge`` / ``gt`` / ``le`` / ``lt`` (a strict
    bound is reported as the bound itself), and those inside ``and_`` (a list of
    validators) and ``optional``.
    """
    lows: list[float] = []
    highs: list[float] = []
    pending: list[Any] = [field.validator]
    while pending:
        validator = pending.pop()
        if isinstance(validator, Bounds):
            lows.append(validator.low)
            highs.append(validator.high)
        elif getattr(validator, "compare_op", None) in ("<=", "<"):
            highs.append(validator.bound)
        elif getattr(validator, "compare_op", None) in (">=", ">"):
            lows.append(validator.bound)
        pending.extend(getattr(validator, "_validators", ()))  # and_
        inner = getattr(validator, "validator", None)  # optional
        if inner is not None:
            pending.extend(inner if isinstance(inner, list | tuple) else [inner])
    return (max(lows) if lows else None, min(highs) if highs else None)


def upper_bound(field: attrs.Attribute[Any]) -> float | None:
    """The largest value ``field``'s validators allow, ``None`` if they set no bound
    (`option_range`)."""
    return option_range(field)[1]


def runtime_field(**kwargs: Any) -> Any:
    """An ``attrs.field`` (same arguments) for a *runtime-only* option.

    The contract: the option changes only how a component runs (threads, batch
    sizes, timeouts), never its output, so two configs that differ only in such
    options produce the same stored data. A store therefore leaves these options
    out of the shape it records, and opens with any value of them::

        threads: int = runtime_field(default=2, validator=bounded(1, 256))

    Do not mark an option that changes a vector, a node or an edge (a truncation
    length, a model, a threshold): a store built with another value would then
    be opened as if it held the same data.
    """
    metadata = {**(kwargs.pop("metadata", None) or {}), RUNTIME_KEY: True}
    return attrs.field(metadata=metadata, **kwargs)


def runtime_only(field: attrs.Attribute[Any]) -> bool:
    """Whether ``field`` was made with `runtime_field`."""
    return field.metadata.get(RUNTIME_KEY) is True


# -- the strict converter ----------------------------------------------------------

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


def strict_str_sequence(value: Any, t: Any) -> Any:
    """``value`` as the sequence-of-strings type ``t``, refusing a bare string."""
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


def _has_nested(cls: Any) -> bool:
    return isinstance(cls, type) and attrs.has(cls) and any(
        nested_kind(f) for f in attrs.fields(cls)
    )


#: The registries nested component fields are structured with, set for the
#: duration of one `structure_options` call. A context variable rather than a
#: converter per registries: cattrs generates its structuring code once per
#: class and converter, and a pipeline is resolved with fresh registries.
_REGISTRIES: ContextVar[Registries | None] = ContextVar("labile_registries", default=None)


def make_converter() -> cattrs.Converter:
    """A converter for configs: strict scalar types, no extra keys.

    Nested component fields are structured with their kind's registry (names
    checked, aliases resolved, options structured) when `structure_options`
    is given the registries; otherwise they take a name only.
    """
    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_structure_hook(int, _strict_int)
    conv.register_structure_hook(float, _strict_float)
    conv.register_structure_hook(str, _strict_str)
    conv.register_structure_hook(bool, _strict_bool)
    conv.register_structure_hook_func(_is_str_sequence, strict_str_sequence)
    conv.register_unstructure_hook(enum.Enum, lambda e: e.value)
    conv.register_unstructure_hook(ComponentSpec, lambda spec: spec.to_ref())

    def structure_fn(cls: type) -> Callable[[Any, Any], Any]:
        overrides: dict[str, Any] = {
            f.name: override(struct_hook=_ref_hook(kind, conv))
            for f in attrs.fields(cls) if (kind := nested_kind(f))
        }
        inner: Callable[[Any, Any], Any] = make_dict_structure_fn(
            cls, conv, _cattrs_forbid_extra_keys=True, **overrides)
        return lambda value, t: inner(move_options(value, cls, _registered_options), t)

    conv.register_structure_hook_factory(_has_nested, structure_fn)
    return conv


def parse_ref(kind: str, value: Any) -> tuple[str, dict[str, Any]]:
    """A reference written in a config, as ``(name, options)``.

    Raises:
        TypeError: ``value`` is neither a name nor a table.
        ValueError: the table has no string ``type``.
    """
    if isinstance(value, str):
        return value, {}
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a {kind} name or a table with a 'type' key, got {value!r}")
    name = value.get("type")
    if not isinstance(name, str):
        raise ValueError(f"missing 'type' (a registered {kind} name)")
    return name, {k: v for k, v in value.items() if k != "type"}


def _registered_options(kind: str, name: str) -> Collection[str] | None:
    registries = _REGISTRIES.get()
    if registries is None or kind not in registries.by_kind or name not in registries[kind]:
        return None  # the reference's own hook reports what is wrong with it
    return attrs.fields_dict(registries[kind].get(name).config)


def move_options(
    table: Any, cls: type, options_of: Callable[[str, str], Collection[str] | None]
) -> Any:
    """``table`` (a host's options) with the keys its nested components took over
    (`component_field`'s ``moved``) moved into their tables.

    Those components are always written out (as a table), so that a table
    written before the keys moved and one written after resolve alike.

    Args:
        table: The host's table as written; anything but a mapping is returned as is.
        cls: The host's config class.
        options_of: ``options_of(kind, name)``: the option names of that
            registered component, ``None`` if unknown (a key the host no
            longer has then moves; one it still has is not copied).

    Raises:
        ValueError: a key is written both in the host's table and in the component's.
    """
    if not isinstance(table, Mapping):
        return table
    out, own = dict(table), attrs.fields_dict(cls)
    taken: set[str] = set()
    for field in attrs.fields(cls):
        if not field.metadata.get(MOVED_KEY):
            continue
        current = out.get(field.name, field.default.type)
        if isinstance(current, ComponentSpec):
            continue
        keys = {k: new for k, new in field.metadata[MOVED_KEY] if k in table}
        kind = str(nested_kind(field))
        name, options = parse_ref(kind, current)
        accepted = options_of(kind, name)
        for key, new in keys.items():
            if new in options and key in own:
                continue  # a copy (a table written back): the component's own value stands
            if new in options:
                raise ValueError(f"{key!r} is given twice: write it once, as an option of "
                                 f"{field.name!r} ({field.name} = {{type = {name!r}, {new} = …}})")
            # unknown component: move what the host lost, copy nothing it kept
            if (key not in own) if accepted is None else (new in accepted):
                options[new] = table[key]
        out[field.name], taken = {"type": name, **options}, taken | set(keys)
    # a key that is still the host's option too stays
    return {k: v for k, v in out.items() if k not in taken or k in own}


def _ref_hook(kind: str, conv: cattrs.Converter) -> Callable[[Any, Any], ComponentSpec]:
    def structure(value: Any, _t: Any) -> ComponentSpec:
        if isinstance(value, ComponentSpec):
            return value
        name, options = parse_ref(kind, value)
        registries = _REGISTRIES.get()
        if registries is None:
            if options:
                raise ValueError(f"options of a nested {kind} need the registries "
                                 "(resolve the whole config with labile._config.resolve)")
            return ComponentSpec(kind=kind, type=name)
        if kind not in registries.by_kind:
            raise ValueError(f"component kind {kind!r} is not declared (is the plugin that "
                             "declares it disabled or not installed?)")
        try:
            component = registries[kind].get(name)
        except LookupError as exc:
            raise ValueError(str(exc)) from None
        return ComponentSpec(kind=kind, type=component.name,
                             config=conv.structure(options, component.config))

    return structure


CONVERTER: Final = make_converter()


def structure_options(
    component: Component[Any], options: Mapping[str, Any], where: str,
    registries: Registries | None = None,
) -> Any:
    """Structure ``options`` into ``component``'s config class, or raise `ConfigError`.

    Args:
        component: The registered component.
        options: Its options from the config table (without ``type``).
        where: The table's path, for error messages (``$.retrieval.seed[0]``).
        registries: Needed when the config class has nested component fields
            with options.
    """
    token = _REGISTRIES.set(registries)
    try:
        return CONVERTER.structure(dict(options), component.config)
    except (ClassValidationError, IterableValidationError) as exc:
        lines = [f"{p} @ {where}" for p in _every_field_problem(component.config, options)]
        lines = lines or cattrs.transform_error(exc, path=where,
                                                format_exception=_format_exception)
        raise ConfigError("\n".join(lines)) from None
    except (TypeError, ValueError) as exc:  # raised by the class's own validators
        problems = _every_field_problem(component.config, options) or [str(exc)]
        raise ConfigError("\n".join(f"{p} @ {where}" for p in problems)) from None
    finally:
        _REGISTRIES.reset(token)


def _every_field_problem(config_cls: type, options: Mapping[str, Any]) -> list[str]:
    """What each field's validator says of ``options``: attrs stops at the first
    failing field, and a user fixing a config wants every bad value at once.

    Empty when the options cannot be structured even without validators (the
    caller then reports the error it has).
    """
    try:
        with attrs.validators.disabled():
            unchecked: Any = CONVERTER.structure(dict(options), config_cls)
    except Exception:  # a cross-field check failed: the caller reports its error
        return []
    problems = []
    for field in attrs.fields(config_cls):
        if field.validator is None:
            continue
        try:
            field.validator(unchecked, field, getattr(unchecked, field.name))
        except (TypeError, ValueError) as exc:
            # attrs' own validators put the message first, then the field and value
            first = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
            problems.append(first)
    return problems
