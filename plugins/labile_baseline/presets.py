"""The baseline presets: the embedded default store and embedder, no LLM, no graph."""

from __future__ import annotations

from typing import Any


def _preset(seeder: str, extractor: str = "baseline.turns") -> dict[str, Any]:
    return {
        "store": {"type": "lancedb"},
        "embedder": {"type": "minilm"},
        "llm": {"type": "none"},
        "extractor": {"type": extractor},
        "retrieval": {"seed": [{"type": seeder}]},
    }


PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "dense": ("one node per turn, cosine search (MiniLM)", _preset("baseline.dense")),
    "bm25": ("one node per turn, BM25 full-text search", _preset("baseline.bm25")),
    "hybrid": ("one node per turn, RRF of dense and BM25", _preset("baseline.hybrid")),
    "context": ("no graph: BM25 over each turn with the one before it, z-score fused with "
                "0.5 x MiniLM, named-speaker boost (the bar for graph presets)",
                _preset("baseline.context", "baseline.context_turns")),
}
