"""Real-data smoke test on the LoCoMo dev split (slow; needs the shared data file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from allmem_helpers import open_memory

from labile._model import Observation
from labile_allmem.diagnostics import inspect_namespace
from labile_bench.metrics import recall_at_k, turns_from_ranked_sources
from labile_io.locomo import default_locomo_path, load_locomo

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_one_locomo_conversation_end_to_end():
    """Ingest one conversation session by session (auto ATC), answer its questions."""
    path = default_locomo_path(ROOT)
    if not path.exists():
        pytest.skip(f"LoCoMo dev file not found at {path}")
    (conv,), _ = load_locomo(path, limit=1)
    mem = open_memory("allmem", atc={"every_n_sessions": 3})
    for s in conv.sessions:
        mem.add([Observation(id=t.id, text=t.text, speaker=t.speaker, timestamp=t.timestamp,
                             session=str(s.number),
                             metadata={"caption": t.caption, "date_text": t.date_text})
                 for t in s.turns], namespace=conv.sample_id)
    scores = []
    for q in conv.questions:
        if q.category in (1, 2, 3, 4) and q.has_evidence:
            res = mem.search(q.question, namespace=conv.sample_id, k=10)
            ranked = turns_from_ranked_sources([h.node.sources for h in res.hits])
            scores.append(recall_at_k(ranked, q.evidence, 5))
    report = inspect_namespace(mem.store, conv.sample_id)
    assert report["recoverability"]["pct_unreachable"] == 0.0
    assert len(report["runs"]) == len(conv.sessions) // 3
    assert report["links"]["max_semantic_out_degree"] <= 8
    # Hashing vectors carry no meaning; BM25 in the hybrid keeps recall well above chance.
    assert sum(scores) / len(scores) > 0.3
