"""Hand-judged precision of the offline constructor's edges on LoCoMo conv-26 (issue #17).

``judged/predicates.jsonl`` holds, for a fixed-seed sample of at most 20 edges
per predicate (all of them where fewer) drawn by ``labile bench graph
--sample 20``, only ids: the conversation, the predicate, the two node ids,
the source turn ids, a judgement made by reading both turns, and a one-line
reason. The text is read from the dev split at test time (skipped when the
data is absent, as in CI): the graph is rebuilt with the default preset and
every judged edge must still be there, so a change to the rules that drops or
moves a judged edge fails here until the sample is judged again.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from labile_io.locomo import default_locomo_path, load_locomo

DATA = default_locomo_path(Path(__file__).resolve().parents[2])
JUDGED = Path(__file__).with_name("judged") / "predicates.jsonl"
#: Issue #17's targets on the full conv-26.
MIN_PRECISION = 0.8
MIN_PREDICATES = 12


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in JUDGED.read_text(encoding="utf-8").splitlines() if line]


def test_judgement_file_is_ids_only() -> None:
    """The stored sample carries ids, a verdict and a short reason; never turn text."""
    allowed = {"conversation", "predicate", "src", "dst", "src_turns", "dst_turns", "correct",
               "reason"}
    for row in _rows():
        assert set(row) == allowed
        assert isinstance(row["correct"], bool)
        assert 0 < len(row["reason"]) <= 100
        assert all(t.startswith("D") for t in row["src_turns"] + row["dst_turns"])


def test_sampled_precision_meets_the_target() -> None:
    """Per predicate, the judged precision is at least 0.8, on at least 12 predicates."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in _rows():
        tally[row["predicate"]][0] += 1
        tally[row["predicate"]][1] += int(row["correct"])
    assert len(tally) >= MIN_PREDICATES
    low = {p: c / n for p, (n, c) in tally.items() if c / n < MIN_PRECISION}
    assert not low, f"predicates under {MIN_PRECISION}: {low}"


@pytest.mark.slow
def test_judged_edges_are_still_built() -> None:
    """Rebuilding conv-26 offline yields every judged edge, and at least 12 predicates."""
    if not DATA.exists():
        pytest.skip(f"LoCoMo dev split not found at {DATA}")
    from labile_bench.graph import build_graph, sample_edges

    convs, _ = load_locomo(DATA)
    conv = next(c for c in convs if c.sample_id == "conv-26")
    graph = build_graph(conv, "realm")
    built = {(e.src, e.predicate, e.dst) for e in graph.edges}
    judged = [r for r in _rows() if r["conversation"] == "conv-26"]
    missing = [r for r in judged if (r["src"], r["predicate"], r["dst"]) not in built]
    assert not missing, f"{len(missing)} judged edges are no longer built: {missing[:3]}"
    sampled = {(e.src, e.predicate, e.dst) for e in sample_edges(graph, 20)}
    unjudged = sampled - {(r["src"], r["predicate"], r["dst"]) for r in judged}
    assert not unjudged, f"{len(unjudged)} sampled edges carry no judgement: {sorted(unjudged)[:3]}"
    assert len(graph.edge_counts()) >= MIN_PREDICATES
