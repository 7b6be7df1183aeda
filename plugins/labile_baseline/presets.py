"""The baseline presets: the embedded default store and embedder, no LLM, no graph."""

from __future__ import annotations

from typing import Any


def _preset(seeder: str) -> dict[str, Any]:
    return {
        "store": {"type": "lancedb"},
        "embedder": {"type": "minilm"},
        "llm": {"type": "none"},
        "extractor": {"type": "baseline.turns"},
        "retrieval": {"seed": [{"type": seeder}]},
    }


PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "dense": ("one node per turn, cosine search (MiniLM)", _preset("baseline.dense")),
    "bm25": ("one node per turn, BM25 full-text search", _preset("baseline.bm25")),
    "hybrid": ("one node per turn, RRF of dense and BM25", _preset("baseline.hybrid")),
}
