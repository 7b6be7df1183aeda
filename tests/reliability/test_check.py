"""`labile check` reports every configuration problem at once, in one clean error."""

from __future__ import annotations

from pathlib import Path

import pytest

from labile_cli import main


def _check(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str]:
    code = main(["check", str(path)])
    return code, capsys.readouterr().err


def test_a_non_utf8_file_is_one_clear_error(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "latin1.toml"
    cfg.write_bytes('preset = "hybrid"\n# café\n'.encode("latin-1"))
    code, err = _check(capsys, cfg)
    assert code == 2
    assert err.startswith("error: ") and "not UTF-8" in err and "Traceback" not in err


def test_every_out_of_range_value_is_reported_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('preset = "hybrid"\n[store]\ntype = "lancedb"\nnprobes = 0\n'
                   'refine_factor = -3\nfts_language = "Klingon"\n')
    code, err = _check(capsys, cfg)
    assert code == 2
    for field in ("nprobes", "refine_factor", "fts_language"):
        assert field in err, f"{field} not reported in {err!r}"
    assert "'English'" in err  # the allowed languages are named


def test_disabling_an_unknown_plugin_names_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "disable.toml"
    cfg.write_text('preset = "hybrid"\n[plugins]\ndisable = ["no_such_plugin"]\n')
    code, err = _check(capsys, cfg)
    assert code == 2
    assert "unknown plugin 'no_such_plugin' @ $.plugins.disable" in err
    assert "realm" in err  # an installed plugin is listed


def test_disabling_an_installed_plugin_still_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "ok.toml"
    cfg.write_text('preset = "hybrid"\n[plugins]\ndisable = ["realm"]\n')
    assert main(["check", str(cfg)]) == 0
