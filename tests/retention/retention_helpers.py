"""Memories for the retention tests: the in-memory store, hashing embeddings, a synthetic chat."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from labile import Memory, Observation

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
MEM = {"store": {"type": "memory"}, "embedder": {"type": "hashing"}}

TURNS = [
    ("Maria", "I started a pottery class in Lisbon last week."),
    ("Tom", "Hey, thanks so much!"),
    ("Maria", "My teacher Ines lives near the river in Alfama."),
    ("Tom", "I went hiking in the Alps with my brother Sam."),
    ("Maria", "haha okay, sounds good"),
    ("Tom", "Next month I am moving to Porto for a new job at a bakery."),
]


def open_memory(preset: str = "bm25", **instances: Any) -> Memory:
    """A fresh in-memory memory of ``preset`` with hashing embeddings."""
    return Memory.open({**MEM, "preset": preset}, **instances)


def turns(prefix: str, days: list[int], texts: list[tuple[str, str]] | None = None
          ) -> list[Observation]:
    """One observation per entry of ``days``: said that many days after `T0`."""
    pool = texts or TURNS
    return [Observation(id=f"{prefix}{i}", text=pool[i % len(pool)][1],
                        speaker=pool[i % len(pool)][0], timestamp=T0 + timedelta(days=d),
                        session=str(i // 3 + 1))
            for i, d in enumerate(days)]


def snapshot(memory: Memory, namespace: str) -> dict[str, Any]:
    """Every node of ``namespace`` by id, with everything it holds (attrs included)."""
    return {n.id: (n.kind, n.content, n.visible, n.sources, n.time_start, dict(n.attrs))
            for n in memory.store.iter_nodes(namespace)}
