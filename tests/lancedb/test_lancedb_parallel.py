"""Writers of different namespaces in one store: a rollback touches only its namespace.

Two store objects on one directory write namespaces ``a`` and ``b`` (each holds
its namespace's lock; both hold the store lock shared). Batches of ``a`` are
rolled back after their rows reached LanceDB (a full-text search writes the
buffer out) and after ``b`` committed in the middle of them: the logical undo
brings ``a``'s rows back exactly and leaves ``b``'s rows, every column, as they
were. A property test over random histories, and two examples.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lancedb_helpers import node, obs, open_store

from labile.plugin import Edge
from labile_lancedb.store import LanceStore
from store_checks import raw_namespace_rows


def _rows(path: Path, ns: str) -> dict[str, list[str]]:
    """Every row of ``ns`` in each data table at its newest version (all columns)."""
    import lancedb

    return raw_namespace_rows(lancedb.connect(str(path)), ns)


def _b_commit(store: LanceStore, step: int, n_new: int, drop_one: bool) -> None:
    """One committed batch of ``b``: new nodes, an edge, an update, maybe a deletion."""
    with store.batch("b"):
        ids = [f"b{step}-{i}" for i in range(n_new)]
        store.add_observations("b", [obs(f"o-{i}") for i in ids])
        store.upsert_nodes("b", [node(i, content=f"coffee {i}") for i in ids])
        known = sorted(n.id for n in store.iter_nodes("b"))
        if len(known) >= 2:
            store.upsert_edges("b", [Edge(id=f"e{step}", src=known[0], dst=known[-1],
                                          predicate="near", weight=0.5 + step % 40 / 100)])
        if drop_one and len(known) > 2:
            store.delete("b", node_ids=[known[1]])


def _a_rolled_back(store: LanceStore, other: LanceStore, step: int, flush: bool,
                   delete: bool, b_inside: bool, path: Path) -> dict[str, list[str]]:
    """A batch of ``a`` that fails; ``b`` may commit while it is open. Returns ``b``'s
    rows as they were just before the rollback."""
    b_rows: dict[str, list[str]] = {}
    with pytest.raises(RuntimeError), store.batch("a"):
        store.add_observations("a", [obs(f"oa{step}")])
        known = [n.id for n in store.iter_nodes("a")]
        store.upsert_nodes("a", [node(f"a{step}", content=f"coffee new {step}")])
        if known:  # an update of a stored node: attrs change, content stays
            old = store.get_nodes("a", [known[0]])[0]
            store.upsert_nodes("a", [node(old.id, content=old.content,
                                            attrs={"seen": step})])
        if delete and known:
            store.delete("a", node_ids=[known[-1]])
        if flush:
            store.text_search("a", "coffee", 3)  # the buffer reaches LanceDB
        if b_inside:
            _b_commit(other, 100 + step, 2, drop_one=False)
        b_rows = _rows(path, "b")
        raise RuntimeError("fail the batch")
    return b_rows


_STEP = st.one_of(
    st.tuples(st.just("b"), st.integers(1, 3), st.booleans()),
    st.tuples(st.just("a_commit"), st.integers(1, 2), st.booleans()),
    st.tuples(st.just("a_fail"), st.booleans(), st.booleans(), st.booleans()),
)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_STEP, min_size=1, max_size=4))
def test_a_rollback_in_one_namespace_never_changes_another(steps: list[tuple]) -> None:
    """For any history of committed batches of ``b`` and committed or failed batches of
    ``a`` (a failed one flushed or not, deleting or not, with ``b`` committing inside it
    or not), a rollback of ``a`` leaves every column of every row of ``b`` as it was and
    brings ``a``'s rows back exactly, with no intent left."""
    tmp = Path(tempfile.mkdtemp(prefix="labile-par-"))
    path = tmp / "m"
    sa, sb = open_store(path), open_store(path)
    try:
        for i, step in enumerate(steps):
            if step[0] == "b":
                _b_commit(sb, i, step[1], step[2])
            elif step[0] == "a_commit":
                with sa.batch("a"):
                    sa.upsert_nodes("a", [node(f"a{i}-{j}", content=f"coffee a {i} {j}")
                                          for j in range(step[1])])
                    sa.add_observations("a", [obs(f"oa{i}")])
            else:
                a_before = _rows(path, "a")
                b_before = _a_rolled_back(sa, sb, i, *step[1:], path=path)
                assert _rows(path, "b") == b_before  # b: every column of every row
                assert _rows(path, "a") == a_before  # a: exactly as before the batch
                assert sa._open_intents() == {}
        reopened = open_store(path)
        try:  # what a fresh reader sees agrees with the tables
            for ns in ("a", "b"):
                assert len(reopened.count_nodes(ns) * [0]) == len(_rows(path, ns)["nodes"])
        finally:
            reopened.close()
    finally:
        sa.close()
        sb.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_two_namespaces_batches_open_at_once_in_one_process(tmp_path: Path) -> None:
    """Two store objects hold batches of ``a`` and ``b`` open at the same time (the
    same namespace would wait for the lock); both commit."""
    sa, sb = open_store(tmp_path / "m"), open_store(tmp_path / "m", lock_timeout_s=0.5)
    try:
        with sa.batch("a"):
            sa.upsert_nodes("a", [node("x", content="coffee x")])
            sa.text_search("a", "coffee", 1)
            with sb.batch("b"):
                sb.upsert_nodes("b", [node("y", content="coffee y")])
            assert sb.count_nodes("a") == 0  # a's batch is not visible before its commit
        assert sb.count_nodes("a") == 1 and sa.count_nodes("b") == 1
    finally:
        sa.close()
        sb.close()
