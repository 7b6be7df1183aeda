"""``inspect_namespace``: surface size, recoverability, links, edits, latency."""

from __future__ import annotations

from datetime import UTC, datetime

from allmem_helpers import open_memory, session

from labile._memstore import MemoryStore
from labile._model import Edge, Node, edge_id
from labile_allmem.diagnostics import inspect_namespace, percentile
from labile_allmem.schema import LINEAGE, SEMANTIC, UNIT, VERSION

T = datetime(2024, 1, 1, tzinfo=UTC)


def unit(nid: str, visible: bool) -> Node:
    return Node(id=nid, kind=UNIT, content=nid, visible=visible, time_start=T)


def link(src: str, pred: str, dst: str, active: bool = True) -> Edge:
    return Edge(id=edge_id(src, pred, dst), src=src, dst=dst, predicate=pred,
                attrs={} if active else {"active": False})


def test_recoverability_over_directed_active_links():
    """Hop distance from V+; inactive links and wrong directions do not count."""
    store = MemoryStore()
    store.upsert_nodes("n", [unit("v", True), unit("a1", False), unit("a2", False),
                             unit("a3", False), unit("a4", False), unit("orphan", False)])
    store.upsert_edges("n", [
        link("v", VERSION, "a1"), link("a1", LINEAGE, "a2"), link("a2", LINEAGE, "a3"),
        link("a4", LINEAGE, "v"),  # points the wrong way: a4 stays unreachable
        link("v", SEMANTIC, "orphan", active=False),
    ])
    report = inspect_namespace(store, "n", hop_budget=2)
    rec = report["recoverability"]
    assert rec["archived"] == 5 and rec["unreachable"] == 2
    assert rec["pct_unreachable"] == 40.0
    assert rec["median_hops"] == 2.0
    assert rec["h95"] is None  # 95% coverage is never reached
    assert rec["pct_within_budget"] == 40.0
    assert rec["histogram"] == {"1": 1, "2": 1, "3": 1}
    assert report["links"]["inactive"] == {"semantic": 1}
    assert report["surface"]["visible"] == 1 and report["surface"]["archived"] == 5


def test_h95_when_everything_is_reachable():
    """H_0.95 is the smallest budget covering 95% of archived units."""
    store = MemoryStore()
    store.upsert_nodes("n", [unit("v", True), *(unit(f"a{i}", False) for i in range(20))])
    edges = [link("v", LINEAGE, f"a{i}") for i in range(19)] + [link("a0", LINEAGE, "a19")]
    store.upsert_edges("n", edges)
    rec = inspect_namespace(store, "n")["recoverability"]
    assert rec["pct_unreachable"] == 0.0 and rec["median_hops"] == 1.0 and rec["h95"] == 1


def test_full_report_after_consolidation_and_search():
    """A consolidated namespace reports its surface, 0% unreachable, edits and latency."""
    mem = open_memory()
    mem.add(session(1, [("Ann", "I work as a nurse at the city hospital in Boston.")]),
            namespace="n")
    mem.add(session(2, [("Ann", "I no longer work as a nurse at the city hospital in "
                                "Boston, I switched to teaching.")]), namespace="n")
    mem.consolidate(namespace="n")
    results = [mem.search("nurse", namespace="n"), mem.search("teaching", namespace="n")]
    report = inspect_namespace(mem.store, "n", results=results)
    assert report["surface"]["history"] == 2
    assert report["surface"]["visible"] == 1 and report["surface"]["shrink_ratio"] == 0.5
    assert report["recoverability"]["pct_unreachable"] == 0.0
    assert report["edits"]["update"]["executed"] == 1
    assert report["runs"][0]["visible"] == 1 and report["runs"][0]["history"] == 2
    lat = report["latency_ms"]
    assert {"embed", "total", "seed:allmem.visible_anchor", "expand:allmem.typed_expand",
            "filter:allmem.rerank"} <= set(lat)
    assert lat["total"]["n"] == 2.0


def test_empty_namespace():
    """An unknown namespace gives zeros, not errors."""
    report = inspect_namespace(MemoryStore(), "nothing")
    assert report["surface"]["units"] == 0 and report["recoverability"]["archived"] == 0
    assert report["latency_ms"] == {} and report["runs"] == []


def test_percentile():
    """Linear interpolation between order statistics."""
    assert percentile([], 50) is None
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 95) == 5.0
