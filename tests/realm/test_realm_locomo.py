"""Real-data check (slow): offline REALM beats BM25 over dated turns on one LoCoMo conversation."""

from __future__ import annotations

from pathlib import Path

import pytest

from labile._memory import Memory
from labile.text.bm25 import BM25Index
from labile_bench.metrics import RetrievalScorer, turns_from_ranked_sources
from labile_io.locomo import default_locomo_path, load_locomo, observations_of, turn_document

DEV = default_locomo_path(Path(__file__).resolve().parents[2])

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not DEV.exists(), reason="LoCoMo dev split not available")
def test_realm_beats_bm25_on_one_conversation() -> None:
    convs, _ = load_locomo(DEV, limit=1)
    conv = convs[0]
    mem = Memory.open({"preset": "realm", "store": {"type": "memory"},
                       "embedder": {"type": "minilm"}})
    for batch in observations_of(conv):
        mem.add(batch, namespace=conv.sample_id)
    bm25 = BM25Index()
    for turn in conv.turns:
        bm25.add(turn.id, turn_document(turn))
    realm, base = RetrievalScorer(ks=(5,)), RetrievalScorer(ks=(5,))
    last = conv.sessions[-1].timestamp
    for q in conv.questions:
        if q.category not in (1, 2, 3, 4) or not q.evidence:
            continue
        result = mem.search(q.question, namespace=conv.sample_id, k=10, as_of=last)
        realm.add(turns_from_ranked_sources([h.node.sources for h in result.hits]), q.evidence,
                  category=q.category)
        mem.feedback(result, answer=None)
        base.add([d for d, _ in bm25.search(q.question, 10)], q.evidence, category=q.category)
    ours = realm.report()["overall"]["recall@5"]
    theirs = base.report()["overall"]["recall@5"]
    assert ours > theirs + 5.0, (ours, theirs)
