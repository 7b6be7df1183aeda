"""`StoreContract`: every check of the `labile._protocols.Store` contract, as a test class.

The reference `labile._memstore.MemoryStore` defines the semantics; each check
states one promise of the protocol in the simplest terms that any store must
meet (text ranking only where every BM25 agrees: which documents match, and
the best match first). A store passes the contract when a subclass that
provides its ``store`` fixture passes every check.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any, ClassVar

import numpy as np
import pytest

from labile._errors import StoreError
from labile._model import Edge, NodeFilter, edge_id
from labile._protocols import Store
from labile._store_contract.deferred import DeferredChecks
from labile._store_contract.differential import DifferentialChecks
from labile._store_contract.erasure import ErasureChecks
from labile._store_contract.records import NS, T0, ContractEmbedder, edge, node, obs, vec

__all__ = ["StoreContract"]


def _ids(items: Any) -> list[str]:
    return [item.id for item in items]


def _hit_ids(hits: Any) -> list[str]:
    return [n.id for n, _ in hits]


class StoreContract(DeferredChecks, DifferentialChecks, ErasureChecks):
    """The `Store` contract suite: subclass it in a test module and provide ``store``.

    The ``store`` fixture must yield a new, empty store built for
    `embedder` (``StoreContract.embedder``: 8-d vectors), and close it
    afterwards. Every check asks for a fresh one::

        import pytest
        from labile.testing import StoreContract

        class TestMyStore(StoreContract):
            @pytest.fixture
            def store(self, tmp_path):
                s = MyStore(MyStoreConfig(path=str(tmp_path)), deps)  # deps.embedder:
                yield s                                           # StoreContract.embedder
                s.close()

    The class name does not start with ``Test``, so pytest collects only the
    subclasses; each inherits every check as a test method.

    A store that is also a `labile.plugin.DeferredStore` gets its checks too
    (the others skip them); override `reopen` to check that deferred writes
    survive ``flush``/``close`` and a reopen.
    """

    #: What the store under test must be built for (its ``name`` and ``dim``).
    embedder: ClassVar[ContractEmbedder] = ContractEmbedder()

    @pytest.fixture
    def store(self) -> Iterator[Store]:
        """Override: yield a new, empty store for `embedder`, and close it afterwards."""
        pytest.fail(f"{type(self).__name__} must define a `store` fixture that yields a new, "
                    "empty store for StoreContract.embedder (see labile.testing.StoreContract)")
        yield  # pragma: no cover - unreachable, makes this a generator fixture

    # -- observations --------------------------------------------------------------------
    def test_observation_log_round_trips_in_insertion_order(self, store: Store) -> None:
        items = [obs(3, "third", speaker="ann", session="s1", metadata={"caption": "a photo"}),
                 obs(1, "first"), obs(2, "second")]
        store.add_observations(NS, items[:2])
        store.add_observations(NS, items[2:])
        assert _ids(store.iter_observations(NS)) == ["o3", "o1", "o2"]
        got = store.get_observations(NS, ["o2", "missing", "o3"])
        assert _ids(got) == ["o2", "o3"]
        o3 = got[1]
        assert (o3.text, o3.speaker, o3.session, o3.metadata) == ("third", "ann", "s1",
                                                                  {"caption": "a photo"})
        assert o3.timestamp == items[0].timestamp
        assert o3.namespace == NS
        assert store.existing_observation_ids(NS, ["o1", "o9", "o3"]) == {"o1", "o3"}

    def test_observation_ids_must_be_new_and_a_refused_call_writes_nothing(
        self, store: Store
    ) -> None:
        store.add_observations(NS, [obs(1)])
        with pytest.raises(StoreError):
            store.add_observations(NS, [obs(2), obs(1)])
        assert _ids(store.iter_observations(NS)) == ["o1"]

    # -- nodes ---------------------------------------------------------------------------
    def test_nodes_round_trip_and_keep_insertion_order_on_update(self, store: Store) -> None:
        n1 = node("a", embedding=vec(0), keywords=("k1", "k2"), sources=("o1",),
                  time_start=T0, time_end=T0 + timedelta(hours=1), attrs={"x": 1})
        store.upsert_nodes(NS, [n1, node("b"), node("c")])
        store.upsert_nodes(NS, [node("a", content=n1.content, description="new desc",
                                     embedding=vec(0))])
        assert _ids(store.iter_nodes(NS)) == ["a", "b", "c"]
        [a] = store.get_nodes(NS, ["a"])
        assert a.description == "new desc" and a.namespace == NS
        assert store.get_nodes(NS, ["c", "zz", "b"])[0].id == "c"
        [b] = store.get_nodes(NS, ["b"])
        assert b.embedding is None and b.keywords == () and b.attrs == {}
        full = store.get_nodes(NS, ["a"])[0]
        np.testing.assert_array_equal(full.embedding, vec(0))
        assert store.count_nodes(NS) == 3

    def test_node_fields_round_trip_exactly(self, store: Store) -> None:
        n = node("a", description="d", keywords=("alpha", "beta"), sources=("o1", "o2"),
                 time_start=T0, time_end=T0 + timedelta(days=2), visible=False,
                 created_at=T0 - timedelta(days=1), updated_at=T0,
                 embedding=np.arange(8, dtype=np.float32), attrs={"k": [1, 2], "s": "v"})
        store.upsert_nodes(NS, [n])
        [got] = store.get_nodes(NS, ["a"])
        for field in ("id", "kind", "content", "description", "keywords", "sources",
                      "time_start", "time_end", "visible", "created_at", "updated_at", "attrs"):
            assert getattr(got, field) == getattr(n, field), field
        np.testing.assert_array_equal(got.embedding, n.embedding)

    def test_node_content_is_immutable(self, store: Store) -> None:
        store.upsert_nodes(NS, [node("a", content="evidence")])
        with pytest.raises(StoreError, match="content"):
            store.upsert_nodes(NS, [node("b"), node("a", content="rewritten")])
        assert _ids(store.iter_nodes(NS)) == ["a"]
        assert store.get_nodes(NS, ["a"])[0].content == "evidence"

    def test_returned_nodes_are_copies(self, store: Store) -> None:
        store.upsert_nodes(NS, [node("a", description="orig", attrs={"k": 1})])
        got = store.get_nodes(NS, ["a"])[0]
        got.description = "mutated"
        got.attrs["k"] = 2
        again = store.get_nodes(NS, ["a"])[0]
        assert again.description == "orig" and again.attrs == {"k": 1}

    def test_filters_follow_nodefilter_accepts(self, store: Store) -> None:
        nodes = [
            node("untimed", kind="fact"),
            node("early", kind="event", time_start=T0, time_end=T0 + timedelta(days=1)),
            node("point", kind="event", time_start=T0 + timedelta(days=5)),
            node("late", kind="fact", time_start=T0 + timedelta(days=10), visible=False),
            node("span", kind="event", time_start=T0 - timedelta(days=30),
                 time_end=T0 + timedelta(days=30)),
        ]
        store.upsert_nodes(NS, nodes)
        filters = [
            NodeFilter(),
            NodeFilter(kinds={"event"}),
            NodeFilter(kinds=set()),
            NodeFilter(kinds={"nope"}),
            NodeFilter(visible=True),
            NodeFilter(visible=False),
            NodeFilter(ids={"late", "early", "ghost"}),
            NodeFilter(ids=set()),
            NodeFilter(time_range=(T0 + timedelta(days=2), T0 + timedelta(days=6))),
            NodeFilter(time_range=(T0 + timedelta(days=1), T0 + timedelta(days=1))),
            NodeFilter(time_range=(T0 + timedelta(days=5), T0 + timedelta(days=5))),
            NodeFilter(kinds={"fact"}, visible=True,
                       time_range=(T0 + timedelta(days=9), T0 + timedelta(days=11))),
        ]
        for f in filters:
            expected = [n.id for n in nodes if f.accepts(n)]
            assert _ids(store.iter_nodes(NS, where=f)) == expected, f
            assert store.count_nodes(NS, where=f) == len(expected), f

    # -- edges ---------------------------------------------------------------------------
    def test_edges_need_existing_ends(self, store: Store) -> None:
        store.upsert_nodes(NS, [node("a"), node("b")])
        with pytest.raises(StoreError):
            store.upsert_edges(NS, [edge("a", "b"), edge("a", "ghost")])
        assert store.count_edges(NS) == 0
        store.upsert_nodes("other", [node("ghost")])
        with pytest.raises(StoreError):  # an end in another namespace does not count
            store.upsert_edges(NS, [edge("a", "ghost")])

    def test_edge_upsert_updates_in_place(self, store: Store) -> None:
        store.upsert_nodes(NS, [node("a"), node("b"), node("c")])
        store.upsert_edges(NS, [edge("a", "b", weight=0.2), edge("b", "c")])
        store.upsert_edges(NS, [edge("a", "b", weight=0.9, description="stronger")])
        assert store.count_edges(NS) == 2
        [e] = store.get_edges(NS, [edge_id("a", "rel", "b")])
        assert e.weight == 0.9 and e.description == "stronger" and e.namespace == NS
        assert _ids(store.iter_edges(NS)) == [edge_id("a", "rel", "b"), edge_id("b", "rel", "c")]
        assert store.get_edges(NS, ["nope"]) == []

    def test_an_edge_upserted_with_new_ends_moves(self, store: Store) -> None:
        store.upsert_nodes(NS, [node(x) for x in "abcd"])
        store.upsert_edges(NS, [edge("a", "b", "rel")])
        moved = Edge(id=edge_id("a", "rel", "b"), src="c", dst="d", predicate="rel")
        store.upsert_edges(NS, [moved])
        assert store.edges_of(NS, ["a", "b"], direction="both") == []
        assert _ids(store.edges_of(NS, ["c"])) == [moved.id]
        assert _ids(store.edges_of(NS, ["d"], direction="in")) == [moved.id]
        assert store.count_edges(NS) == 1

    def test_returned_edges_are_copies(self, store: Store) -> None:
        store.upsert_nodes(NS, [node("a"), node("b")])
        store.upsert_edges(NS, [edge("a", "b", weight=0.3, attrs={"k": 1})])
        for got in (store.get_edges(NS, [edge_id("a", "rel", "b")])[0],
                    store.edges_of(NS, ["a"])[0], next(store.iter_edges(NS))):
            got.weight = 1.0
            got.attrs["k"] = 2
        [again] = store.get_edges(NS, [edge_id("a", "rel", "b")])
        assert again.weight == 0.3 and again.attrs == {"k": 1}

    def test_edges_of_directions_predicates_and_order(self, store: Store) -> None:
        store.upsert_nodes(NS, [node(x) for x in "abcd"])
        store.upsert_edges(NS, [edge("a", "b"), edge("a", "c", "likes"), edge("d", "a"),
                                edge("b", "a", "likes"), edge("c", "d")])
        assert _ids(store.edges_of(NS, ["a"])) == ["a|likes|c", "a|rel|b"]
        assert _ids(store.edges_of(NS, ["a"], direction="in")) == ["b|likes|a", "d|rel|a"]
        assert _ids(store.edges_of(NS, ["a", "b"], direction="both")) == [
            "a|likes|c", "a|rel|b", "b|likes|a", "d|rel|a"]
        assert _ids(store.edges_of(NS, ["a"], direction="both", predicates={"likes"})) == [
            "a|likes|c", "b|likes|a"]
        assert store.edges_of(NS, ["ghost"], direction="both") == []
        assert store.edges_of("elsewhere", ["a"]) == []

    def test_edges_of_lists_each_edge_once(self, store: Store) -> None:
        store.upsert_nodes(NS, [node("a"), node("b")])
        store.upsert_edges(NS, [edge("a", "a"), edge("a", "b")])
        assert _ids(store.edges_of(NS, ["a", "a", "b"], direction="both")) == [
            "a|rel|a", "a|rel|b"]

    # -- search --------------------------------------------------------------------------
    def test_vector_search_cosine_order_filter_and_k(self, store: Store) -> None:
        store.upsert_nodes(NS, [
            node("x", embedding=vec(0)),
            node("xy", embedding=vec(0, 1)),
            node("y", embedding=vec(1), kind="other"),
            node("bare"),
            node("hidden", embedding=vec(0), visible=False),
        ])
        hits = store.vector_search(NS, vec(0) * 3, 10)
        assert _hit_ids(hits) == ["x", "hidden", "xy", "y"]
        assert [round(s, 4) for _, s in hits] == [1.0, 1.0, round(1 / np.sqrt(2), 4), 0.0]
        assert _hit_ids(store.vector_search(NS, vec(0), 2)) == ["x", "hidden"]
        only = store.vector_search(NS, vec(0), 10,
                                   where=NodeFilter(visible=True, kinds={"fact"}))
        assert _hit_ids(only) == ["x", "xy"]
        assert store.vector_search(NS, vec(0), 0) == []
        assert store.vector_search("elsewhere", vec(0), 5) == []
        np.testing.assert_array_equal(hits[0][0].embedding, vec(0))

    def test_text_search_matches_words_best_first(self, store: Store) -> None:
        store.upsert_nodes(NS, [
            node("coffee", content="We drank coffee in Paris"),
            node("tea", content="Green tea in the morning", keywords=("drink",)),
            node("both", content="coffee coffee and more coffee"),
            node("none", content="nothing relevant here"),
            node("hidden", content="coffee secret", visible=False),
        ])
        hits = store.text_search(NS, "coffee", 10)
        assert {n.id for n, _ in hits} == {"coffee", "both", "hidden"}
        assert hits[0][0].id == "both"
        assert all(s > 0 for _, s in hits)
        either = store.text_search(NS, "coffee tea", 10, where=NodeFilter(visible=True))
        assert {n.id for n, _ in either} == {"coffee", "both", "tea"}
        assert _hit_ids(store.text_search(NS, "drink", 10)) == ["tea"]  # keywords count
        assert store.text_search(NS, "zebra", 10) == []
        assert len(store.text_search(NS, "coffee", 1)) == 1
        assert store.text_search("elsewhere", "coffee", 5) == []

    def test_text_search_follows_every_filter_field(self, store: Store) -> None:
        nodes = [
            node("old", content="coffee long ago", time_start=T0 - timedelta(days=40)),
            node("new", content="coffee today", kind="event", time_start=T0),
            node("untimed", content="coffee whenever", kind="event"),
            node("hidden", content="coffee secret", visible=False),
        ]
        store.upsert_nodes(NS, nodes)
        filters = [
            NodeFilter(kinds={"event"}),
            NodeFilter(visible=False),
            NodeFilter(ids={"old", "hidden", "ghost"}),
            NodeFilter(time_range=(T0 - timedelta(days=1), T0 + timedelta(days=1))),
            NodeFilter(kinds={"fact"}, visible=True),
        ]
        for f in filters:
            hits = store.text_search(NS, "coffee", 10, where=f)
            assert {n.id for n, _ in hits} == {n.id for n in nodes if f.accepts(n)}, f

    # -- batches -------------------------------------------------------------------------
    def test_batch_reads_its_own_writes_and_commits(self, store: Store) -> None:
        with store.batch(NS):
            store.add_observations(NS, [obs(1, "hello coffee")])
            store.upsert_nodes(NS, [node("a", content="hello coffee", embedding=vec(2),
                                         sources=("o1",))])
            assert store.existing_observation_ids(NS, ["o1"]) == {"o1"}
            assert _ids(store.get_observations(NS, ["o1"])) == ["o1"]
            assert _hit_ids(store.vector_search(NS, vec(2), 1)) == ["a"]
            assert _hit_ids(store.text_search(NS, "coffee", 1)) == ["a"]
            store.upsert_edges(NS, [edge("a", "a")])
            assert _ids(store.edges_of(NS, ["a"])) == ["a|rel|a"]
        assert store.count_nodes(NS) == 1 and store.count_edges(NS) == 1

    def test_batch_rolls_back_on_exception(self, store: Store) -> None:
        store.upsert_nodes(NS, [node("keep", embedding=vec(0))])
        with pytest.raises(RuntimeError), store.batch(NS):
            store.add_observations(NS, [obs(1)])
            store.upsert_nodes(NS, [node("gone", content="coffee", embedding=vec(0))])
            store.upsert_nodes(NS, [node("keep", content="content of keep",
                                         description="changed", embedding=vec(0))])
            store.upsert_edges(NS, [edge("keep", "gone")])
            store.text_search(NS, "coffee", 3)  # may push the batch to disk: still undone
            raise RuntimeError("abort")
        assert _ids(store.iter_nodes(NS)) == ["keep"]
        assert store.get_nodes(NS, ["keep"])[0].description == ""
        assert store.count_edges(NS) == 0
        assert store.existing_observation_ids(NS, ["o1"]) == set()
        assert store.text_search(NS, "coffee", 3) == []
        assert _hit_ids(store.vector_search(NS, vec(0), 5)) == ["keep"]
        store.add_observations(NS, [obs(1)])  # the id is free again

    def test_nested_batches_commit_with_the_outer_block(self, store: Store) -> None:
        with store.batch(NS):
            store.upsert_nodes(NS, [node("a")])
            with store.batch(NS):
                store.upsert_nodes(NS, [node("b")])
            assert store.count_nodes(NS) == 2
        assert store.count_nodes(NS) == 2
        with pytest.raises(RuntimeError), store.batch(NS):
            with store.batch(NS):
                store.upsert_nodes(NS, [node("c")])
            raise RuntimeError("abort")
        assert _ids(store.iter_nodes(NS)) == ["a", "b"]

    def test_reading_blocks_nest_and_see_writes(self, store: Store) -> None:
        store.upsert_nodes(NS, [node("a", content="hello coffee", embedding=vec(1))])
        with store.reading(NS):
            assert _hit_ids(store.text_search(NS, "coffee", 3)) == ["a"]
            with store.reading(NS), store.batch(NS):
                store.upsert_nodes(NS, [node("b", content="more coffee", embedding=vec(2))])
            assert store.count_nodes(NS) == 2
            assert {n.id for n, _ in store.vector_search(NS, vec(2), 2)} == {"a", "b"}
        assert store.count_nodes(NS) == 2

    # -- namespaces ----------------------------------------------------------------------
    def test_namespaces_are_isolated(self, store: Store) -> None:
        spaces = (("a", "alpha coffee"), ("b", "beta coffee"), ("it's", "quoted coffee"))
        for ns, text in spaces:
            store.add_observations(ns, [obs(1, text)])
            store.upsert_nodes(ns, [node("n", content=text, embedding=vec(0))])
            store.upsert_nodes(ns, [node("m", content=f"{text} two", embedding=vec(1))])
            store.upsert_edges(ns, [edge("n", "m")])
        assert store.namespaces() == ["a", "b", "it's"]
        for ns, text in spaces:
            assert [o.text for o in store.iter_observations(ns)] == [text]
            assert store.get_nodes(ns, ["n"])[0].content == text
            assert {n.namespace for n, _ in store.text_search(ns, "coffee", 10)} == {ns}
            assert {n.namespace for n, _ in store.vector_search(ns, vec(0), 10)} == {ns}
            assert store.count_nodes(ns) == 2 and store.count_edges(ns) == 1
            assert {e.namespace for e in store.edges_of(ns, ["n"], direction="both")} == {ns}
        assert store.get_nodes("unknown", ["n"]) == []
        assert list(store.iter_observations("unknown")) == []
        assert store.text_search("it", "coffee", 5) == []

    def test_unknown_namespace_reads_are_empty(self, store: Store) -> None:
        ns = "never-written"
        assert store.existing_observation_ids(ns, ["a"]) == set()
        assert store.get_observations(ns, ["a"]) == []
        assert list(store.iter_observations(ns)) == []
        assert store.get_nodes(ns, ["a"]) == [] and list(store.iter_nodes(ns)) == []
        assert store.count_nodes(ns) == 0 and store.count_edges(ns) == 0
        assert store.get_edges(ns, ["a"]) == [] and list(store.iter_edges(ns)) == []
        assert store.edges_of(ns, ["a"], direction="both") == []
        assert store.vector_search(ns, vec(0), 3) == []
        assert store.text_search(ns, "anything", 3) == []
        assert store.namespaces() == []

    def test_empty_namespace_is_refused(self, store: Store) -> None:
        with pytest.raises(StoreError):
            store.upsert_nodes("", [node("a")])

    def test_stats_and_lifecycle(self, store: Store) -> None:
        store.add_observations(NS, [obs(1)])
        store.upsert_nodes(NS, [node("a"), node("b", visible=False)])
        store.upsert_edges(NS, [edge("a", "b")])
        store.optimize()
        for st in (store.stats(NS), store.stats()):
            assert (st["observations"], st["nodes"], st["visible_nodes"], st["edges"]) == (
                1, 2, 1, 1)
        store.close()
        store.close()  # idempotent
