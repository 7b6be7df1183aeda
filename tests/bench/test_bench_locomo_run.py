"""The LoCoMo runner end to end on a tiny fixture in the public layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labile import LabileError
from labile_bench.locomo_run import SCHEMA_VERSION, format_table, run_locomo

DATA = Path(__file__).parent / "data" / "locomo_tiny.json"
FAST = {"store": {"type": "memory"}, "embedder": {"type": "hashing"}}


def test_summary_schema_and_metrics(tmp_path: Path) -> None:
    summary, cleaning = run_locomo(DATA, ["bm25", "dense"], ks=(5, 10), log_dir=tmp_path,
                                   config_overrides=FAST, show_progress=False)
    assert summary["schema_version"] == SCHEMA_VERSION
    assert set(summary["presets"]) == {"bm25", "dense"}
    bm25 = summary["presets"]["bm25"]
    assert set(bm25["overall"]) >= {"R@5", "N@5", "R@10", "N@10", "Hit@5", "n"}
    assert bm25["overall"]["n"] == 3  # category 5 is excluded
    assert set(bm25["by_category"]) == {"1", "2", "4"}
    assert 0 <= bm25["overall"]["R@5"] <= 100
    # Six turns in all: at k = 10 every gold turn is retrieved.
    assert bm25["overall"]["R@10"] == 100.0
    assert bm25["by_category"]["4"]["R@5"] == 100.0  # "cello" is a lexical match
    assert bm25["ingest_turns_per_s"] > 0 and bm25["turns"] == 6
    assert set(bm25["query_ms"]) == {"p50", "p95"} and "p50" in bm25["embed_query_ms"]
    assert cleaning.kept == 5


def test_per_question_log(tmp_path: Path) -> None:
    run_locomo(DATA, ["bm25"], ks=(5,), log_dir=tmp_path, config_overrides=FAST,
               show_progress=False)
    rows = [json.loads(line) for line in (tmp_path / "locomo-bm25.jsonl").read_text().splitlines()]
    assert len(rows) == 3
    assert {"question", "gold", "retrieved_turns", "hits", "metrics"} <= set(rows[0])
    assert rows[0]["retrieved_turns"][0] == "D1:2"


def test_table_lists_presets_side_by_side() -> None:
    summary, _ = run_locomo(DATA, ["bm25", "dense"], ks=(5,), config_overrides=FAST,
                            show_progress=False)
    table = format_table(summary, (5,))
    header = table.splitlines()[0]
    assert "bm25" in header and "dense" in header
    assert "R@5" in table and "query_ms p50" in table


def test_presets_given_as_callables_work() -> None:
    """A preset may be registered as a zero-argument callable returning its table."""
    summary, _ = run_locomo(DATA, ["allmem"], ks=(5,), config_overrides=FAST,
                            show_progress=False)
    assert summary["presets"]["allmem"]["overall"]["n"] == 3


def test_reuse_stores_ingests_each_construction_once(tmp_path: Path) -> None:
    """Presets that differ only at query time share one snapshot; results do not change."""
    lance = {"store": {"type": "lancedb"}, "embedder": {"type": "hashing"}}
    fresh, _ = run_locomo(DATA, ["realm"], ks=(5,), store_dir=tmp_path / "a",
                          config_overrides=lance, show_progress=False)
    first, _ = run_locomo(DATA, ["realm", "realm-no-recon"], ks=(5,), store_dir=tmp_path / "b",
                          config_overrides=lance, show_progress=False, reuse_stores=True)
    snapshots = list((tmp_path / "b" / "ingested").iterdir())
    assert len(snapshots) == 1 and (snapshots[0] / "ingest.json").is_file()
    realm, no_recon = first["presets"]["realm"], first["presets"]["realm-no-recon"]
    assert realm["ingest_reused"] is False and no_recon["ingest_reused"] is True
    assert no_recon["ingest_turns_per_s"] == realm["ingest_turns_per_s"]
    again, _ = run_locomo(DATA, ["realm"], ks=(5,), store_dir=tmp_path / "b",
                          config_overrides=lance, show_progress=False, reuse_stores=True)
    # a reused store answers exactly as a freshly ingested one: reconsolidation in the
    # first run did not leak into the snapshot
    assert again["presets"]["realm"]["ingest_reused"] is True
    assert again["presets"]["realm"]["overall"] == fresh["presets"]["realm"]["overall"]


def test_reuse_stores_needs_a_store_dir() -> None:
    with pytest.raises(LabileError, match="--store-dir"):
        run_locomo(DATA, ["bm25"], ks=(5,), config_overrides=FAST, show_progress=False,
                   reuse_stores=True)
