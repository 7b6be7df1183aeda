"""The LanceDB store's search paths: full-text analysis and unindexed rows, the ANN index
against the exact numpy path, the namespace prefilter that searches skip when one namespace
owns the table, and the speed of exact search in a small namespace."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lancedb_helpers import T0, node, open_store, rvec

from labile._model import NodeFilter
from labile._protocols import Scored
from labile_lancedb import _search
from labile_lancedb.store import LanceStore


def test_full_text_analysis_and_unindexed_rows(store: LanceStore) -> None:
    store.upsert_nodes("u", [node("run", content="She runs every morning"),
                             node("cafe", content="A small café near the station"),
                             node("stop", content="the and of")])
    assert [n.id for n, _ in store.text_search("u", "RUNNING", 5)] == ["run"]  # stem + case
    assert [n.id for n, _ in store.text_search("u", "cafe", 5)] == ["cafe"]  # ascii folding
    assert store.text_search("u", "the of", 5) == []  # stop words only
    assert store.text_search("u", "   ", 5) == []
    store.optimize()  # everything indexed now; later rows are not yet
    store.upsert_nodes("u", [node("late", content="late morning coffee")])
    idx = {ix.name: ix for ix in store._tables["nodes"].list_indices()}
    assert any(ix.num_unindexed_rows for ix in idx.values())
    assert [n.id for n, _ in store.text_search("u", "coffee", 5)] == ["late"]
    assert {n.id for n, _ in store.text_search("u", "morning", 5)} == {"run", "late"}
    assert [n.id for n, _ in store.text_search("u", 'cafe) OR "x" AND *', 5)] == ["cafe"]

def test_ann_and_exact_paths_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Vectors with latent structure (like real embeddings), queries near data points: the
    # exact top 10 is then well separated, and with every partition probed plus the
    # full-vector refine step the index must find exactly it. (On isotropic random
    # vectors all neighbours are nearly equidistant and 1-bit codes cannot rank them.)
    rng = np.random.default_rng(7)
    dim, n = 64, 600
    latent = rng.standard_normal((n, 8)) @ rng.standard_normal((8, dim))
    vecs = (latent + 0.3 * rng.standard_normal((n, dim))).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    queries = vecs[rng.choice(n, 5, replace=False)] + 0.05 * rvec(rng, 5, dim)
    s = open_store(tmp_path / "m", dim=dim, ann_threshold=200, ann_partition_rows=64,
                   nprobes=40, refine_factor=10)
    for start in range(0, n, 150):
        s.upsert_nodes("u", [
            node(f"n{i}", embedding=vecs[i], kind="even" if i % 2 else "odd", visible=i % 5 != 0,
                 time_start=T0 + timedelta(days=i))
            for i in range(start, start + 150)])
    st_ = s.stats()
    assert st_["ann_index"] and st_["ann_trained_rows"] >= 200
    calls: list[int] = []
    real = _search.ann_search

    def counting(*a: Any, **kw: Any) -> list[Scored]:
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(_search, "ann_search", counting)
    filters = [None, NodeFilter(kinds={"even"}, visible=True),
               NodeFilter(time_range=(T0 + timedelta(days=100), T0 + timedelta(days=500)))]
    for q in queries:
        for where in filters:
            exact = s.vector_search("u", q, 10, where=where, mode="exact")
            for mode in ("ann", "auto"):
                got = s.vector_search("u", q, 10, where=where, mode=mode)
                assert [x.id for x, _ in got] == [x.id for x, _ in exact], mode
                np.testing.assert_allclose([v for _, v in got], [v for _, v in exact],
                                           atol=1e-4)
    assert len(calls) == 15  # only mode="ann" reaches the index; auto scans in memory
    s.close()

def test_searches_without_the_namespace_prefilter_still_check_namespaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When a namespace seems to own every row, searches skip the namespace prefilter
    (it costs a pass over the table); a row of another namespace coming back anyway
    (another writer was quicker than our row count) makes them filter properly."""
    rng = np.random.default_rng(5)
    s = open_store(tmp_path / "m", ann_threshold=50, ann_partition_rows=64)
    for ns in ("a", "b"):
        s.upsert_nodes(ns, [node(f"{ns}{i}", content="shared words", embedding=rvec(rng)[0])
                            for i in range(60)])
    s.build_ann_index()
    q = rvec(rng)[0]
    seen: list[bool] = []
    real = _search.ann_query

    def spy(*a: Any, **kw: Any) -> Any:
        seen.append(kw["namespace_clause"])
        return real(*a, **kw)

    monkeypatch.setattr(_search, "ann_query", spy)
    assert {n.namespace for n, _ in s.vector_search("a", q, 10, mode="ann")} == {"a"}
    assert seen == [True]  # two namespaces: the clause is needed
    monkeypatch.setattr(s._lance, "node_rows", lambda: 60)  # pretend "a" owns the table
    seen.clear()
    hits = s.vector_search("a", q, 10, mode="ann")
    assert {n.namespace for n, _ in hits} == {"a"} and len(hits) == 10
    assert seen in ([False], [False, True])
    texts = s.text_search("a", "shared", 100)
    assert {n.namespace for n, _ in texts} == {"a"} and len(texts) == 60
    s.close()

def test_small_namespace_search_is_exact(store: LanceStore) -> None:
    """Below the ANN threshold `auto` is the exact scan: the same top 10 as brute force.

    (Its speed is measured by `labile bench scale`, not asserted here.)"""
    rng = np.random.default_rng(3)
    n = 10_000
    vecs = rvec(rng, n)
    with store.batch("u"):
        store.upsert_nodes("u", [node(f"n{i}", embedding=vecs[i]) for i in range(n)])
    for q in rvec(rng, 20):
        exact = [f"n{i}" for i in np.argsort(-(vecs @ q), kind="stable")[:10]]
        assert [n.id for n, _ in store.vector_search("u", q, 10)] == exact
