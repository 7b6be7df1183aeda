"""A store remembers its pipeline: reopening uses it, another stored shape is refused."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from labile import ConfigError, Memory, StoreError
from labile._recorded import RECORD

HASHING = {"embedder": {"type": "hashing"}}


def _open(path: Path, **table: object) -> Memory:
    return Memory.open({**HASHING, **table}, path=path)


def test_a_new_store_records_its_pipeline_and_reopening_without_config_uses_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s"
    with _open(path, preset="bm25"):
        pass
    record = json.loads((path / RECORD).read_text())
    assert record["pipeline"]["preset"] == "bm25"
    assert record["shape"]["extractor"]["type"] == "baseline.turns"
    with Memory.open(path=path) as memory:
        assert memory.config.preset == "bm25"
        assert memory.embedder.name.startswith("hashing")


def test_another_stored_shape_is_refused_naming_both(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with _open(path, preset="bm25"):
        pass
    with pytest.raises(ConfigError, match=r"'bm25'.*'realm'.*extractor: stored"):
        _open(path, preset="realm")
    assert json.loads((path / RECORD).read_text())["pipeline"]["preset"] == "bm25"


def test_differences_in_reading_are_allowed_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "s"
    with _open(path, preset="realm"):
        pass
    caplog.set_level(logging.INFO, logger="labile")
    with _open(path, preset="realm", retrieval={"expand": []}) as memory:
        assert memory.expanders == []
    assert any("pipeline_differs_in_reading" in r.getMessage() for r in caplog.records)


def test_read_only_opening_of_a_missing_store_fails_and_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "typo"
    with pytest.raises(StoreError, match="no store at"):
        Memory.open({**HASHING, "preset": "bm25"}, path=path, create=False)
    assert not path.exists()


def test_an_unreadable_record_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s"
    path.mkdir()
    (path / RECORD).write_text("{not json")
    with pytest.raises(StoreError, match="unreadable pipeline record"):
        Memory.open(path=path)
