"""Per-namespace lexical statistics: a namespace's full-text ranking is its own business.

The LanceDB store searches small namespaces in memory with their own BM25
statistics (`labile_lancedb._lexical`), so writes, updates, deletes and purges
in one namespace never move another namespace's scores; larger namespaces
fall back to LanceDB's table-wide index.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lancedb_helpers import node, open_store

from labile._model import NodeFilter
from labile.text.bm25 import BM25Index
from labile_lancedb import _lexical, _search
from labile_lancedb.store import LanceStore

_WORDS = ("coffee", "tea", "garden", "piano", "paris", "dog", "running", "painting", "book",
          "lake", "camping", "guitar")
_texts = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(" ".join)
_NAMESPACES = itertools.count()


def _ranked(store: LanceStore, ns: str, query: str) -> list[tuple[str, float]]:
    return [(n.id, round(s, 9)) for n, s in store.text_search(ns, query, 50)]


@pytest.fixture(scope="module")
def shared_store() -> LanceStore:
    """One store for every example (opening a LanceDB directory per example is slow)."""
    tmp = tempfile.mkdtemp(prefix="labile-lexical-")
    return open_store(Path(tmp) / "mem")


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a_docs=st.lists(_texts, min_size=1, max_size=8),
       b_docs=st.lists(_texts, min_size=1, max_size=8),
       b_more=st.lists(_texts, min_size=1, max_size=4),
       query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join))
def test_other_namespaces_never_move_a_ranking(shared_store: LanceStore, a_docs: list[str],
                                               b_docs: list[str], b_more: list[str],
                                               query: str) -> None:
    """For any texts in namespaces A and B and any query, A's ranked list (ids and scores)
    is the same before B exists, after B grows, after B's text changes, after part of B is
    deleted, and after B is purged."""
    i = next(_NAMESPACES)
    a, b = f"a{i}", f"b{i}"
    shared_store.upsert_nodes(a, [node(f"a{j}", t) for j, t in enumerate(a_docs)])
    alone = _ranked(shared_store, a, query)
    shared_store.upsert_nodes(b, [node(f"b{j}", t) for j, t in enumerate(b_docs)])
    assert _ranked(shared_store, a, query) == alone
    shared_store.upsert_nodes(b, [node(f"c{j}", t) for j, t in enumerate(b_more)])
    shared_store.upsert_nodes(b, [node("b0", b_docs[0], description=f"{query} {query}")])
    assert _ranked(shared_store, a, query) == alone
    shared_store.delete(b, node_ids=["b0"])
    assert _ranked(shared_store, a, query) == alone
    shared_store.purge(b)
    assert _ranked(shared_store, a, query) == alone
    shared_store.purge(a)


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(_texts, min_size=1, max_size=10),
       query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join))
def test_a_namespace_ranks_as_the_reference_index(shared_store: LanceStore, docs: list[str],
                                                  query: str) -> None:
    """For any texts and query, a small namespace's scores are exactly those of the
    reference store's BM25 index over the same texts (its own statistics), and ties
    keep insertion order."""
    ns = f"r{next(_NAMESPACES)}"
    shared_store.upsert_nodes(ns, [node(f"n{j:02d}", t) for j, t in enumerate(docs)])
    reference = BM25Index()
    for j, t in enumerate(docs):
        reference.add(f"n{j:02d}", t)
    expected = [(i, round(s, 9)) for i, s in reference.search(query, 50)]
    assert _ranked(shared_store, ns, query) == expected
    shared_store.purge(ns)


def test_updates_are_searched_and_filters_apply(store: LanceStore) -> None:
    store.upsert_nodes("u", [node("a", "coffee in the morning"), node("b", "tea at night"),
                             node("c", "coffee and cake", visible=False)])
    # a tie: insertion order
    assert [n.id for n, _ in store.text_search("u", "coffee", 5)] == ["a", "c"]
    assert [n.id for n, _ in store.text_search("u", "coffee", 5,
                                                where=NodeFilter(visible=True))] == ["a"]
    store.upsert_nodes("u", [node("b", "tea at night", description="coffee, black")])
    assert {n.id for n, _ in store.text_search("u", "coffee", 5)} == {"a", "b", "c"}
    assert [n.id for n, _ in store.text_search("u", "black", 5)] == ["b"]
    assert [n.id for n, _ in store.text_search("u", "Café", 5)] == []  # folded, no match
    store.upsert_nodes("u", [node("d", "un café crème")])
    assert [n.id for n, _ in store.text_search("u", "cafe", 5)] == ["d"]


def test_a_large_namespace_falls_back_to_lancedb(store: LanceStore,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the size limit the in-memory index is not built; LanceDB's index answers."""
    monkeypatch.setattr(_lexical, "EXACT_TEXT_MAX_NODES", 2)
    calls: list[str] = []
    real = _search.fts_query

    def spy(*args: object, **kw: object) -> object:
        calls.append("fts")
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(_search, "fts_query", spy)
    store.upsert_nodes("u", [node("a", "coffee"), node("b", "tea")])
    assert [n.id for n, _ in store.text_search("u", "coffee", 5)] == ["a"]
    assert calls == []
    store.upsert_nodes("u", [node("c", "coffee beans")])
    assert {n.id for n, _ in store.text_search("u", "coffee", 5)} == {"a", "c"}
    assert calls == ["fts"]


def test_only_changed_slots_are_reindexed(store: LanceStore) -> None:
    store.upsert_nodes("u", [node(f"n{i}", f"word{i} coffee") for i in range(5)])
    store.text_search("u", "coffee", 3)
    table = store._spaces.nodes("u")
    index = _lexical.namespace_text(table)
    assert index.sync(table) == 0
    store.upsert_nodes("u", [node("n1", "word1 coffee", description="")])  # same text
    store.upsert_nodes("u", [node("n2", "word2 coffee", description="something else")])
    assert index.sync(table) == 1


def test_fold_strips_accents_only() -> None:
    assert _lexical.fold("Café naïve Zoë") == "Cafe naive Zoe"
    assert _lexical.fold("plain") == "plain"
