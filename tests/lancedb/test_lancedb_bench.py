"""The scale benchmark runs end to end at a small size and reports every figure."""

from __future__ import annotations

from pathlib import Path

from labile_lancedb.bench_scale import run_scale_bench


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
    assert (tmp_path / "b" / "nodes.lance").is_dir()  # an explicit path is kept
