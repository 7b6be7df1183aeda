"""`LanceStore.deferred`: edge writes seen at once, committed later, lost only by a crash.

The committed state is read by opening a second store on the same directory
after the first is gone (a ``kill -9`` of a child for the crash cases), or by
scanning the ``edges`` table directly (what LanceDB holds, not the cache).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lancedb_helpers import child_env, edge, node, open_store

from labile.plugin import DeferredStore, StoreError
from labile_lancedb import _sql
from labile_lancedb.store import LanceStore

NS = "ns"


def seeded(path: Path, **kw: object) -> LanceStore:
    store = open_store(path, **kw)  # type: ignore[arg-type]
    with store.batch(NS):
        store.upsert_nodes(NS, [node("a"), node("b"), node("c")])
        store.upsert_edges(NS, [edge("a", "b", weight=1.0)])
    return store


def waiting_ab(path: Path) -> LanceStore:
    """A seeded store with one deferred edit waiting: a-b at weight 0.5."""
    store = seeded(path / "m", deferred_commit_every=100)
    with store.deferred(NS):
        store.upsert_edges(NS, [edge("a", "b", weight=0.5)])
    return store


def committed_weights(store: LanceStore) -> dict[str, float]:
    """Edge id -> weight as LanceDB holds them (not the cache)."""
    rows = store._lance.scan("edges", _sql.namespace_is(NS), ["id", "weight"])
    return dict(zip(rows.column("id").to_pylist(), rows.column("weight").to_pylist(),
                    strict=True))


def weights(store: LanceStore) -> dict[str, float]:
    return {e.id: e.weight for e in store.iter_edges(NS)}


AB, AC = edge("a", "b").id, edge("a", "c").id


def test_is_a_deferred_store(tmp_path: Path) -> None:
    store = open_store(tmp_path / "m")
    assert isinstance(store, DeferredStore)
    store.close()


def test_writes_are_seen_at_once_and_committed_after_n_blocks(tmp_path: Path) -> None:
    store = seeded(tmp_path / "m", deferred_commit_every=3, deferred_max_age_s=86_400.0)
    for i, w in enumerate((0.5, 0.6)):
        with store.deferred(NS):
            store.upsert_edges(NS, [edge("a", "b", weight=w)])
            if i == 0:
                store.upsert_edges(NS, [edge("a", "c", weight=0.1)])
        assert weights(store)[AB] == w  # reads see the edit at once
        assert committed_weights(store) == {AB: 1.0}  # LanceDB does not, yet
    with store.deferred(NS):
        store.upsert_edges(NS, [edge("a", "b", weight=0.7)])
    assert committed_weights(store) == {AB: 0.7, AC: 0.1}  # the third block committed all
    assert not store._carry
    store.close()


def test_close_commits_what_waits(tmp_path: Path) -> None:
    store = seeded(tmp_path / "m", deferred_commit_every=100)
    with store.deferred(NS):
        store.upsert_edges(NS, [edge("a", "b", weight=0.25), edge("b", "c", weight=0.5)])
    store.close()
    again = open_store(tmp_path / "m")
    assert weights(again) == {AB: 0.25, edge("b", "c").id: 0.5}
    again.close()


def test_a_failed_block_is_undone_and_earlier_ones_kept(tmp_path: Path) -> None:
    store = waiting_ab(tmp_path)
    with pytest.raises(RuntimeError), store.deferred(NS):
        store.upsert_edges(NS, [edge("a", "b", weight=0.9), edge("a", "c", weight=0.3)])
        assert weights(store)[AB] == 0.9
        raise RuntimeError("boom")
    assert weights(store) == {AB: 0.5}  # the new edge is gone, the earlier edit stays
    with pytest.raises(StoreError, match="unknown node"), store.deferred(NS):
        store.upsert_edges(NS, [edge("a", "ghost")])
    store.close()
    again = open_store(tmp_path / "m")
    assert weights(again) == {AB: 0.5}
    again.close()


def test_an_ordinary_batch_commits_the_carry_first(tmp_path: Path) -> None:
    store = seeded(tmp_path / "m", deferred_commit_every=100)
    with store.deferred(NS):
        store.upsert_edges(NS, [edge("a", "b", weight=0.5), edge("a", "c", weight=0.2)])
    store.delete(NS, node_ids=["c"])  # ordered after the deferred edit: a-c goes with c
    assert committed_weights(store) == {AB: 0.5}
    assert not store._carry
    store.close()


def test_a_rolled_back_batch_keeps_the_carry(tmp_path: Path) -> None:
    store = waiting_ab(tmp_path)
    with pytest.raises(RuntimeError), store.batch(NS):
        store.upsert_edges(NS, [edge("b", "c", weight=0.4)])
        raise RuntimeError("boom")
    assert weights(store) == {AB: 0.5}  # the cache was reloaded, with the carry over it
    assert committed_weights(store) == {AB: 1.0}
    store.flush()
    assert committed_weights(store) == {AB: 0.5}
    store.close()


def test_writing_a_node_turns_the_block_into_a_batch(tmp_path: Path) -> None:
    store = waiting_ab(tmp_path)
    with store.deferred(NS):
        store.upsert_edges(NS, [edge("a", "c", weight=0.3)])
        store.upsert_nodes(NS, [node("d")])
        store.upsert_edges(NS, [edge("c", "d", weight=0.2)])
    # one transaction at the block's exit: the node, the block's edges, the earlier carry
    assert committed_weights(store) == {AB: 0.5, AC: 0.3, edge("c", "d").id: 0.2}
    assert not store._carry
    with pytest.raises(RuntimeError), store.deferred(NS):
        store.upsert_edges(NS, [edge("a", "b", weight=0.9)])
        store.upsert_nodes(NS, [node("e")])
        raise RuntimeError("boom")
    assert weights(store)[AB] == 0.5 and not store.get_nodes(NS, ["e"])
    store.close()


def test_inside_a_batch_it_joins_the_batch(tmp_path: Path) -> None:
    store = seeded(tmp_path / "m", deferred_commit_every=100)
    with store.batch(NS), store.deferred(NS):
        store.upsert_edges(NS, [edge("a", "b", weight=0.5)])
    assert committed_weights(store) == {AB: 0.5} and not store._carry
    store.close()


def test_a_failed_group_commit_does_not_fail_the_block(tmp_path: Path) -> None:
    store = seeded(tmp_path / "m", deferred_commit_every=1 + 1)
    real_flush = store.flush

    def busy() -> None:
        raise StoreError("busy")

    store.flush = busy  # type: ignore[method-assign]
    for w in (0.5, 0.6, 0.7):  # due after the second: the commit fails, the blocks do not
        with store.deferred(NS):
            store.upsert_edges(NS, [edge("a", "b", weight=w)])
    assert weights(store)[AB] == 0.7 and committed_weights(store) == {AB: 1.0}
    store.flush = real_flush  # type: ignore[method-assign]
    with store.deferred(NS):  # still due: this block's end commits everything
        store.upsert_edges(NS, [edge("a", "c", weight=0.2)])
    assert committed_weights(store) == {AB: 0.7, AC: 0.2}
    store.close()


def test_one_means_commit_each_block(tmp_path: Path) -> None:
    store = seeded(tmp_path / "m", deferred_commit_every=1)
    with store.deferred(NS):
        store.upsert_edges(NS, [edge("a", "b", weight=0.5)])
    assert committed_weights(store) == {AB: 0.5}
    store.close()


CHILD = r'''
import sys
from types import SimpleNamespace as N
from labile._model import Edge, edge_id
from labile_lancedb.config import LanceStoreConfig
from labile_lancedb.store import LanceStore

path = sys.argv[1]
store = LanceStore(LanceStoreConfig(path=path, deferred_commit_every=4,
                                    deferred_max_age_s=8.64e4),
                   N(embedder=N(name="test-emb", dim=16)))
def w(value):
    with store.deferred("ns"):
        store.upsert_edges("ns", [Edge(id=edge_id("a", "rel", "b"), src="a", dst="b",
                                       predicate="rel", weight=value)])
for value in (0.1, 0.2, 0.3, 0.4):  # the fourth block commits all four
    w(value)
for value in (0.5, 0.6, 0.7):  # these wait in memory
    w(value)
sys.stdout.write("ready\n")  # the handshake with the parent, not a log
sys.stdout.flush()
sys.stdin.read()
'''


def test_kill_9_loses_only_the_waiting_edits(tmp_path: Path) -> None:
    seeded(tmp_path / "m").close()
    with subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "m")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                          env=child_env()) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
    store = open_store(tmp_path / "m")
    assert weights(store) == {AB: 0.4}  # the committed group; the three waiting are lost
    assert not store._meta_read().get("intent")
    store.close()


OPS = st.lists(st.tuples(st.sampled_from(["deferred", "failing", "batch", "flush"]),
                         st.sampled_from([("a", "b"), ("a", "c"), ("b", "c")]),
                         st.floats(0.0, 1.0, allow_nan=False)), min_size=1, max_size=8)


@settings(max_examples=8, deadline=None)
@given(ops=OPS)
def test_reads_always_show_the_model_and_close_keeps_it(ops: list[tuple[str, tuple[str, str],
                                                                       float]]) -> None:
    """Whatever mix of deferred blocks (some failing), ordinary batches and flushes: reads
    show every successful write at once, and after close a new store holds exactly them."""
    with tempfile.TemporaryDirectory() as tmp:
        store = seeded(Path(tmp) / "m", deferred_commit_every=3, deferred_max_age_s=86_400.0)
        model = {AB: 1.0}
        for kind, (src, dst), w in ops:
            e = edge(src, dst, weight=w)
            if kind == "flush":
                store.flush()
            elif kind == "batch":
                with store.batch(NS):
                    store.upsert_edges(NS, [e])
                model[e.id] = w
            else:
                try:
                    with store.deferred(NS):
                        store.upsert_edges(NS, [e])
                        if kind == "failing":
                            raise RuntimeError("boom")
                except RuntimeError:
                    pass
                else:
                    model[e.id] = w
            assert weights(store) == model
        store.close()
        again = open_store(Path(tmp) / "m")
        assert weights(again) == model
        again.close()


def test_a_batch_commits_only_its_own_namespaces_carried_edits(tmp_path: Path) -> None:
    """Writers lock one namespace at a time, so namespace A's batch must not write what B's
    deferred blocks carry (B's writer and B's undo would not know of it); flush and close
    commit each namespace under its own batch."""
    store = seeded(tmp_path / "m", deferred_commit_every=100, deferred_max_age_s=86_400.0)
    with store.batch("other"):
        store.upsert_nodes("other", [node("a"), node("b")])
    for ns in (NS, "other"):
        with store.deferred(ns):
            store.upsert_edges(ns, [edge("a", "b", weight=0.3)])
    with store.batch(NS):
        store.upsert_nodes(NS, [node("d")])
    other = store._lance.scan("edges", _sql.namespace_is("other"), ["id"])
    assert committed_weights(store) == {AB: 0.3}  # NS's carried edit went with NS's batch
    assert other.num_rows == 0  # "other"'s still waits
    assert set(store._carry.edges) == {"other"}
    store.flush()
    assert not store._carry
    assert store._lance.scan("edges", _sql.namespace_is("other"), ["id"]).num_rows == 1
    store.close()
