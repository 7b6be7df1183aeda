"""Erasing history cannot leave a store that no reader can read (issue #27, item 1).

`erase_history` moves every namespace's pin to the rewritten versions before it
deletes anything. These tests stop it at each step (an exception that skips
what follows, as a kill would), rebuild the state an older build's ordering
left (versions deleted, pins not moved), and check that a fresh process reads
every namespace and that `repair_storage` brings the store back to a clean one.
"""

from __future__ import annotations

import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lancedb_helpers import node, obs, open_store, rvec

from labile.plugin import StoreError
from labile_lancedb import _erase
from labile_lancedb._tables import DATA_TABLES, ERASE_PENDING
from labile_lancedb.store import LanceStore

SPACES = ("alpha", "beta")


def _fill(store: LanceStore) -> None:
    for ns in SPACES:
        store.add_observations(ns, [obs(f"{ns}-{i}", f"turn {i} of {ns}") for i in range(4)])
    store.delete("alpha", observation_ids=["alpha-0"])


def _expected() -> dict[str, list[str]]:
    return {"alpha": [f"alpha-{i}" for i in (1, 2, 3)], "beta": [f"beta-{i}" for i in range(4)]}


def _read_all(path: Path) -> dict[str, list[str]]:
    with open_store(path) as fresh:
        return {ns: [o.id for o in fresh.iter_observations(ns)] for ns in SPACES}


def _versions_kept(store: LanceStore) -> dict[str, int]:
    return {name: len(store._tables[name].list_versions()) for name in DATA_TABLES}


def _old_ordering(store: LanceStore) -> None:
    """What an erase of the older build did before its process was killed: rewrite,
    then delete every older version, with the pins never moved."""
    engine = store._engine
    tables = engine.tables
    with engine.file_lock.holding():
        tables.checkout_latest()
        for name in DATA_TABLES:
            table = tables.handles[name]
            table.add(table.to_arrow(), mode="overwrite")
        tables.ensure_indexes()
        _erase._cleanup(engine)


def test_a_store_broken_by_the_old_ordering_is_read_and_repaired(tmp_path: Path) -> None:
    path = tmp_path / "mem"
    store = open_store(path)
    _fill(store)
    _old_ordering(store)
    store.close()
    # Every pin names a deleted version; a fresh process still reads every namespace
    # (no intent is open: the newest versions hold exactly the committed rows).
    assert _read_all(path) == _expected()
    with open_store(path) as fresh:
        assert fresh.text_search("beta", "turn", 10) is not None
        done = fresh._engine.repair_storage()
        assert done["pins_healed"] == ["alpha", "beta"]
    with open_store(path) as healed:
        meta = healed._lance.latest_meta()
        assert all(healed._engine._pins_exist(meta, ns) for ns in SPACES)
        healed.add_observations("alpha", [obs("alpha-9")])
    assert _read_all(path)["alpha"] == [*_expected()["alpha"], "alpha-9"]


class _Killed(BaseException):
    """Stands for a SIGKILL: no handler of the erase catches it."""


def _die(*_: Any, **__: Any) -> None:
    raise _Killed


@pytest.mark.parametrize("step", ["rewrite", "indexes", "ann", "cleanup", "marker"])
def test_an_erase_stopped_at_any_step_leaves_a_readable_store_that_repair_finishes(
        tmp_path: Path, step: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "mem"
    store = open_store(path)
    _fill(store)
    store.upsert_nodes("beta", [node(f"n{i}", embedding=vec) for i, vec in
                                enumerate(rvec(np.random.default_rng(0), 70))])
    store.build_ann_index()
    tables = store._engine.tables
    if step == "rewrite":  # dies after every table was rewritten, before the indexes
        monkeypatch.setattr(tables, "ensure_indexes", _die)
    elif step == "indexes":
        monkeypatch.setattr(tables, "fts_config", _die)
    elif step == "ann":
        monkeypatch.setattr(_erase, "train_ann_index", _die)
    elif step == "cleanup":  # dies after deleting the versions of the first table

        def half_cleanup(engine: Any) -> None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # LanceDB: readers of old versions fail
                engine.tables.handles["observations"].optimize(
                    cleanup_older_than=timedelta(0), delete_unverified=True)
            raise _Killed

        monkeypatch.setattr(_erase, "_cleanup", half_cleanup)
    else:  # dies just before clearing the marker
        real_put = tables.meta_put

        def put(items: dict[str, str]) -> None:
            if items.get(ERASE_PENDING) == "":
                raise _Killed
            real_put(items)

        monkeypatch.setattr(tables, "meta_put", put)
    with pytest.raises(_Killed):
        store.erase_history()
    monkeypatch.undo()
    store._engine._locks.close()  # a killed process's locks go with it
    assert _read_all(path) == _expected()
    with open_store(path) as fresh:
        assert fresh._lance.latest_meta().get(ERASE_PENDING) == "1"
        assert fresh._engine.repair_storage()["erase_finished"] is True
        assert set(_versions_kept(fresh).values()) == {1}  # nothing of the history left
        assert not fresh._lance.latest_meta().get(ERASE_PENDING)
    assert _read_all(path) == _expected()


def test_a_failed_erase_says_what_stands_in_a_store_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_store(tmp_path / "mem") as store:
        _fill(store)

        def full(*_: Any, **__: Any) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(_erase, "_cleanup", full)
        with pytest.raises(StoreError, match="removal committed before it stands"):
            store.erase_history()
        monkeypatch.undo()
        assert [o.id for o in store.iter_observations("alpha")] == _expected()["alpha"]


def test_labile_repair_heals_a_store_broken_by_the_old_ordering(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from labile import Memory
    from labile_cli import main

    config = tmp_path / "labile.toml"
    config.write_text(f'preset = "bm25"\n[embedder]\ntype = "hashing"\n'
                      f'[store]\npath = "{tmp_path / "s"}"\n', encoding="utf-8")
    with Memory.open(config) as memory:
        memory.add([obs(f"t{i}", f"we moved to Porto {i}") for i in range(3)], namespace="u")
        memory.forget("u", ["t0"])
        writer: Any = memory.store
        _old_ordering(getattr(writer, "inner", writer))
    assert main(["repair", "--config", str(config)]) == 0
    assert "read versions restored for u" in capsys.readouterr().out
    with Memory.open(config) as memory:
        store: Any = memory.store
        store = getattr(store, "inner", store)
        assert store._engine._pins_exist(store._lance.latest_meta(), "u")
        assert [o.id for o in memory.list("u").items] == ["t1", "t2"]
        assert memory.search("Porto", namespace="u", k=2).hits
