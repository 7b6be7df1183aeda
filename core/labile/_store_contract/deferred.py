"""Contract checks of `labile.plugin.DeferredStore`, for the stores that have it.

A store without ``deferred`` and ``flush`` skips every check here (the
protocol is optional). Blocks write edges only: the protocol groups the edge
writes of `labile.Memory.feedback`, and a store may turn a block that writes
anything else into an ordinary batch (the LanceDB store does). The nodes the
edges join are written before each block, outside it.

Durability across a reopen needs a way to reopen the store under test, which
the ``store`` fixture alone does not give: a subclass that can reopen its
store overrides `DeferredChecks.reopen`; otherwise that check skips.
"""

from __future__ import annotations

from typing import Protocol

import pytest

from labile._protocols import DeferredStore, Store
from labile._store_contract.records import NS, edge, node

__all__ = ["DeferredChecks"]

OTHER = "other"
AB, AC, BC = edge("a", "b").id, edge("a", "c").id, edge("b", "c").id


class _Deferring(Store, DeferredStore, Protocol):
    """A store that has the optional protocol too (what the checks run against)."""


class _Abort(Exception):
    """Raised inside a deferred block to make it fail on purpose."""


def _deferring(store: Store) -> _Deferring:
    """``store`` if it is a `DeferredStore`; otherwise the calling check skips."""
    if not isinstance(store, DeferredStore):
        pytest.skip(f"{type(store).__name__} is not a DeferredStore (no deferred/flush): "
                    "the DeferredStore checks do not apply")
    return store


def _seed(store: Store, namespace: str = NS) -> None:
    """Nodes a, b, c and one committed edge a->b (weight 1), written by ordinary calls."""
    store.upsert_nodes(namespace, [node("a"), node("b"), node("c")])
    store.upsert_edges(namespace, [edge("a", "b", weight=1.0)])


def _weights(store: Store, namespace: str = NS) -> dict[str, float]:
    """Every edge of ``namespace``: id -> weight."""
    return {e.id: e.weight for e in store.iter_edges(namespace)}


def _reads(store: Store) -> tuple[object, ...]:
    """What the checks read of ``NS``'s edges, through each edge read of the `Store`."""
    return ([e.weight for e in store.get_edges(NS, [AB, AC])],
            sorted(e.id for e in store.edges_of(NS, ["a"])),
            sorted(e.id for e in store.edges_of(NS, ["c"], direction="in")),
            store.count_edges(NS))


class DeferredChecks:
    """`DeferredStore`: deferred edge writes are read at once, undone by an exception,
    kept by ``flush`` and ``close``, and stay in their namespace."""

    def reopen(self, store: Store) -> Store:
        """Override to check durability: close ``store`` and return a new store opened on
        what it holds (the check closes that one). By default the check skips."""
        pytest.skip(f"{type(self).__name__} does not override reopen(): deferred writes "
                    "are not checked across a reopen")

    def test_deferred_edge_writes_are_read_inside_and_after_the_block(
        self, store: Store
    ) -> None:
        s = _deferring(store)
        _seed(s)
        expected = ([0.25, 0.75], [AB, AC], [AC, BC], 3)
        with s.deferred(NS):
            s.upsert_edges(NS, [edge("a", "b", weight=0.25), edge("a", "c", weight=0.75)])
            s.upsert_edges(NS, [edge("b", "c")])
            assert _reads(s) == expected
        assert _reads(s) == expected

    def test_an_exception_escaping_a_deferred_block_undoes_its_writes(
        self, store: Store
    ) -> None:
        s = _deferring(store)
        _seed(s)
        with s.deferred(NS):  # an earlier block that succeeded: its writes stay
            s.upsert_edges(NS, [edge("a", "c", weight=0.25)])
        before = _weights(s)
        with pytest.raises(_Abort), s.deferred(NS):  # the exception propagates as raised
            s.upsert_edges(NS, [edge("a", "b", weight=0.5), edge("a", "c", weight=0.75)])
            s.upsert_edges(NS, [edge("b", "c")])
            assert _weights(s) == {AB: 0.5, AC: 0.75, BC: 0.5}
            raise _Abort("abort the block")
        assert _weights(s) == before == {AB: 1.0, AC: 0.25}
        assert s.edges_of(NS, ["c"]) == [] and s.get_edges(NS, [BC]) == []

    def test_flush_keeps_deferred_writes_and_does_nothing_when_none_wait(
        self, store: Store
    ) -> None:
        s = _deferring(store)
        s.flush()  # nothing written at all
        _seed(s)
        s.flush()  # only ordinary writes: nothing waits
        with s.deferred(NS):
            s.upsert_edges(NS, [edge("a", "b", weight=0.25), edge("a", "c")])
        s.flush()
        assert _weights(s) == {AB: 0.25, AC: 0.5}
        s.flush()  # flushed already: nothing waits
        assert _weights(s) == {AB: 0.25, AC: 0.5}
        assert [n.id for n in s.iter_nodes(NS)] == ["a", "b", "c"]

    def test_deferred_writes_stay_in_their_namespace(self, store: Store) -> None:
        s = _deferring(store)
        _seed(s, NS)
        _seed(s, OTHER)
        with s.deferred(NS):
            s.upsert_edges(NS, [edge("a", "b", weight=0.25), edge("a", "c")])
            assert _weights(s, OTHER) == {AB: 1.0}
        assert _weights(s, OTHER) == {AB: 1.0}
        assert s.get_edges(OTHER, [AC]) == [] and s.edges_of(OTHER, ["c"], direction="in") == []
        s.flush()
        assert _weights(s, OTHER) == {AB: 1.0}
        assert _weights(s, NS) == {AB: 0.25, AC: 0.5}

    def test_deferred_writes_survive_flush_or_close_and_a_reopen(self, store: Store) -> None:
        s = _deferring(store)
        _seed(s)
        with s.deferred(NS):
            s.upsert_edges(NS, [edge("a", "b", weight=0.25)])
        s.flush()  # durable now
        with s.deferred(NS):
            s.upsert_edges(NS, [edge("a", "c", weight=0.75)])
        again = self.reopen(s)  # the second block is made durable by close()
        try:
            assert _weights(again) == {AB: 0.25, AC: 0.75}
        finally:
            again.close()
