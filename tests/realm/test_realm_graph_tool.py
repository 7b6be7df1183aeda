"""``labile bench graph``: counts per predicate and an ids-only sample to judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labile_bench.graph import BuiltGraph, sample_edges
from labile_cli import main

FIXTURE = Path(__file__).resolve().parents[1] / "bench" / "data" / "locomo_tiny.json"


def test_graph_command_writes_counts_and_an_ids_only_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample, summary = tmp_path / "sample.jsonl", tmp_path / "summary.json"
    code = main(["bench", "graph", str(FIXTURE), "--embedder", "hashing", "--sample", "3",
                 "--out", str(sample), "--json", str(summary)])
    out = capsys.readouterr().out
    assert code == 0 and "turns/s" in out and "precedes" in out
    rows = [json.loads(line) for line in sample.read_text().splitlines()]
    assert rows and all(set(r) == {"conversation", "predicate", "src", "dst", "src_turns",
                                   "dst_turns", "correct", "reason"} for r in rows)
    assert all(r["correct"] is None for r in rows)
    per_predicate: dict[str, int] = {}
    for r in rows:
        per_predicate[r["predicate"]] = per_predicate.get(r["predicate"], 0) + 1
    assert max(per_predicate.values()) <= 3
    counts = json.loads(summary.read_text())["conversations"]
    (conv,) = counts.values()
    assert conv["turns"] > 0 and conv["edges"]["realm.precedes"] > 0


def test_sample_is_stable_per_predicate_and_draws_one_direction_of_a_pair() -> None:
    from datetime import UTC, datetime

    from labile._model import Edge, Origin

    t = datetime(2024, 1, 1, tzinfo=UTC)

    def edge(src: str, pred: str, dst: str) -> Edge:
        return Edge(id=f"{src}>{pred}>{dst}", src=src, dst=dst, predicate=pred, weight=0.5,
                    description="", origin=Origin.CONSTRUCTION, created_at=t, updated_at=t)

    many = [edge(f"a{i}", "realm.precedes", f"b{i}") for i in range(30)]
    pair = [edge("x", "realm.correlates", "y"), edge("y", "realm.correlates", "x")]
    graph = BuiltGraph(sample_id="c", turns=1, seconds=1.0, nodes={}, edges=many + pair)
    first = sample_edges(graph, 5)
    assert [e.id for e in first] == [e.id for e in sample_edges(graph, 5)]
    assert [e.src for e in first if e.predicate == "realm.correlates"] == ["x"]
    # Another predicate's edges changing leaves this one's sample as it was.
    more = BuiltGraph(sample_id="c", turns=1, seconds=1.0, nodes={},
                      edges=[*many, edge("p", "realm.comprises", "q"), *pair])
    assert [e.id for e in sample_edges(more, 5) if e.predicate == "realm.precedes"] == \
        [e.id for e in first if e.predicate == "realm.precedes"]
