"""A store remembers its pipeline: reopening uses it, another stored shape is refused."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import attrs
import pytest

from labile import ConfigError, Memory, PipelineConfig, StoreError
from labile._recorded import RECORD, _recorded_shape, shape
from labile.plugin import ComponentSpec, component_field, runtime_field
from labile_offline.minilm import MiniLMConfig

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


# -- runtime-only options (`labile.plugin.runtime_field`) -------------------------------------

MINILM = {"type": "minilm"}


def _write_old_record(path: Path, **embedder: object) -> None:
    """Rewrite the record as a build from before runtime-only options wrote it: the embedder's
    threads and batch size in its shape as well as in its pipeline."""
    record = json.loads((path / RECORD).read_text())
    record["pipeline"]["embedder"].update(embedder)
    record["shape"]["embedder"] = record["pipeline"]["embedder"]  # the full table, as then
    (path / RECORD).write_text(json.dumps(record, indent=2))


def _store_with_old_record(tmp_path: Path, **options: int) -> Path:
    """A bm25 store whose record is written as before runtime-only options existed."""
    path = tmp_path / "s"
    with _open(path, preset="bm25", embedder=MINILM):
        pass
    _write_old_record(path, **options)
    return path


def test_runtime_only_options_leave_the_recorded_shape(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with _open(path, preset="bm25", embedder={**MINILM, "threads": 1}):
        pass
    record = json.loads((path / RECORD).read_text())
    assert record["shape"]["embedder"] == {"type": "minilm", "max_tokens": 256}
    # the pipeline stays the one that built the store, threads and all
    assert record["pipeline"]["embedder"]["threads"] == 1


def test_a_store_recorded_with_other_threads_and_batch_size_opens_with_the_defaults(
    tmp_path: Path,
) -> None:
    path = _store_with_old_record(tmp_path, threads=1, batch_size=64)
    with _open(path, preset="bm25", embedder=MINILM) as memory:
        assert memory.config.single("embedder").config == MiniLMConfig()
    with _open(path, preset="bm25", embedder={**MINILM, "threads": 3, "batch_size": 2}):
        pass


def test_another_max_tokens_is_still_refused_and_the_message_keeps_its_form(
    tmp_path: Path,
) -> None:
    path = _store_with_old_record(tmp_path, threads=1, batch_size=64)
    with pytest.raises(ConfigError) as info:
        _open(path, preset="bm25", embedder={**MINILM, "max_tokens": 128})
    assert str(info.value) == (
        f"the store at {path} was built by pipeline 'bm25' and this one ('bm25') would store "
        "different things: embedder: stored {'type': 'minilm', 'max_tokens': 256}, asked "
        "{'type': 'minilm', 'max_tokens': 128}. Open it without a config (or with its own) "
        "to use it")


def test_another_embedder_type_is_still_refused_with_its_recorded_options(
    tmp_path: Path,
) -> None:
    path = _store_with_old_record(tmp_path, batch_size=64)
    # the recorded table names another type: none of its options is stripped
    with pytest.raises(ConfigError, match=r"embedder: stored \{'type': 'minilm', 'threads': 2, "
                                          r"'batch_size': 64, 'max_tokens': 256\}, asked "
                                          r"\{'type': 'hashing'"):
        _open(path, preset="bm25")


@attrs.frozen(kw_only=True)
class _InnerConfig:
    workers: int = runtime_field(default=1)
    depth: int = 2


@attrs.frozen(kw_only=True)
class _OuterConfig:
    threads: int = runtime_field(default=2)
    size: int = 3
    inner: ComponentSpec = component_field("acme.inner", "acme.inner")


@attrs.frozen(kw_only=True)
class _RuntimeOnlyConfig:
    workers: int = runtime_field(default=1)


def _consolidators(*types: str, threads: int = 2, workers: int = 1,
                   inner: ComponentSpec | None = None) -> PipelineConfig:
    inner = inner or ComponentSpec(kind="acme.inner", type="acme.inner",
                                   config=_InnerConfig(workers=workers))
    return PipelineConfig(
        store=ComponentSpec(kind="store", type="memory"),
        embedder=ComponentSpec(kind="embedder", type="hashing"),
        llm=ComponentSpec(kind="llm", type="none"),
        extractor=ComponentSpec(kind="extractor", type="baseline.turns"),
        consolidators=tuple(
            ComponentSpec(kind="consolidator", type=t,
                          config=_OuterConfig(threads=threads, inner=inner)) for t in types))


def _json(value: object) -> Any:
    return json.loads(json.dumps(value))


def test_list_kinds_and_nested_components_lose_runtime_options_element_by_element() -> None:
    config = _consolidators("acme.a", "acme.b")
    ours = _json(shape(config))
    assert ours["consolidator"] == [
        {"type": t, "size": 3, "inner": {"type": "acme.inner", "depth": 2}}
        for t in ("acme.a", "acme.b")]
    # an old record of the same consolidators run with other runtime options
    old = _consolidators("acme.a", "acme.b", threads=5, workers=4)
    written = _json({"store": "memory",
                     "consolidator": [s.to_table() for s in old.listed("consolidator")]})
    assert _recorded_shape(written, config)["consolidator"] == ours["consolidator"]
    # another type in second place keeps its recorded options, and an extra element stays
    other = _consolidators("acme.a", "acme.c", "acme.d", threads=5, workers=4)
    written = _json({"store": "memory",
                     "consolidator": [s.to_table() for s in other.listed("consolidator")]})
    theirs = _recorded_shape(written, config)["consolidator"]
    assert theirs[0] == ours["consolidator"][0]
    assert theirs[1]["threads"] == 5 and theirs[1]["inner"]["workers"] == 4
    assert len(theirs) == 3 and theirs[2]["threads"] == 5


def test_a_nested_component_left_without_options_compares_as_its_name() -> None:
    bare = ComponentSpec(kind="acme.inner", type="acme.inner")  # a name given in Python
    recorded = _json(shape(_consolidators("acme.a", inner=bare)))
    assert recorded["consolidator"][0]["inner"] == "acme.inner"
    resolved = _consolidators("acme.a", inner=attrs.evolve(bare, config=_RuntimeOnlyConfig()))
    assert _json(shape(resolved)) == _recorded_shape(recorded, resolved) == recorded


def test_an_option_added_after_the_store_was_built_compares_as_its_default(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s"
    with _open(path, preset="realm"):
        pass
    record = json.loads((path / RECORD).read_text())
    # a record written by a build whose extractor lacked one of today's options
    option = sorted(k for k in record["shape"]["extractor"] if k != "type")[0]
    for part in (record["shape"], record["pipeline"]):
        del part["extractor"][option]
    (path / RECORD).write_text(json.dumps(record))
    with Memory.open(path=path) as memory:
        assert memory.config.preset == "realm"
    with _open(path, preset="realm"):
        pass
    # the option at another value than its default is still another shape (written in
    # both parts, as a build would: a pipeline table alone is read anew through today's rules)
    for part in (record["shape"], record["pipeline"]):
        part["extractor"][option] = "not-the-default"
    (path / RECORD).write_text(json.dumps(record))
    with pytest.raises(ConfigError, match="extractor: stored"):
        _open(path, preset="realm")
