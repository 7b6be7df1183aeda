"""The scale benchmark runs end to end at a small size and reports every figure."""

from __future__ import annotations

from pathlib import Path

import pytest

from labile_bench.lancedb_candidates import CANDIDATES, pick_candidates
from labile_bench.lancedb_scale import run_scale_bench


def test_scale_bench_reports_every_figure(tmp_path: Path) -> None:
    result = run_scale_bench(3000, dim=32, n_queries=20, seed=1, path=str(tmp_path / "b"),
                             progress=False)
    assert result["nodes"] == 3000 and result["dim"] == 32 and result["queries"] == 20
    assert result["ingest"]["nodes_per_s"] > 0
    for path in ("exact", "ann", "auto", "text", "edges_of"):
        assert 0 < result[path]["p50_ms"] <= result[path]["p95_ms"], path
    assert 0.8 <= result["recall_at_10"] <= 1.0
    assert result["ann_build_s"] > 0 and result["peak_rss_mb"] > 0
    assert result["disk_mb"] >= result["live_table_mb"] > 0
    assert result["edges"] == 2999
    rows = {r["name"]: r for r in result["candidates"]}
    assert len(rows) == len(CANDIDATES) and next(iter(rows)) == "exact (float scan)"
    for row in rows.values():
        assert 0 < row["p50_ms"] <= row["p95_ms"] and 0 <= row["recall_at_10"] <= 1, row
        assert row["rss_mb"] > 0
    assert rows["exact (float scan)"]["recall_at_10"] == 1.0
    assert rows["quantized (1-bit + re-rank)"]["recall_at_10"] >= 0.9
    assert rows["quantized (1-bit + re-rank)"]["mem_mb"] > 0
    assert rows["ivf_hnsw_sq m=16 efc=150 ef=100"]["index_disk_mb"] > 0
    assert result["table"].count("\n") == len(CANDIDATES) + 1
    assert all(r["cpu_p50_ms"] > 0 for r in rows.values())
    assert result["refresh"] == {"added": 30, "add_s": result["refresh"]["add_s"],
                                 "found_at_once": "30/30", "codes_rebuilt": False}
    assert (tmp_path / "b" / "nodes.lance").is_dir()  # an explicit path is kept


def test_candidates_are_picked_by_key_with_the_exact_scan_always_first() -> None:
    assert pick_candidates(None) == CANDIDATES
    assert [c.key for c in pick_candidates("auto, quantized")] == ["exact", "quantized", "auto"]
    with pytest.raises(ValueError, match="unknown candidate.*hnsw; known: exact, quantized"):
        pick_candidates("quantized,hnsw")


def test_in_ram_mode_measures_the_in_memory_candidates_without_lancedb(tmp_path: Path) -> None:
    """``in_ram``: the exact, quantized, partitioned and auto rows on a table filled directly;
    LanceDB index candidates are listed as skipped; 1% more nodes are found at once by the
    partitioned scan with neither the codes nor the partitions rebuilt; nothing is written."""
    result = run_scale_bench(4000, dim=32, n_queries=20, seed=2, path=str(tmp_path / "b"),
                             progress=False, in_ram=True,
                             candidates=pick_candidates("quantized,partitioned,auto,ivf_rq"))
    assert result["mode"] == "in-ram" and result["nodes"] == 4000 and result["queries"] == 20
    rows = {r["name"]: r for r in result["candidates"]}
    assert list(rows) == ["exact (float scan)", "quantized (1-bit + re-rank)",
                          "partitioned (cells + 1-bit + re-rank)", "auto"]
    assert result["skipped"] == ["ivf_rq"]
    assert rows["exact (float scan)"]["recall_at_10"] == 1.0
    part = rows["partitioned (cells + 1-bit + re-rank)"]
    assert 0.5 <= part["recall_at_10"] <= 1.0 and part["build_s"] >= 0 and part["mem_mb"] > 0
    assert result["refresh"] == {"added": 40, "add_s": result["refresh"]["add_s"],
                                 "found_at_once": "20/20", "codes_rebuilt": False,
                                 "partitions_rebuilt": False}
    assert result["peak_rss_mb"] > 0 and not (tmp_path / "b").exists()
