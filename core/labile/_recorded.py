"""A store remembers the pipeline that built it: ``labile-pipeline.json`` in its directory.

At creation the resolved pipeline is recorded next to the data. Opening the
directory without a config uses it; opening it with a pipeline that would
store other things (another store type, embedder, extractor or consolidators:
the *stored shape*) is refused, naming both; other differences only change how
the store is read (seeders, expanders, filters, reconsolidators, ``k``, the LLM)
and are allowed and logged. Stores without a directory (in memory) record nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import structlog

from labile._config import PipelineConfig, resolve
from labile._convert import ComponentSpec
from labile._errors import ConfigError, StoreError

if TYPE_CHECKING:
    from labile._registry import Registries

log = structlog.get_logger(__name__)

RECORD: Final = "labile-pipeline.json"
RECORD_FORMAT: Final = 1
#: The kinds whose components decide what a store holds.
SHAPE_KINDS: Final = ("embedder", "extractor", "consolidator")


def store_dir(config: PipelineConfig) -> Path | None:
    """The local directory of the pipeline's store, if it has one."""
    path = getattr(config.single("store").config, "path", None)
    if not isinstance(path, str) or not path or "://" in path:
        return None
    return Path(path).expanduser()


def holds_store(directory: Path) -> bool:
    """Whether ``directory`` holds a store (recorded, or written by an older build)."""
    return (directory / RECORD).is_file() or (directory.is_dir() and any(directory.iterdir()))


def read_record(directory: Path) -> dict[str, Any] | None:
    """The record in ``directory`` (``pipeline``: the resolved table; ``shape``), or ``None``.

    Raises:
        StoreError: the record is unreadable.
    """
    record = directory / RECORD
    if not record.is_file():
        return None
    try:
        data: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
        if not isinstance(data.get("pipeline"), dict) or not isinstance(data.get("shape"), dict):
            raise ValueError("'pipeline' and 'shape' must be tables")
    except (OSError, ValueError) as exc:
        raise StoreError(f"{record}: unreadable pipeline record ({exc})") from None
    return data


def shape(config: PipelineConfig) -> dict[str, Any]:
    """What decides the stored data: the store's type and the shape kinds' full specs."""
    out: dict[str, Any] = {"store": config.single("store").type}
    for kind in SHAPE_KINDS:
        value = config.components.get(kind)
        if isinstance(value, ComponentSpec):
            out[kind] = value.to_table()
        elif value is not None:
            out[kind] = [s.to_table() for s in value]
    return out


def check_recorded(config: PipelineConfig, *, create: bool = True) -> bool:
    """Refuse a pipeline whose stored shape differs from the store's record (before
    building it); returns whether the store still has to be recorded (`record`).

    Raises:
        ConfigError: the shapes differ (the message names both).
        StoreError: ``create`` is false and the directory holds no store.
    """
    directory = store_dir(config)
    if directory is None:
        return False
    if not create and not holds_store(directory):
        raise StoreError(f"no store at {directory}: nothing to read (a writing command such "
                         "as `labile add` creates one)")
    found = read_record(directory)
    if found is None:
        return True
    recorded, theirs, ours = found["pipeline"], found["shape"], _plain(shape(config))
    if theirs != ours:
        differ = sorted(k for k in {*theirs, *ours} if theirs.get(k) != ours.get(k))
        raise ConfigError(
            f"the store at {directory} was built by pipeline {recorded.get('preset')!r} and "
            f"this one ({config.preset!r}) would store different things: "
            + "; ".join(f"{k}: stored {theirs.get(k)!r}, asked {ours.get(k)!r}" for k in differ)
            + ". Open it without a config (or with its own) to use it")
    if recorded != _plain(config.to_table()):
        log.info("pipeline_differs_in_reading", path=str(directory),
                 recorded=recorded.get("preset"), opened=config.preset)
    return False


def record(config: PipelineConfig) -> None:
    """Write the pipeline's record into its store directory (after the store was built)."""
    directory = store_dir(config)
    if directory is None or not directory.is_dir():
        return  # the store keeps its data elsewhere: there is nothing to record into
    found = {"format": RECORD_FORMAT, "pipeline": _plain(config.to_table()),
             "shape": _plain(shape(config))}
    (directory / RECORD).write_text(json.dumps(found, indent=2), encoding="utf-8")


def _plain(value: Any) -> Any:
    # JSON-shaped, as it reads back from the record (tuples become lists).
    return json.loads(json.dumps(value, default=str))


def recorded_pipeline(default: PipelineConfig, registries: Registries) -> PipelineConfig | None:
    """The pipeline recorded in ``default``'s store directory, pointed at that directory."""
    directory = store_dir(default)
    found = read_record(directory) if directory is not None else None
    if found is None:
        return None
    table = dict(found["pipeline"])
    table["store"] = {**table.get("store", {}), "path": str(directory)}
    return resolve(table, registries)
