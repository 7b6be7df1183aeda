"""Checks shared by the local and the object-store test suites of the LanceDB store.

A plain module at the tests root (not a conftest): the root conftest puts this folder on
``sys.path``, so every test file can import it by name.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from labile.plugin import Node, Observation


def check_reader_never_sees_an_open_batch(
    writer: Any, reader: Any, obs: Callable[[str], Observation],
    node: Callable[..., Node],
) -> None:
    """A batch written out to the tables early (a full-text search inside it flushes the
    buffer) stays invisible to ``reader``, another connection to ``writer``'s store, until
    the batch commits: the reader reads the table versions the last commit names.

    ``writer``'s store must already hold one committed batch (``o0`` / ``n0``), made
    before ``reader`` was opened; ``obs`` / ``node`` build records as the suite's
    helpers do.
    """
    assert [o.id for o in reader.iter_observations("u")] == ["o0"]
    with writer.batch("u"):
        writer.add_observations("u", [obs("o1")])
        writer.upsert_nodes("u", [node("n1", content="espresso during")])
        assert {n.id for n, _ in writer.text_search("u", "espresso", 5)} == {"n0", "n1"}
        assert writer._open_intents()  # the rows are in LanceDB, under an intent
        assert [o.id for o in reader.iter_observations("u")] == ["o0"]
        assert [n.id for n in reader.iter_nodes("u")] == ["n0"]
        assert [n.id for n, _ in reader.text_search("u", "espresso", 5)] == ["n0"]
    assert [o.id for o in reader.iter_observations("u")] == ["o0", "o1"]
    assert {n.id for n, _ in reader.text_search("u", "espresso", 5)} == {"n0", "n1"}


def raw_namespace_rows(db: Any, namespace: str) -> dict[str, list[str]]:
    """Every row of ``namespace`` in each data table at its newest version, all columns,
    as sorted JSON, read through the plain LanceDB connection ``db`` (no labile store is
    opened, so nothing is recovered or cached)."""
    out = {}
    for name in ("observations", "nodes", "edges"):
        rows = db.open_table(name).search().where(f"namespace = '{namespace}'").limit(None)
        out[name] = sorted(json.dumps(r, sort_keys=True, default=str)
                           for r in rows.to_arrow().to_pylist())
    return out
