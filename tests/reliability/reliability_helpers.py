"""Helpers of the reliability tests: what a memory holds, and failures to inject."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from labile import Memory
from labile._model import Observation
from labile.plugin import build_registries

OFFLINE_PRESETS = sorted(
    c.name for c in build_registries()["preset"] if not c.name.endswith("-llm")
)
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
LINES = ["I adopted a cat named Miso.", "We moved to Porto last spring.",
         "My sister Lena plays the cello.", "Miso knocked over the plant again.",
         "Lena's concert is on Friday because she practised all winter.",
         "Porto is rainy in November.", "Did you go to Lena's concert?",
         "Yes, Miso stayed with our neighbour Rui."]


def turns(start: int, count: int, *, prefix: str = "t") -> list[Observation]:
    """``count`` turns from ``start``: two speakers, a new session every 4 turns."""
    return [Observation(id=f"{prefix}{i}", text=LINES[i % len(LINES)],
                        speaker=("Ana", "Ben")[i % 2], session=f"s{i // 4}",
                        timestamp=T0 + timedelta(days=i // 4, minutes=i))
            for i in range(start, start + count)]


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())
                if k not in _CLOCKED and not k.endswith("ms")}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 6)
    return value


#: Attributes stamped from the clock (and durations, ``…ms``): they differ
#: between two runs by design.
_CLOCKED = frozenset({"at", "updated_at", "created_at", "last_used", "last_accessed"})


def graph(memory: Memory, namespace: str) -> dict[str, Any]:
    """Everything a namespace holds, clock stamps aside: observations, nodes, edges."""
    store = memory.store
    nodes = {}
    for n in store.iter_nodes(namespace):
        vector = None if n.embedding is None else np.round(np.asarray(n.embedding), 5).tolist()
        nodes[n.id] = _plain({"kind": n.kind, "content": n.content,
                              "description": n.description, "keywords": list(n.keywords),
                              "sources": list(n.sources), "visible": n.visible,
                              "attrs": n.attrs, "vector": vector,
                              # a time taken from the clock (a run record's) is a stamp
                              "time": None if n.time_start == n.created_at
                              else str(n.time_start), "end": str(n.time_end)})
    edges = {e.id: _plain({"src": e.src, "dst": e.dst, "predicate": e.predicate,
                           "weight": e.weight, "attrs": e.attrs, "origin": str(e.origin)})
             for e in store.iter_edges(namespace)}
    observations = [(o.id, o.text, o.speaker, o.session, str(o.timestamp))
                    for o in store.iter_observations(namespace)]
    return {"observations": observations, "nodes": nodes, "edges": edges}


def ranking(memory: Memory, namespace: str, queries: list[str]) -> list[list[tuple[str, float]]]:
    """The ranked ids and scores of each query (rounded)."""
    return [[(h.node.id, round(h.score, 6)) for h in memory.search(q, namespace=namespace,
                                                                   k=5).hits]
            for q in queries]


class Injected(Exception):
    """The failure a test injects."""


#: Store calls a failure can be injected into (reads and writes).
STORE_CALLS = ("add_observations", "upsert_nodes", "upsert_edges", "get_nodes",
               "iter_nodes", "edges_of", "vector_search", "text_search",
               "iter_observations", "delete")


@contextmanager
def failing_store(memory: Memory, *, at: int, kind: str) -> Iterator[list[int]]:
    """Make the ``at``-th store call (or, with ``kind="commit"``, the batch's commit)
    fail while the block runs; yields a one-item list with the number of calls seen.

    ``kind``: ``"error"`` raises `Injected`, ``"interrupt"`` raises
    `KeyboardInterrupt`, ``"commit"`` lets every call through and fails the
    outermost batch as it ends, so the store rolls everything back.
    """
    store = memory.store
    seen = [0]
    saved: dict[str, Any] = {}

    def wrap(name: str) -> Any:
        real = getattr(store, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            seen[0] += 1
            if kind != "commit" and seen[0] == at:
                raise KeyboardInterrupt if kind == "interrupt" else Injected(name)
            return real(*args, **kwargs)

        return call

    real_batch = store.batch
    depth = [0]

    @contextmanager
    def batch(namespace: str) -> Iterator[None]:
        with real_batch(namespace):
            depth[0] += 1
            try:
                yield
            finally:
                depth[0] -= 1
            if kind == "commit" and depth[0] == 0:
                raise Injected("commit")

    for name in STORE_CALLS:
        saved[name] = store.__dict__.get(name)
        setattr(store, name, wrap(name))
    store.batch = batch  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        for name in (*STORE_CALLS, "batch"):
            store.__dict__.pop(name, None)


def pick(rng: random.Random, kinds: tuple[str, ...] = ("error", "interrupt", "commit"),
         calls: int = 12) -> tuple[str, int]:
    """A random failure: its kind and the store call it hits."""
    return rng.choice(kinds), rng.randint(1, calls)
