"""Contract checks of removal: `Store.delete`, `Store.purge`, `Store.erase_history`."""

from __future__ import annotations

import pytest

from labile._protocols import Store
from labile._store_contract.records import NS, edge, node, obs, vec

OTHER = "other"


def _fill(store: Store, namespace: str) -> None:
    store.add_observations(namespace, [obs(1, "alpha coffee"), obs(2, "beta tea")])
    store.upsert_nodes(namespace, [
        node("a", content="alpha coffee", embedding=vec(0), sources=("o1",)),
        node("b", content="beta tea", embedding=vec(1), sources=("o2",)),
        node("c", content="gamma", embedding=vec(2), sources=("o1", "o2")),
    ])
    store.upsert_edges(namespace, [edge("a", "b"), edge("b", "c"), edge("c", "a")])


def _snapshot(store: Store, namespace: str) -> tuple[object, ...]:
    return (
        [o.id for o in store.iter_observations(namespace)],
        [n.id for n in store.iter_nodes(namespace)],
        sorted(e.id for e in store.iter_edges(namespace)),
        [n.id for n, _ in store.text_search(namespace, "coffee tea", 5)],
        [n.id for n, _ in store.vector_search(namespace, vec(0), 5)],
    )


class ErasureChecks:
    """Removal: what goes, what stays, and that the rest of the store is untouched."""

    def test_delete_removes_records_and_the_edges_of_removed_nodes(self, store: Store) -> None:
        _fill(store, NS)
        _fill(store, OTHER)
        before = _snapshot(store, OTHER)
        store.delete(NS, observation_ids=["o1", "missing"], node_ids=["a"], edge_ids=["b|rel|c"])
        assert [o.id for o in store.iter_observations(NS)] == ["o2"]
        assert store.existing_observation_ids(NS, ["o1", "o2"]) == {"o2"}
        assert [n.id for n in store.iter_nodes(NS)] == ["b", "c"]
        assert store.count_edges(NS) == 0  # a->b and c->a touched a; b->c was named
        assert store.edges_of(NS, ["a", "b", "c"], direction="both") == []
        assert [n.id for n, _ in store.text_search(NS, "coffee", 5)] == []
        assert "a" not in [n.id for n, _ in store.vector_search(NS, vec(0), 5)]
        assert _snapshot(store, OTHER) == before
        # Ids are free again, with any content.
        store.add_observations(NS, [obs(1, "new text")])
        store.upsert_nodes(NS, [node("a", content="other content", embedding=vec(3))])
        assert store.get_nodes(NS, ["a"])[0].content == "other content"

    def test_delete_in_a_rolled_back_batch_is_undone(self, store: Store) -> None:
        _fill(store, NS)
        before = _snapshot(store, NS)
        with pytest.raises(RuntimeError), store.batch(NS):
            store.delete(NS, observation_ids=["o1"], node_ids=["a", "c"])
            assert store.count_nodes(NS) == 1
            raise RuntimeError("abort")
        assert _snapshot(store, NS) == before

    def test_delete_then_rewrite_in_one_batch(self, store: Store) -> None:
        _fill(store, NS)
        with store.batch(NS):
            store.delete(NS, node_ids=["c"])
            store.upsert_nodes(NS, [node("c", content="rebuilt", embedding=vec(2))])
            store.upsert_edges(NS, [edge("c", "b")])
        assert store.get_nodes(NS, ["c"])[0].content == "rebuilt"
        assert sorted(e.id for e in store.iter_edges(NS)) == ["a|rel|b", "c|rel|b"]
        assert [n.id for n, _ in store.text_search(NS, "rebuilt", 5)] == ["c"]

    def test_purge_removes_one_namespace(self, store: Store) -> None:
        _fill(store, NS)
        _fill(store, OTHER)
        before = _snapshot(store, OTHER)
        store.purge(NS)
        assert store.namespaces() == [OTHER]
        assert _snapshot(store, NS) == ([], [], [], [], [])
        assert store.stats(NS)["observations"] == 0
        assert _snapshot(store, OTHER) == before
        store.purge("never-written")  # nothing to do
        _fill(store, NS)  # the namespace can be used again
        assert store.count_nodes(NS) == 3

    def test_erase_history_keeps_what_remains(self, store: Store) -> None:
        _fill(store, NS)
        store.delete(NS, node_ids=["a"])
        before = _snapshot(store, NS)
        store.erase_history()
        assert _snapshot(store, NS) == before
        store.upsert_nodes(NS, [node("d", content="delta coffee", embedding=vec(4))])
        assert [n.id for n, _ in store.text_search(NS, "coffee", 5)] == ["d"]
