"""Config bombs: resource options have upper bounds, and no config shape escapes
as a raw Python error (issue #27 items 6, 11, 12)."""

from __future__ import annotations

import math
import typing
from pathlib import Path
from typing import Any

import attrs
import pytest
from attrs.validators import ge, gt, le, lt, optional
from hypothesis import given
from hypothesis import strategies as st

from labile._config import MAX_DEPTH, read_toml, resolve
from labile._errors import ConfigError
from labile._registry import Component
from labile.plugin import bounded, option_range, upper_bound
from labile.testing import make_registries
from labile_cli import main, one_line

_REGISTRIES = make_registries()
CONFIGURED = [c for c in _REGISTRIES.all()
              if isinstance(c.config, type) and attrs.has(c.config) and attrs.fields(c.config)]


def _numbers(comp: Component[Any]) -> list[attrs.Attribute[Any]]:
    """Options that size something: every integer, and every duration in seconds."""
    hints = typing.get_type_hints(comp.config)
    out = []
    for field in attrs.fields(comp.config):
        types = set(typing.get_args(hints[field.name])) or {hints[field.name]}
        if int in types or (float in types and field.name.endswith("_s")):
            out.append(field)
    return out


def test_the_registry_has_options_to_check() -> None:
    assert sum(len(_numbers(c)) for c in CONFIGURED) > 60


@pytest.mark.parametrize("comp", CONFIGURED, ids=lambda c: f"{c.kind}:{c.name}")
def test_every_resource_option_has_an_upper_bound(comp: Component[Any]) -> None:
    unbounded = [f.name for f in _numbers(comp) if upper_bound(f) is None]
    assert not unbounded, f"{comp.name}: options without an upper bound: {unbounded}"


@pytest.mark.parametrize("comp", CONFIGURED, ids=lambda c: f"{c.kind}:{c.name}")
def test_every_default_is_within_its_bounds(comp: Component[Any]) -> None:
    default = comp.config()
    for field in _numbers(comp):
        value = getattr(default, field.name)
        low, high = option_range(field)
        assert value is None or high is None or value <= high
        assert value is None or low is None or value >= low


def test_option_range_reads_every_kind_of_bound() -> None:
    @attrs.define
    class Options:
        size: int = attrs.field(default=1, validator=bounded(1, 9))
        share: float = attrs.field(default=0.5, validator=[ge(0.0), le(1.0)])
        band: float = attrs.field(default=1.0, validator=gt(0.0))
        cap: int | None = attrs.field(default=None, validator=optional(lt(10)))
        name: str = "x"

    ranges = {f.name: option_range(f) for f in attrs.fields(Options)}
    assert ranges == {"size": (1, 9), "share": (0.0, 1.0), "band": (0.0, None),
                      "cap": (None, 10), "name": (None, None)}
    assert [upper_bound(f) for f in attrs.fields(Options)] == [9, 1.0, None, 10, None]


def test_the_component_reference_shows_the_allowed_range() -> None:
    from labile_io.render import components_markdown

    page = components_markdown(_REGISTRIES, ["embedder"])
    assert "| `threads` | `int` | `2` | 1 to 256 |" in page


def _check(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> tuple[int, str]:
    cfg = tmp_path / "c.toml"
    cfg.write_text(text)
    code = main(["check", str(cfg)])
    return code, capsys.readouterr().err


def test_a_million_threads_fails_check(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _check(tmp_path, capsys, '[embedder]\ntype = "minilm"\nthreads = 1000000\n')
    assert code == 2
    assert "threads must be a number from 1 to 256, got 1000000 @ $.embedder" in err


def test_every_bad_bound_is_reported_at_once(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _check(tmp_path, capsys, '[embedder]\ntype = "minilm"\nthreads = 1000000\n'
                       'batch_size = 0\n[store]\ntype = "lancedb"\npath = "x"\n'
                       'lock_timeout_s = 1e300\n')
    assert code == 2 and err.count("; ") == 2, err
    assert "batch_size must be a number from 1 to 4096, got 0" in err
    assert "lock_timeout_s must be a number from 0.0 to 86400.0, got 1e+300 @ $.store" in err


@given(low=st.integers(-1000, 1000), span=st.integers(0, 1000),
       value=st.one_of(st.integers(-3000, 3000), st.floats(allow_nan=True)))
def test_bounded_accepts_exactly_its_range(low: int, span: int, value: float) -> None:
    """`bounded(low, high)` accepts a number iff low <= number <= high (never NaN)."""
    @attrs.frozen
    class Options:
        n: float = attrs.field(validator=bounded(low, low + span))

    inside = not math.isnan(value) and low <= value <= low + span
    if inside:
        assert Options(value).n == value
    else:
        with pytest.raises(ValueError, match=rf"n must be a number from {low} to {low + span}"):
            Options(value)


def test_bounded_refuses_an_empty_range() -> None:
    with pytest.raises(ValueError, match="low must not exceed high"):
        bounded(2, 1)


def test_empty_store_path_fails_check(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _check(tmp_path, capsys, '[store]\ntype = "lancedb"\npath = ""\n')
    assert code == 2 and "path is empty" in err and 'path = "memory://"' in err


@pytest.mark.parametrize("text", [
    "a = " + "[" * 5000 + "]" * 5000,
    "a = " + "{b = " * 5000 + "1" + "}" * 5000,
    "[" + ".".join(["a"] * 5000) + "]\nx = 1\n",
], ids=["arrays", "inline-tables", "dotted-tables"])
def test_deep_toml_is_a_config_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     text: str) -> None:
    code, err = _check(tmp_path, capsys, text)
    assert code == 2
    assert err.startswith("error: ") and "RecursionError" not in err
    assert f"at most {MAX_DEPTH}" in err


def test_deep_python_table_is_a_config_error() -> None:
    table: dict[str, Any] = {}
    inner = table
    for _ in range(5000):
        inner["a"] = {}
        inner = inner["a"]
    with pytest.raises(ConfigError, match=rf"more than {MAX_DEPTH} levels"):
        resolve({"store": table}, _REGISTRIES)


def test_legitimate_nesting_is_within_the_limit(tmp_path: Path) -> None:
    cfg = tmp_path / "ok.toml"
    cfg.write_text('[[retrieval.seed]]\ntype = "realm.hybrid_match"\n'
                   '[retrieval.seed.planner]\ntype = "realm.seed_planner.offline"\n')
    assert read_toml(cfg)["retrieval"]["seed"][0]["planner"]["type"]


def test_one_line_keeps_problems_apart() -> None:
    assert one_line("invalid config:\n  a @ $.x\n  b @ $.y") == "invalid config: a @ $.x; b @ $.y"
