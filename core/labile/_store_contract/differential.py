"""A differential check of the `Store` contract: random writes, compared with the reference.

The deterministic checks in `labile._store_contract.suite` each state one
promise; this one plays a seeded random history of writes against the store
under test and the reference `labile._memstore.MemoryStore` side by side, and
requires every read to agree. The history mixes plain writes, writes the
contract refuses (a repeated observation id, changed node content, an edge to
an unknown node), and batches that commit, fail or are aborted, over two
namespaces. A store that passes keeps insertion order, update-in-place,
refusals and rollbacks exactly as the reference does.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np

from labile._errors import StoreError
from labile._memstore import MemoryStore
from labile._model import Edge, Node, NodeFilter
from labile._protocols import Store
from labile._store_contract.records import DIM, T0, edge, node, obs

__all__ = ["DifferentialChecks"]

_NAMESPACES = ("ns-a", "ns-b")
_STEPS = 100
_Write = Callable[[Store], None]


class _Abort(Exception):
    """Raised inside a batch to roll it back on purpose."""


def _outcome(store: Store, write: _Write) -> str:
    """What a write did: ``ok``, or the name of the exception it raised."""
    try:
        write(store)
    except (StoreError, _Abort) as exc:
        return type(exc).__name__
    return "ok"


class _History:
    """Draws the random writes (from one seed, so every run plays the same history).

    Ids are mostly new or drawn before, so most writes succeed; a few reuse an
    observation id, rewrite a node's content or point an edge at a node never
    written (``ghost``), which the contract refuses.
    """

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.vectors = np.random.default_rng(seed)
        self._obs = 0
        self._nodes: dict[str, int] = {}  # node ids drawn so far, per namespace

    def _obs_id(self) -> int:
        if self._obs and self.rng.random() < 0.1:
            return self.rng.randrange(self._obs)  # probably stored already: refused
        self._obs += 1
        return self._obs - 1

    def _node_id(self, ns: str) -> str:
        drawn = self._nodes.get(ns, 0)
        if drawn and self.rng.random() < 0.6:
            return f"n{self.rng.randrange(drawn)}"
        self._nodes[ns] = drawn + 1
        return f"n{drawn}"

    def _end(self, ns: str) -> str:
        drawn = self._nodes.get(ns, 0)
        if not drawn or self.rng.random() < 0.05:
            return "ghost"
        return f"n{self.rng.randrange(drawn)}"

    def observations(self, ns: str) -> _Write:
        picks = [self._obs_id() for _ in range(self.rng.randint(1, 3))]
        items = [obs(i, f"turn {i} of {ns}", metadata={"n": i}) for i in picks]
        return lambda s: s.add_observations(ns, items)

    def _node(self, ns: str, step: int) -> Node:
        nid = self._node_id(ns)
        timed = self.rng.random() < 0.6
        start = T0 + timedelta(days=self.rng.randrange(30)) if timed else None
        end = start + timedelta(days=self.rng.randrange(3)) if start is not None else None
        content = f"content of {nid}" if self.rng.random() > 0.05 else f"rewritten {step}"
        emb = (None if self.rng.random() < 0.2
               else self.vectors.standard_normal(DIM).astype(np.float32))
        return node(nid, content, kind=self.rng.choice(("fact", "event")),
                    visible=self.rng.random() < 0.75, time_start=start, time_end=end,
                    description=f"seen at step {step}", keywords=(f"k{step % 3}",),
                    embedding=emb, attrs={"step": step, "tags": ["x"]},
                    created_at=T0, updated_at=T0 + timedelta(minutes=step))

    def nodes(self, ns: str, step: int) -> _Write:
        items = [self._node(ns, step) for _ in range(self.rng.randint(1, 3))]
        return lambda s: s.upsert_nodes(ns, items)

    def edges(self, ns: str, step: int) -> _Write:
        items = [edge(self._end(ns), self._end(ns), self.rng.choice(("rel", "likes")),
                      weight=round(self.rng.random(), 3), description=f"step {step}",
                      created_at=T0, updated_at=T0)
                 for _ in range(self.rng.randint(1, 2))]
        return lambda s: s.upsert_edges(ns, items)

    def batch(self, ns: str, step: int) -> _Write:
        parts = [self.plain(ns, step) for _ in range(self.rng.randint(2, 4))]
        abort = self.rng.random() < 0.3

        def write(s: Store) -> None:
            with s.batch(ns):
                for part in parts:
                    part(s)
                if abort:
                    raise _Abort
        return write

    def plain(self, ns: str, step: int) -> _Write:
        kind = self.rng.random()
        if kind < 0.3:
            return self.observations(ns)
        if kind < 0.7:
            return self.nodes(ns, step)
        return self.edges(ns, step)


def _observation_rows(store: Store, ns: str) -> list[tuple[Any, ...]]:
    return [(o.id, o.text, o.timestamp, o.metadata) for o in store.iter_observations(ns)]


def _node_row(n: Node) -> tuple[Any, ...]:
    emb = None if n.embedding is None else tuple(float(x) for x in n.embedding)
    return (n.id, n.namespace, n.kind, n.content, n.description, n.keywords, n.time_start,
            n.time_end, n.created_at, n.updated_at, n.visible, n.sources, n.attrs, emb)


def _edge_row(e: Edge) -> tuple[Any, ...]:
    return (e.id, e.namespace, e.src, e.dst, e.predicate, e.weight, e.description, e.origin,
            e.created_at, e.updated_at, e.attrs)


def _assert_same_reads(store: Store, reference: Store, rng: np.random.Generator) -> None:
    assert store.namespaces() == reference.namespaces()
    filters = [None, NodeFilter(visible=True), NodeFilter(kinds={"event"}),
               NodeFilter(time_range=(T0 + timedelta(days=5), T0 + timedelta(days=12)))]
    for ns in _NAMESPACES:
        assert _observation_rows(store, ns) == _observation_rows(reference, ns), ns
        ids = [f"o{i}" for i in range(80)]
        assert store.existing_observation_ids(ns, ids) == reference.existing_observation_ids(
            ns, ids)
        assert [_node_row(n) for n in store.iter_nodes(ns)] == [
            _node_row(n) for n in reference.iter_nodes(ns)], ns
        assert [_edge_row(e) for e in store.iter_edges(ns)] == [
            _edge_row(e) for e in reference.iter_edges(ns)], ns
        node_ids = [n.id for n in reference.iter_nodes(ns)]
        for direction in ("out", "in", "both"):
            assert [e.id for e in store.edges_of(ns, node_ids, direction=direction)] == [
                e.id for e in reference.edges_of(ns, node_ids, direction=direction)]
        assert [e.id for e in store.edges_of(ns, node_ids, predicates={"likes"})] == [
            e.id for e in reference.edges_of(ns, node_ids, predicates={"likes"})]
        for where in filters:
            assert store.count_nodes(ns, where) == reference.count_nodes(ns, where), where
            q = rng.standard_normal(DIM).astype(np.float32)
            got = store.vector_search(ns, q, 5, where=where)
            want = reference.vector_search(ns, q, 5, where=where)
            assert [n.id for n, _ in got] == [n.id for n, _ in want], where
            np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


class DifferentialChecks:
    """The differential part of `labile.testing.StoreContract` (see the module docs)."""

    def test_random_writes_agree_with_the_reference_store(self, store: Store) -> None:
        """Property: after any seeded history of writes, refusals and rollbacks in two
        namespaces, every read of this store equals that of the reference store given
        the same history, and each write succeeds or is refused on both alike."""
        reference = MemoryStore()
        history = _History(seed=20240101)
        for step in range(_STEPS):
            ns = history.rng.choice(_NAMESPACES)
            use_batch = history.rng.random() < 0.3
            write = history.batch(ns, step) if use_batch else history.plain(ns, step)
            expected = _outcome(reference, write)
            assert _outcome(store, write) == expected, f"step {step}"
        _assert_same_reads(store, reference, np.random.default_rng(1))
