"""Options that moved from a host into its nested component still read from the host's table."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile._convert import move_options
from labile.plugin import ComponentSpec, component_field


@attrs.frozen(kw_only=True)
class _Host:
    size: int = 3
    weak: float = 0.5  # still the host's own option, and the rules' too
    rules: ComponentSpec = component_field("acme.rules", "acme.rules.offline",
                                           moved=("bar", "weak", "gone"))
    writer: ComponentSpec = component_field("acme.writer", "acme.writer.offline",
                                            moved={"writer_options": "options"})
    other: ComponentSpec = component_field("acme.other", "acme.other.x")


#: What each registered component of the test takes.
_TAKES = {"acme.rules.offline": {"bar", "weak"}, "acme.rules.llm": set(),
          "acme.writer.offline": {"options"}}


def _options_of(_kind: str, name: str) -> Collection[str] | None:
    return _TAKES.get(name)


def test_a_moved_key_lands_in_the_component_the_host_names() -> None:
    moved = move_options({"size": 4, "bar": 0.7, "rules": "acme.rules.offline"}, _Host,
                         _options_of)
    assert moved == {"size": 4, "rules": {"type": "acme.rules.offline", "bar": 0.7},
                     "writer": {"type": "acme.writer.offline"}}


def test_the_default_component_takes_it_when_the_host_names_none() -> None:
    moved = move_options({"bar": 0.7}, _Host, _options_of)
    assert moved["rules"] == {"type": "acme.rules.offline", "bar": 0.7}


def test_a_renamed_key_lands_under_its_new_name() -> None:
    moved = move_options({"writer_options": {"k": 1}}, _Host, _options_of)
    assert moved["writer"] == {"type": "acme.writer.offline", "options": {"k": 1}}
    assert "writer_options" not in moved


def test_a_component_that_does_not_take_a_key_leaves_it_out() -> None:
    """As before the move: the host passed it to a component that never read it."""
    moved = move_options({"bar": 0.7, "gone": 1, "rules": "acme.rules.llm"}, _Host, _options_of)
    assert moved["rules"] == {"type": "acme.rules.llm"}
    assert "bar" not in moved and "gone" not in moved


def test_a_key_the_host_still_has_is_copied_not_moved() -> None:
    moved = move_options({"weak": 0.2}, _Host, _options_of)
    assert moved["weak"] == 0.2
    assert moved["rules"] == {"type": "acme.rules.offline", "weak": 0.2}
    # written back and read again, the component's own value stands
    again = move_options({"weak": 0.2, "rules": {"type": "acme.rules.offline", "weak": 0.9}},
                         _Host, _options_of)
    assert again["rules"]["weak"] == 0.9 and again["weak"] == 0.2


def test_a_key_given_in_both_places_is_an_error_naming_where_it_belongs() -> None:
    with pytest.raises(ValueError, match="'bar' is given twice") as info:
        move_options({"bar": 0.7, "rules": {"type": "acme.rules.offline", "bar": 0.6}}, _Host,
                     _options_of)
    assert "rules = {type = 'acme.rules.offline', bar = …}" in str(info.value)


def test_an_unknown_component_takes_what_the_host_lost_and_copies_nothing() -> None:
    moved = move_options({"bar": 0.7, "weak": 0.2, "rules": "acme.rules.nope"}, _Host,
                         lambda _kind, _name: None)
    assert moved["rules"] == {"type": "acme.rules.nope", "bar": 0.7}
    assert moved["weak"] == 0.2


def test_components_without_moved_keys_and_other_values_are_left_alone() -> None:
    assert move_options("not a table", _Host, _options_of) == "not a table"
    spec = ComponentSpec(kind="acme.rules", type="acme.rules.llm")
    # a spec built in Python is not a table: it, and the key, are left for structuring
    assert move_options({"rules": spec, "bar": 1.0}, _Host, _options_of) == {
        "rules": spec, "bar": 1.0, "writer": {"type": "acme.writer.offline"}}
    assert "other" not in move_options({}, _Host, _options_of)


_VALUES = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=5))


@given(legacy=st.dictionaries(st.sampled_from(["bar", "weak", "gone", "writer_options"]),
                              _VALUES),
       rules=st.sampled_from(["acme.rules.offline", "acme.rules.llm"]))
def test_moving_is_idempotent_and_keeps_no_lost_key_at_the_host(
    legacy: dict[str, Any], rules: str
) -> None:
    """Read back, a moved table is itself (a store's record compares equal), and the
    host keeps only its own options."""
    once = move_options({**legacy, "rules": rules}, _Host, _options_of)
    assert move_options(once, _Host, _options_of) == once
    assert set(once) <= set(attrs.fields_dict(_Host))
    for key, value in legacy.items():
        new = "options" if key == "writer_options" else key
        target = "writer" if key == "writer_options" else "rules"
        if new in _TAKES[once[target]["type"]]:
            assert once[target][new] == value
        else:
            assert new not in once[target]
