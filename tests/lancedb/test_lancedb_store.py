"""The LanceDB store beyond the shared contract: registration and config, persistence
across reopening, schema versions and embedders, refused input, namespaces under SQL
quoting, closing, and the kernel's `Memory` on top of it.

The contract itself (semantics shared with `MemoryStore`) is `labile.testing.StoreContract`,
run by ``tests/contract/test_store_contract.py``. Beside this file: the search paths
(``test_lancedb_search.py``), writes and caches (``test_lancedb_writes.py``), other readers
(``test_lancedb_readers.py``), the write lock and the commit watcher alone
(``test_lancedb_parts.py``) and crash safety under ``kill -9`` (``test_lancedb_crash.py``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lancedb_helpers import DIM, T0, deps, edge, node, obs, open_store, run_py, rvec

from labile._errors import StoreError
from labile._model import edge_id
from labile_lancedb import _migrations
from labile_lancedb.config import LanceStoreConfig
from labile_lancedb.store import LanceStore, migrate


# -- registration and config ------------------------------------------------------------
def test_plugin_registers_lancedb_without_importing_lancedb() -> None:
    code = (
        "import sys\n"
        "from labile.testing import make_registries\n"
        "import labile_lancedb\n"
        "regs = make_registries(labile_lancedb, entry_points=False)\n"
        "c = regs['store'].get('lancedb')\n"
        "print(c.factory.__name__, c.config.__name__, 'lancedb' in sys.modules)\n"
    )
    out = run_py(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["LanceStore", "LanceStoreConfig", "False"]


def test_config_defaults_and_validators() -> None:
    c = LanceStoreConfig()
    assert (c.path, c.ann_threshold, c.read_consistency_s, c.fts_language) == (
        "./memory", 20_000, 0.0, "English")
    assert 20 <= c.nprobes <= 40 and 5 <= c.refine_factor <= 10
    for bad in ({"ann_threshold": 0}, {"nprobes": -1}, {"optimize_every": 0},
                {"read_consistency_s": -1.0}, {"path": 3}, {"fts_language": ""}):
        with pytest.raises((ValueError, TypeError)):
            LanceStoreConfig(**bad)


def test_memory_path_is_temporary(tmp_path: Path) -> None:
    s = LanceStore(LanceStoreConfig(path="memory://"), deps())
    where = s.path
    s.upsert_nodes("a", [node("x")])
    assert where.is_dir()
    s.close()
    assert not where.exists()


@pytest.mark.parametrize("path", ["", "   "])
def test_empty_path_is_refused(path: str) -> None:
    # an empty path used to open a temporary store: `labile add` reported success
    # and nothing was kept once it closed
    with pytest.raises(ValueError, match=r"path is empty.*memory://"):
        LanceStoreConfig(path=path)


def test_deps_must_name_an_embedder() -> None:
    with pytest.raises(StoreError, match="embedder"):
        LanceStore(LanceStoreConfig(path="memory://"), None)


# -- persistence ------------------------------------------------------------------------------
def test_everything_survives_reopening(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    vecs = rvec(rng, 3)
    s = open_store(tmp_path / "m")
    with s.batch("u1"):
        s.add_observations("u1", [obs("o1", "first", speaker="ann", metadata={"a": [1, "x"]}),
                                  obs("o2", "second")])
        a = node("a", embedding=vecs[0], sources=("o1",), keywords=("k",), time_start=T0,
                 attrs={"deep": {"x": 1.5}})
        s.upsert_nodes("u1", [a, node("b", embedding=vecs[1]), node("c")])
        s.upsert_edges("u1", [edge("a", "b", weight=0.25), edge("b", "c")])
    s.upsert_nodes("u1", [attrs.evolve(a, embedding=vecs[2], description="d2")])
    s.close()
    s = open_store(tmp_path / "m")
    assert [o.id for o in s.iter_observations("u1")] == ["o1", "o2"]
    o1 = s.get_observations("u1", ["o1"])[0]
    assert (o1.text, o1.speaker, o1.metadata, o1.timestamp) == ("first", "ann", {"a": [1, "x"]},
                                                               T0)
    assert [n.id for n in s.iter_nodes("u1")] == ["a", "b", "c"]
    a = s.get_nodes("u1", ["a"])[0]
    np.testing.assert_array_equal(a.embedding, vecs[2])
    assert (a.description, a.sources, a.keywords, a.time_start, a.attrs) == (
        "d2", ("o1",), ("k",), T0, {"deep": {"x": 1.5}})
    assert s.get_nodes("u1", ["c"])[0].embedding is None
    assert s.get_edges("u1", [edge_id("a", "rel", "b")])[0].weight == 0.25
    assert [e.id for e in s.edges_of("u1", ["b"], direction="both")] == [
        edge_id("b", "rel", "c"), edge_id("a", "rel", "b")]
    assert [n.id for n, _ in s.vector_search("u1", vecs[2], 1)] == ["a"]
    assert s.existing_observation_ids("u1", ["o1", "o3"]) == {"o1"}
    s.upsert_nodes("u1", [node("d")])  # the seq counter continues: order is kept
    assert [n.id for n in s.iter_nodes("u1")] == ["a", "b", "c", "d"]
    s.close()


def test_other_embedder_is_refused_naming_both(tmp_path: Path) -> None:
    open_store(tmp_path / "m").close()
    with pytest.raises(StoreError) as err:
        LanceStore(LanceStoreConfig(path=str(tmp_path / "m")), deps(name="other", dim=DIM))
    assert "'test-emb'" in str(err.value) and "'other'" in str(err.value)
    with pytest.raises(StoreError) as err:
        LanceStore(LanceStoreConfig(path=str(tmp_path / "m")), deps(dim=32))
    assert f"{DIM}-d" in str(err.value) and "32-d" in str(err.value)


@pytest.mark.parametrize("version", [0, 2])
def test_other_schema_versions_are_refused(tmp_path: Path, version: int) -> None:
    s = open_store(tmp_path / "m")
    s._lance.meta_put({"schema_version": str(version)})  # as an older / newer labile would
    s.close()
    with pytest.raises(StoreError) as err:
        open_store(tmp_path / "m")
    assert str(version) in str(err.value) and "version 1" in str(err.value)


def test_migrate_runs_registered_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setitem(_migrations.MIGRATIONS, 1, lambda db: calls.append(1))
    migrate(object(), 1, 2)
    assert calls == [1]
    with pytest.raises(StoreError, match="no migration from version 0"):
        migrate(object(), 0, 2)


# -- bad input --------------------------------------------------------------------------------
def test_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(StoreError, match="regular file"):
        open_store(f)


def test_read_only_directory_is_refused(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as a user (root) for whom read-only directories are writable")
        with pytest.raises(StoreError, match="not writable"):
            open_store(ro)
        with pytest.raises(StoreError, match="cannot create"):
            open_store(ro / "sub")
    finally:
        ro.chmod(0o700)


def test_huge_text_is_stored_in_full(tmp_path: Path) -> None:
    big = "word " * 1_000_000 + "needle"
    s = open_store(tmp_path / "m")
    s.add_observations("u", [obs("o1", big)])
    s.upsert_nodes("u", [node("n", content=big)])
    s.close()
    s = open_store(tmp_path / "m")
    assert s.get_observations("u", ["o1"])[0].text == big
    assert s.get_nodes("u", ["n"])[0].content == big
    assert [n.id for n, _ in s.text_search("u", "needle", 3)] == ["n"]
    s.close()


def test_lone_surrogates_are_refused_and_nothing_is_written(store: LanceStore) -> None:
    bad = b"caf\xff".decode("utf-8", "surrogateescape")
    unchecked = obs("o2")  # Observation refuses it when built; the store must too
    object.__setattr__(unchecked, "text", bad)
    with pytest.raises(StoreError, match="not valid Unicode"):
        store.add_observations("u", [obs("o1"), unchecked])
    with pytest.raises(StoreError, match="not valid Unicode"):
        store.upsert_nodes("u", [node("n", content=bad)])
    with pytest.raises(StoreError, match="not valid Unicode"):
        store.upsert_nodes("u", [node("n", attrs={"k": bad})])
    with pytest.raises(StoreError, match="not valid Unicode"):
        store.upsert_nodes(bad, [node("n")])
    assert store.namespaces() == []
    nul = "nul \x00 and emoji 🦀 and \u00e9"  # valid Unicode is stored verbatim
    store.add_observations("u", [obs("o3", nul)])
    assert store.get_observations("u", ["o3"])[0].text == nul


def test_unstorable_records_are_refused(store: LanceStore) -> None:
    with pytest.raises(StoreError, match="JSON"):
        store.add_observations("u", [obs("o1", metadata={"when": T0})])
    with pytest.raises(StoreError, match="16-d"):
        store.upsert_nodes("u", [node("n", embedding=np.ones(3, np.float32))])
    with pytest.raises(StoreError, match="16-d"):
        store.vector_search("u", np.ones(3, np.float32), 3)
    with pytest.raises(StoreError, match="unit separator"):
        store.upsert_nodes("a\x1fb", [node("n")])
    with pytest.raises(StoreError, match="direction"):
        store.edges_of("u", ["n"], direction="sideways")  # type: ignore[arg-type]
    assert store.count_nodes("u") == 0


# -- namespaces ---------------------------------------------------------------------------------
def test_quotes_in_namespaces_do_not_escape_the_filter(tmp_path: Path) -> None:
    s = open_store(tmp_path / "m")
    rng = np.random.default_rng(1)
    names = ["plain", "it's", "x' OR '1'='1", "' OR TRUE --", 'dq"ns', "back\\slash"]
    for ns in names:
        s.add_observations(ns, [obs("o", f"text of {ns} coffee")])
        s.upsert_nodes(ns, [node("n", content=f"coffee {ns}", embedding=rvec(rng)[0]),
                            node("m", content="coffee again", embedding=rvec(rng)[0])])
        s.upsert_edges(ns, [edge("n", "m")])
    s.close()
    s = open_store(tmp_path / "m")  # reload every cache from LanceDB through the SQL filters
    assert s.namespaces() == sorted(names)
    q = rvec(rng)[0]
    for ns in names:
        assert [o.text for o in s.iter_observations(ns)] == [f"text of {ns} coffee"]
        assert s.get_observations(ns, ["o"])[0].namespace == ns
        assert {n.namespace for n in s.iter_nodes(ns)} == {ns}
        assert s.count_nodes(ns) == 2 and s.count_edges(ns) == 1
        assert {n.namespace for n, _ in s.text_search(ns, "coffee", 10)} == {ns}
        assert len(s.text_search(ns, "coffee", 10)) == 2
        assert {n.namespace for n, _ in s.vector_search(ns, q, 10, mode="exact")} == {ns}
        assert s.stats(ns)["nodes"] == 2
    assert s.text_search("x", "coffee", 10) == []
    s.close()


NAMESPACES = ["a", "b'b", "c' OR '1'='1"]
_EXAMPLES = itertools.count()
_op = st.one_of(
    st.tuples(st.just("obs"), st.sampled_from(NAMESPACES), st.integers(0, 5)),
    st.tuples(st.just("node"), st.sampled_from(NAMESPACES), st.integers(0, 5)),
    st.tuples(st.just("edge"), st.sampled_from(NAMESPACES), st.integers(0, 5),
              st.integers(0, 5)),
    st.tuples(st.just("batch"), st.sampled_from(NAMESPACES), st.booleans()),
)


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=st.lists(_op, min_size=1, max_size=14), salt=st.integers(0, 10**9))
def test_interleaved_writes_never_leak_between_namespaces(
    shared_store: LanceStore, ops: list[tuple[Any, ...]], salt: int
) -> None:
    """For any interleaving of writes and of committed or rolled-back batches over three
    namespaces (two of them quoted so that unescaped SQL would break), every read of a
    namespace, searches included, returns exactly the rows written to it."""
    s = shared_store
    prefix = f"h{next(_EXAMPLES)}-"
    rng = np.random.default_rng(salt)
    model: dict[str, dict[str, set[str]]] = {
        ns: {"obs": set(), "nodes": set(), "edges": set()} for ns in NAMESPACES}

    def apply(op: tuple[Any, ...]) -> None:
        kind, ns, *rest = op
        real = prefix + ns
        m = model[ns]
        if kind == "obs":
            oid = f"o{rest[0]}"
            if oid not in m["obs"]:
                s.add_observations(real, [obs(oid, f"coffee {ns}")])
                m["obs"].add(oid)
        elif kind == "node":
            nid = f"n{rest[0]}"
            s.upsert_nodes(real, [node(nid, content=f"coffee {nid}",
                                       embedding=rvec(rng)[0])])
            m["nodes"].add(nid)
        elif kind == "edge":
            a, b = f"n{rest[0]}", f"n{rest[1]}"
            if a in m["nodes"] and b in m["nodes"]:
                s.upsert_edges(real, [edge(a, b)])
                m["edges"].add(edge_id(a, "rel", b))
        else:  # a batch writing a node, committed or rolled back
            nid = f"n{len(m['nodes']) + 10}"
            try:
                with s.batch(real):
                    s.upsert_nodes(real, [node(nid, content=f"coffee {nid}",
                                               embedding=rvec(rng)[0])])
                    if rest[0]:
                        raise KeyError("rollback")
                m["nodes"].add(nid)
            except KeyError:
                pass

    for op in ops:
        apply(op)
    q = rvec(rng)[0]
    for ns in NAMESPACES:
        real, m = prefix + ns, model[ns]
        assert {o.id for o in s.iter_observations(real)} == m["obs"]
        assert {n.id for n in s.iter_nodes(real)} == m["nodes"]
        assert {e.id for e in s.iter_edges(real)} == m["edges"]
        hits = s.vector_search(real, q, 50)
        assert {n.id for n, _ in hits} == m["nodes"]
        assert {n.namespace for n, _ in hits} <= {real}
        assert {n.id for n, _ in s.text_search(real, "coffee", 50)} == m["nodes"]
        assert {e.id for e in s.edges_of(real, list(m["nodes"]), direction="both")} == m["edges"]
        others = set().union(*(model[o]["nodes"] for o in NAMESPACES if o != ns)) - m["nodes"]
        assert s.get_nodes(real, sorted(others)) == []


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LanceStore]:
    s = open_store(tmp_path_factory.mktemp("shared") / "m", optimize_every=7)
    yield s
    s.close()


def test_close_inside_a_batch_is_refused(store: LanceStore) -> None:
    with store.batch("u"):
        store.upsert_nodes("u", [node("a")])
        with pytest.raises(StoreError, match="inside an open batch"):
            store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.upsert_nodes("u", [node("b")])


def test_memory_pipeline_on_the_lancedb_store(tmp_path: Path) -> None:
    """The kernel's `Memory` over this store: add, idempotent re-add, search, reopen."""
    from labile._memory import Memory
    from labile.testing import make_registries, observations

    if "hybrid" not in make_registries()["preset"]:
        pytest.skip("the hybrid preset (baseline bundle) is not available")
    config = {"preset": "hybrid", "store": {"type": "lancedb", "path": str(tmp_path / "m")},
              "embedder": {"type": "hashing"}}
    turns = observations(["I moved to Paris in 2020", "My sister Anna plays the piano",
                          "We adopted a cat named Tom"])
    with Memory.open(config) as memory:
        report = memory.add(turns, namespace="u1")
        assert report.added == ["o1", "o2", "o3"] and report.nodes_written > 0
        again = memory.add(turns, namespace="u1")
        assert again.skipped_existing == ["o1", "o2", "o3"] and again.added == []
        hits = memory.search("piano", namespace="u1").hits
        assert hits and "piano" in hits[0].node.content
        memory.consolidate(namespace="u1")
        assert memory.stats("u1")["store"]["observations"] == 3
    with Memory.open(config) as memory:
        assert memory.search("cat", namespace="u1").hits[0].node.content.endswith("Tom")
        assert memory.search("cat", namespace="u2").hits == ()
