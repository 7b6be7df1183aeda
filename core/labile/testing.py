"""Helpers for testing labile and its plugins (ours and third parties').

``make_deps`` builds the `Deps` a component factory receives, with an
in-memory store, the ``hashing`` embedder and (optionally) an LLM client such
as ``labile_llm.ScriptedLLM``, so a single component can be tested without a
whole pipeline.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from labile._convert import ComponentSpec
from labile._memstore import MemoryStore
from labile._model import Observation
from labile._nollm import NoLLM
from labile._plugins import get_plugin_manager
from labile._protocols import CoreDeps, Deps, Embedder, LLMClient, Store
from labile._registry import Registries, collect
from labile._schema import CheckedStore, Schema
from labile._store_contract import StoreContract
from labile._usage import UsageMeter

__all__ = ["MemoryStore", "StoreContract", "make_deps", "make_registries", "observations"]


def make_registries(*plugins: object, entry_points: bool = True) -> Registries:
    """Registries of a fresh plugin manager plus ``plugins`` registered directly."""
    return collect(get_plugin_manager(entry_points=entry_points, extra=plugins))


def make_deps(
    *,
    registries: Registries | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
    llm: LLMClient | None = None,
) -> Deps:
    """`Deps` for testing one component: in-memory store, ``hashing`` embedder, no LLM.

    The store is wrapped in `CheckedStore`, as in a real pipeline. A `Deps` is
    also a `StoreDeps` and a `CoreDeps`, so it serves store, embedder and LLM
    factories too.
    """
    registries = registries or make_registries()
    schema = Schema.from_registries(registries)
    core = CoreDeps(schema=schema, usage=UsageMeter(), registries=registries)
    if getattr(llm, "usage", False) is None:
        # A client without a meter (a scripted one, say) records into this one.
        llm.usage = core.usage  # type: ignore[union-attr]
    return Deps(
        embedder=embedder or _bundled(core, "embedder", "hashing"),
        llm=llm or NoLLM(),
        schema=schema,
        usage=core.usage,
        registries=registries,
        store=CheckedStore(store or MemoryStore(), schema),
    )


def _bundled(deps: CoreDeps, kind: str, name: str) -> Any:
    """The bundled component ``name``, built from ``deps``' registries or, when a test
    built them without entry points, from the installed bundles (the ``hashing``
    embedder ships in ``labile_offline``)."""
    registries = deps.registries if name in deps.registries[kind] else _installed()
    return registries.build(ComponentSpec(kind=kind, type=name), deps)


@functools.cache
def _installed() -> Registries:
    return make_registries()


def observations(
    texts: Iterable[str | tuple[str, str]],
    *,
    start: datetime = datetime(2024, 1, 1, 9, 0, tzinfo=UTC),
    step: timedelta = timedelta(minutes=1),
    session: str = "s1",
    prefix: str = "o",
    **extra: Any,
) -> list[Observation]:
    """Observations from texts (or ``(speaker, text)`` pairs), one ``step`` apart."""
    out = []
    for i, item in enumerate(texts):
        speaker, text = item if isinstance(item, tuple) else (None, item)
        out.append(Observation(id=f"{prefix}{i + 1}", text=text, speaker=speaker,
                               timestamp=start + i * step, session=session, **extra))
    return out
