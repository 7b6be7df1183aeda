"""Config: strict structuring, error paths, presets, round-trips for every component."""

from __future__ import annotations

import typing
from typing import Any

import attrs
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from labile._config import CONVERTER, merge_tables, resolve, structure_options
from labile._convert import MOVED_KEY
from labile._errors import ConfigError
from labile._registry import Component, Registries
from labile.plugin import ComponentSpec, component_field, runtime_field, runtime_only
from labile.testing import make_registries

_REGISTRIES = make_registries()
BUILDABLE = [
    c for c in _REGISTRIES.all() if c.kind not in ("node_kind", "predicate", "preset")
]
MINIMAL = {
    "store": {"type": "memory"},
    "embedder": {"type": "hashing"},
    "llm": {"type": "none"},
    "extractor": {"type": "baseline.turns"},
}


@pytest.mark.parametrize("comp", BUILDABLE, ids=lambda c: f"{c.kind}:{c.name}")
def test_config_structures_from_empty_table(comp: Component[Any]) -> None:
    """``type = "<name>"`` alone is a valid table for every component."""
    assert CONVERTER.structure({}, comp.config) == comp.config()


@pytest.mark.parametrize("comp", BUILDABLE, ids=lambda c: f"{c.kind}:{c.name}")
def test_defaults_round_trip(comp: Component[Any]) -> None:
    default = comp.config()
    assert CONVERTER.structure(CONVERTER.unstructure(default), comp.config) == default


def _value_strategy(t: Any) -> st.SearchStrategy[Any] | None:
    if t is bool:
        return st.booleans()
    if t is int:
        return st.integers(-5, 100_000)
    if t is float:
        return st.floats(-2.0, 1000.0, allow_nan=False)
    if t is str:
        return st.text(max_size=12)
    if typing.get_origin(t) is typing.Literal:
        return st.sampled_from(typing.get_args(t))
    return None


@pytest.mark.parametrize("comp", BUILDABLE, ids=lambda c: f"{c.kind}:{c.name}")
@given(data=st.data())
def test_random_valid_configs_round_trip(comp: Component[Any], data: st.DataObject) -> None:
    """Any config the class accepts survives unstructure → structure unchanged."""
    hints = typing.get_type_hints(comp.config)
    kwargs = {}
    for field in attrs.fields(comp.config):
        strategy = _value_strategy(hints.get(field.name))
        if strategy is not None and data.draw(st.booleans()):
            value = data.draw(strategy)
            try:  # keep only values the field accepts on its own
                comp.config(**{field.name: value})
            except (TypeError, ValueError):
                continue
            kwargs[field.name] = value
    try:
        config = comp.config(**kwargs)
    except (TypeError, ValueError):
        assume(False)
    assert CONVERTER.structure(CONVERTER.unstructure(config), comp.config) == config


@pytest.mark.parametrize("comp", BUILDABLE, ids=lambda c: f"{c.kind}:{c.name}")
@given(key=st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=15))
def test_unknown_keys_always_rejected(comp: Component[Any], key: str) -> None:
    """Every buildable component refuses any option its config class does not
    declare, and the error names the option. Keys that moved into a nested decision
    (`component_field`'s ``moved``, e.g. ``evidence_k``) are declared too: they are
    accepted and moved, so they are not drawn (hypothesis draws literals of the code)."""
    moved = {k for f in attrs.fields(comp.config) for k, _ in f.metadata.get(MOVED_KEY, ())}
    assume(key not in {f.name for f in attrs.fields(comp.config)} | moved)
    with pytest.raises(ConfigError, match=f"unknown option.*{key}"):
        structure_options(comp, {key: 1}, "$.x")


def test_silent_coercions_are_errors() -> None:
    table = {**MINIMAL, "retrieval": {"seed": [{"type": "baseline.hybrid", "rrf_k": 5.5}]}}
    with pytest.raises(ConfigError) as info:
        resolve(table, _REGISTRIES)
    assert "expected an integer, got float 5.5 @ $.retrieval.seed[0].rrf_k" in str(info.value)


def test_validator_message_keeps_its_text() -> None:
    table = {**MINIMAL, "retrieval": {"seed": [{"type": "baseline.hybrid", "rrf_k": 0}]}}
    with pytest.raises(ConfigError,
                       match=r"rrf_k must be a number from 1 to 100000, got 0 @ \$\.retrieval"):
        resolve(table, _REGISTRIES)


def test_unknown_component_lists_registered_names() -> None:
    table = {**MINIMAL, "retrieval": {"seed": [{"type": "baseline.hybird"}]}}
    with pytest.raises(ConfigError) as info:
        resolve(table, _REGISTRIES)
    msg = str(info.value)
    assert "did you mean 'baseline.hybrid'" in msg and "@ $.retrieval.seed[0].type" in msg
    assert "baseline.bm25" in msg


def test_all_errors_are_reported_at_once() -> None:
    table = {"store": {"type": "memory", "colour": "red"}, "embedder": {"type": "nope"},
             "llm": {"type": "none"}, "extractor": {"type": "baseline.turns", "dated": "yes"}}
    with pytest.raises(ConfigError) as info:
        resolve(table, _REGISTRIES)
    msg = str(info.value)
    assert "unknown option(s) colour @ $.store" in msg
    assert "unknown embedder 'nope'" in msg
    assert "expected true or false, got str 'yes' @ $.extractor.dated" in msg


def test_unknown_top_level_key() -> None:
    with pytest.raises(ConfigError, match="unknown top-level key.*retreival"):
        resolve({**MINIMAL, "retreival": {}}, _REGISTRIES)


def test_preset_with_overrides() -> None:
    config = resolve({"preset": "hybrid", "store": {"type": "memory"},
                      "retrieval": {"seed": [{"type": "baseline.hybrid", "rrf_k": 10}]}},
                     _REGISTRIES)
    assert config.preset == "hybrid"
    assert config.store.type == "memory"
    assert config.embedder.type == "minilm"
    assert config.seeders[0].config.rrf_k == 10


def test_same_type_override_merges_options() -> None:
    merged = merge_tables({"store": {"type": "lancedb", "path": "a", "x": 1}},
                          {"store": {"path": "b"}})
    assert merged == {"store": {"type": "lancedb", "path": "b", "x": 1}}
    replaced = merge_tables({"store": {"type": "lancedb", "path": "a"}},
                            {"store": {"type": "memory"}})
    assert replaced == {"store": {"type": "memory"}}


def test_resolved_config_round_trips_through_its_table() -> None:
    config = resolve({"preset": "hybrid", "store": {"type": "memory"}}, _REGISTRIES)
    again = resolve(config.to_table(), _REGISTRIES)
    assert again == config


def test_string_shorthand_for_components() -> None:
    config = resolve({**MINIMAL, "embedder": "hashing"}, _REGISTRIES)
    assert config.embedder.type == "hashing"


def _unused(_: Registries) -> None:  # keeps the Registries import honest for type checkers
    pass


@attrs.frozen(kw_only=True)
class _RuntimeConfig:
    threads: int = runtime_field(default=2, validator=attrs.validators.ge(1),
                                 metadata={"acme.note": "kept"})
    size: int = attrs.field(default=3)
    nested: ComponentSpec = component_field("acme.kind", "acme.kind.default")


def test_runtime_field_is_an_attrs_field_that_carries_the_marker() -> None:
    fields = attrs.fields_dict(_RuntimeConfig)
    assert runtime_only(fields["threads"])
    assert not runtime_only(fields["size"]) and not runtime_only(fields["nested"])
    assert fields["threads"].metadata["acme.note"] == "kept"  # the caller's metadata stays
    assert _RuntimeConfig().threads == 2
    with pytest.raises(ValueError):
        _RuntimeConfig(threads=0)
    # structured and written like any option
    config = CONVERTER.structure({"threads": 4}, _RuntimeConfig)
    assert config.threads == 4
    assert CONVERTER.unstructure(config)["threads"] == 4
