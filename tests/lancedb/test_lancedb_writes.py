"""How the LanceDB store writes: one commit per table per batch, updates in place,
scheduled compaction, rollback of a batch already pushed to disk, recovery that restores
dropped indexes; and what it serves from memory (reads, embeddings, the igraph topology)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from lancedb_helpers import DIM, edge, node, obs, open_store

from labile._model import Edge, edge_id
from labile_lancedb.store import LanceStore


def test_edge_weight_updates_in_place(store: LanceStore) -> None:
    store.upsert_nodes("u", [node("a"), node("b")])
    for w in (0.1, 0.4, 0.8):
        store.upsert_edges("u", [edge("a", "b", weight=w)])
    assert store._tables["edges"].count_rows() == 1
    assert store.get_edges("u", [edge_id("a", "rel", "b")])[0].weight == 0.8

def test_scheduled_optimize_bounds_fragments(tmp_path: Path) -> None:
    s = open_store(tmp_path / "m", optimize_every=5)
    for i in range(23):
        s.upsert_nodes("u", [node(f"n{i}")])
    frags = s.stats()["fragments"]
    assert frags["nodes"] <= 5, frags
    s.optimize()  # compaction merges indexed and unindexed fragments separately
    assert s.stats()["fragments"]["nodes"] <= 2
    st_ = s.stats("u")
    assert (st_["nodes"], st_["visible_nodes"], st_["observations"], st_["edges"]) == (23, 23, 0, 0)
    assert st_["disk_bytes"] > 0 and st_["ann_index"] is False
    assert set(st_["tables"]) == {"observations", "nodes", "edges", "meta"}
    s.close()

def test_a_batch_is_one_commit_per_table(store: LanceStore) -> None:
    before = {n: t.version for n, t in store._tables.items()}
    with store.batch("u"):
        store.add_observations("u", [obs(f"o{i}") for i in range(10)])
        for i in range(10):
            store.upsert_nodes("u", [node(f"n{i}", sources=(f"o{i}",))])
        store.upsert_edges("u", [edge(f"n{i}", f"n{i + 1}") for i in range(9)])
    after = {n: t.version for n, t in store._tables.items()}
    assert {n: after[n] - before[n] for n in after} == {
        "observations": 1, "nodes": 1, "edges": 1, "meta": 2}

def test_reads_are_served_from_memory(store: LanceStore) -> None:
    store.add_observations("u", [obs(f"o{i}") for i in range(2000)])
    store.upsert_nodes("u", [node(f"n{i}", embedding=np.ones(DIM, np.float32))
                             for i in range(50)])
    store.upsert_edges("u", [edge(f"n{i}", f"n{(i * 7) % 50}") for i in range(50)])
    store.edges_of("u", ["n1"])  # warm the graph

    class Boom:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"LanceDB was queried: {name}")

    tables = dict(store._tables)
    store._tables.update(observations=Boom(), edges=Boom(), nodes=Boom())
    try:
        t0 = time.perf_counter()
        assert len(store.existing_observation_ids("u", [f"o{i}" for i in range(0, 4000, 2)])) == \
            1000
        assert time.perf_counter() - t0 < 0.05
        assert [e.id for e in store.edges_of("u", ["n1"])] == [edge_id("n1", "rel", "n7")]
        assert store.count_nodes("u") == 50
        assert len(store.vector_search("u", np.ones(DIM, np.float32), 5)) == 5
    finally:
        store._tables.update(tables)

def igraph_edges(store: LanceStore, namespace: str) -> set[tuple[str, str, str]]:
    """``(src, dst, edge id)`` of every edge in the namespace's igraph topology, with the
    write buffer merged in first: a white-box view of `labile_lancedb._cache.EdgeGraph`."""
    graph = store._spaces.edges(namespace)
    g = graph._ready()
    if graph._pending:
        graph._apply_pending()
    names, eids = graph._vnames, graph._geids
    return {(names[e.source], names[e.target], eids[e.index]) for e in g.es}

def table_edges(path: Path, namespace: str) -> set[tuple[str, str, str]]:
    """``(src, dst, edge id)`` of every committed edge, read by a fresh store from LanceDB."""
    reader = open_store(path)
    try:
        return {(e.src, e.dst, e.id) for e in reader.iter_edges(namespace)}
    finally:
        reader.close()

def test_buffered_edges_are_visible_and_reach_igraph(store: LanceStore) -> None:
    store.upsert_nodes("u", [node(f"n{i}") for i in range(40)])
    store.upsert_edges("u", [edge("n0", "n1")])
    assert igraph_edges(store, "u") == table_edges(store.path, "u") == {
        ("n0", "n1", edge_id("n0", "rel", "n1"))}
    with store.batch("u"):  # buffered, below the merge threshold
        store.upsert_edges("u", [edge(f"n{i}", f"n{i + 1}") for i in range(1, 30)])
        assert [e.id for e in store.edges_of("u", ["n5"], direction="both")] == [
            edge_id("n5", "rel", "n6"), edge_id("n4", "rel", "n5")]
    in_igraph = igraph_edges(store, "u")
    assert in_igraph == table_edges(store.path, "u")
    assert len(in_igraph) == 30
    # Re-pointing an edge id (unusual but allowed) rebuilds the topology.
    store.upsert_edges("u", [Edge(id=edge_id("n0", "rel", "n1"), src="n2", dst="n3",
                                  predicate="rel")])
    assert [e.id for e in store.edges_of("u", ["n0"])] == []
    assert edge_id("n0", "rel", "n1") in [e.id for e in store.edges_of("u", ["n2"])]
    assert ("n2", "n3", edge_id("n0", "rel", "n1")) in igraph_edges(store, "u")
    assert igraph_edges(store, "u") == table_edges(store.path, "u")

def test_a_large_edge_buffer_is_merged_into_igraph_in_one_step(store: LanceStore) -> None:
    """igraph mutation costs O(E) per call, so new edges wait in a buffer that is merged
    once it holds 1,024 edges (or a quarter of the graph); reads see both meanwhile."""
    store.upsert_nodes("u", [node(f"n{i}") for i in range(1200)])
    store.upsert_edges("u", [edge("n0", "n1")])
    store.edges_of("u", ["n0"])  # builds the graph: later edges go to the buffer
    store.upsert_edges("u", [edge(f"n{i}", f"n{i + 1}") for i in range(1, 1100)])
    graph = store._spaces.edges("u")
    assert graph._g is not None
    assert graph._g.ecount() == 1025 and len(graph._pending) == 75  # 1,024 merged at once
    assert [e.id for e in store.edges_of("u", ["n1099"], direction="both")] == [
        edge_id("n1099", "rel", "n1100"), edge_id("n1098", "rel", "n1099")]
    assert igraph_edges(store, "u") == table_edges(store.path, "u")
    assert len(table_edges(store.path, "u")) == 1100

def test_rollback_after_a_flush_restores_the_tables(store: LanceStore) -> None:
    store.upsert_nodes("u", [node("keep", content="coffee keep")])
    versions = {n: store._tables[n].count_rows() for n in ("observations", "nodes", "edges")}
    with pytest.raises(ValueError), store.batch("u"):
        store.add_observations("u", [obs("o1")])
        store.upsert_nodes("u", [node("new", content="coffee new")])
        assert {n.id for n, _ in store.text_search("u", "coffee", 5)} == {"keep", "new"}
        assert store._tables["nodes"].count_rows() == 2  # flushed under the intent
        raise ValueError
    assert {n: store._tables[n].count_rows() for n in versions} == versions
    assert store._open_intents() == {}
    assert [n.id for n, _ in store.text_search("u", "coffee", 5)] == ["keep"]

def test_recovery_recreates_an_index_the_restore_dropped(tmp_path: Path) -> None:
    s = open_store(tmp_path / "m")
    s.upsert_nodes("u", [node("a", content="coffee a")])
    nodes = s._tables["nodes"]
    nodes.drop_index("search_text_idx")
    versions = {n: s._tables[n].version for n in ("observations", "nodes", "edges")}
    nodes.create_index("search_text", config=s._lance.fts_config())
    s.upsert_nodes("u", [node("b", content="coffee b")])

    s._lance.meta_put({"intent": json.dumps(versions)})  # as a killed writer leaves it
    s.close()
    s = open_store(tmp_path / "m")
    assert s._meta_read()["intent"] == ""
    assert [n.id for n in s.iter_nodes("u")] == ["a"]
    assert [n.id for n, _ in s.text_search("u", "coffee", 5)] == ["a"]
    s.close()

def test_returned_embeddings_are_copies(store: LanceStore) -> None:
    store.upsert_nodes("u", [node("a", embedding=np.ones(DIM, np.float32))])
    got = store.get_nodes("u", ["a"])[0]
    assert got.embedding is not None
    got.embedding[:] = 0
    again = store.get_nodes("u", ["a"])[0]
    assert again.embedding is not None and again.embedding.sum() == DIM
    assert attrs.evolve(again).id == "a"
