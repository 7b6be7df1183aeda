"""What several kernel tests share: the smallest offline pipeline."""

from __future__ import annotations

from typing import Any, Final

#: In-memory store, hashing embedder, no model, one node per turn, BM25 seeding.
OFFLINE: Final[dict[str, Any]] = {
    "store": {"type": "memory"},
    "embedder": {"type": "hashing"},
    "llm": {"type": "none"},
    "extractor": {"type": "baseline.turns"},
    "retrieval": {"seed": [{"type": "baseline.bm25"}]},
}
