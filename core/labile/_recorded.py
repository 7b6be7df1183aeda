"""A store remembers the pipeline that built it: ``labile-pipeline.json`` in its directory.

At creation the resolved pipeline is recorded next to the data. Opening the
directory without a config uses it; opening it with a pipeline that would
store other things (another store type, embedder, extractor or consolidators:
the *stored shape*) is refused, naming both; other differences only change how
the store is read (seeders, expanders, filters, reconsolidators, ``k``, the LLM)
and are allowed and logged. Runtime-only options (`labile._convert.runtime_field`:
an embedder's threads or batch size) are no part of the shape, and are also left
out of a record written before they were marked. An option added to a shape
component after a store was built compares as its default, so adding one (with
the old behaviour as its default) never locks older stores out. Stores without a
directory (in memory) record nothing.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from labile._config import PipelineConfig, resolve
from labile._convert import CONVERTER, ComponentSpec, runtime_only
from labile._errors import ConfigError, StoreError
from labile._logconfig import get_logger

if TYPE_CHECKING:
    from labile._registry import Registries

log = get_logger(__name__)

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
    """What decides the stored data: the store's type and the shape kinds' full specs,
    without their runtime-only options."""
    out: dict[str, Any] = {"store": config.single("store").type}
    for kind in SHAPE_KINDS:
        value = config.components.get(kind)
        if isinstance(value, ComponentSpec):
            out[kind] = _stored(value.to_table(), value)
        elif value is not None:
            out[kind] = [_stored(s.to_table(), s) for s in value]
    return out


def _recorded_shape(recorded: dict[str, Any], config: PipelineConfig) -> dict[str, Any]:
    """A recorded shape without the runtime-only options of ``config``'s components: a
    record written before an option was marked runtime-only still holds it."""
    out = dict(recorded)
    for kind in SHAPE_KINDS:
        value, written = config.components.get(kind), out.get(kind)
        if isinstance(value, ComponentSpec):
            out[kind] = _stored(written, value)
        elif value is not None and isinstance(written, list):
            # element by element; extra recorded elements stay and differ anyway
            out[kind] = [_stored(w, s) for w, s in zip(written, value, strict=False)] + \
                written[len(value):]
    return out


def _stored(written: Any, spec: ComponentSpec) -> Any:
    """``written`` (a spec as written: a name or a table) without the runtime-only options
    of ``spec``'s config class, nested components' included; as it is when it names
    another type, so that another component still differs."""
    config = spec.config
    if not isinstance(written, dict) or written.get("type") != spec.type \
            or not attrs.has(type(config)):
        return written
    out = dict(written)
    defaults = _defaults(type(config))
    for field in attrs.fields(type(config)):
        nested = getattr(config, field.name)
        if runtime_only(field):
            out.pop(field.name, None)
            continue
        if field.name not in out and field.name in defaults:
            # an option added after the store was built: the store was built the way
            # its default behaves (a new shape option must default to the old behaviour)
            out[field.name] = defaults[field.name]
        elif isinstance(nested, ComponentSpec) and field.name in out:
            inner = _stored(out[field.name], nested)
            # written as a bare name once no option is left, as `ComponentSpec.to_ref` does
            out[field.name] = inner["type"] if isinstance(inner, dict) and len(inner) == 1 \
                else inner
    return out


def _defaults(config_class: type) -> dict[str, Any]:
    """Every option of ``config_class`` at its default, as a table (empty when the class
    cannot be built without arguments)."""
    try:
        blank = config_class()
    except TypeError:
        return {}
    table: dict[str, Any] = CONVERTER.unstructure(blank)
    return table


def check_recorded(
    config: PipelineConfig, *, create: bool = True, registries: Registries | None = None
) -> bool:
    """Refuse a pipeline whose stored shape differs from the store's record (before
    building it); returns whether the store still has to be recorded (`record`).

    Raises:
        ConfigError: the shapes differ (the message names both), read as
            recorded and, with ``registries``, as resolved anew.
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
    recorded, ours = found["pipeline"], _plain(shape(config))
    theirs = _recorded_shape(found["shape"], config)
    if theirs != ours and registries is not None:
        # written before some options moved (`labile._convert.move_options`): read it anew
        with contextlib.suppress(ConfigError):
            if _recorded_shape(_plain(shape(resolve(recorded, registries))), config) == ours:
                theirs = ours
    if theirs != ours:
        differ = sorted(k for k in {*theirs, *ours} if theirs.get(k) != ours.get(k))
        raise ConfigError(
            f"the store at {directory} was built by pipeline {recorded.get('preset')!r} and "
            f"this one ({config.preset!r}) would store different things: "
            + "; ".join(f"{k}: stored {theirs.get(k)!r}, asked {ours.get(k)!r}" for k in differ)
            + ". Open it without a config (or with its own) to use it")
    reading = _reading_parts(recorded, _plain(config.to_table()))
    if reading:
        log.info("pipeline_differs_in_reading", path=str(directory), differs=reading,
                 recorded=recorded.get("preset"), opened=config.preset)
    return False


def _reading_parts(recorded: dict[str, Any], opened: dict[str, Any]) -> list[str]:
    """The top-level tables in which two pipelines of one shape differ, but the store's
    path: the same store named another way (relative, ``~``, another mount) is not a
    different pipeline, and logging it on every open was noise."""
    def without_path(table: dict[str, Any]) -> dict[str, Any]:
        store = table.get("store")
        if isinstance(store, dict):
            return {**table, "store": {k: v for k, v in store.items() if k != "path"}}
        return table

    a, b = without_path(recorded), without_path(opened)
    return sorted(k for k in {*a, *b} if a.get(k) != b.get(k))


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
