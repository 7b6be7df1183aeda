"""``labile bench bigturn``: the time to add one very long message, by size.

One synthetic message (deterministic sentences from a small vocabulary, no
benchmark text) of each size is added to a fresh store after a warm-up
message in another namespace and a short turn before it, either whole (the
size limit raised to fit it) or cut into
parts by `labile.Limits.fit` under the default limit (``--chunk``). The
report gives seconds, characters per second, and each size's time per
character relative to the smallest size's, measured in the same process:
1.0 everywhere means linear growth.
"""

from __future__ import annotations

import random
import resource
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from labile import Limits, Memory
from labile.plugin import Observation

__all__ = ["message", "run_bigturn"]

_SAMPLE = ("we went to the pottery studio with Tom and Anna last Saturday and it was great fun "
           "I think Melanie painted a sunset in Lisbon because she loves the sea Dr. Smith said "
           "the new job starts on 3 May 2023 and the kids were happy about the trip next week "
           "my brother Sam will visit in September so we plan to hike")
_VOCAB = _SAMPLE.split()
_T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
_WARM_UP = 5_000  # characters of the untimed message that comes first


def message(chars: int, seed: int = 0) -> str:
    """A deterministic synthetic message of exactly ``chars`` characters."""
    rnd = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < chars:
        words = [rnd.choice(_VOCAB) for _ in range(rnd.randint(5, 20))]
        sentence = " ".join(words).capitalize() + rnd.choice([".", ".", "!", "?"])
        sentence += "\n" if rnd.random() < 0.1 else " "
        parts.append(sentence)
        size += len(sentence)
    return "".join(parts)[:chars - 1].rstrip().ljust(chars - 1) + "."


def _observations(chars: int, chunk: bool, limits: Limits) -> list[Observation]:
    big = Observation(id="big", text=message(chars), speaker="Anna", session="2",
                      timestamp=_T0 + timedelta(minutes=5))
    return limits.fit([big]) if chunk else [big]


def run_bigturn(preset: str, sizes: Sequence[int], *, chunk: bool, embedder: str | None,
                directory: Path | None = None) -> list[dict[str, Any]]:
    """Add one message of each size to a fresh store of ``preset``; one row per size."""
    rows: list[dict[str, Any]] = []
    base: float | None = None
    with tempfile.TemporaryDirectory(prefix="labile-bigturn-") as scratch:
        root = directory or Path(scratch)
        for chars in sizes:
            limits = Limits() if chunk else Limits(
                observation_chars=max(chars, _WARM_UP) + 1_000,
                batch_chars=max(chars + 1_000, Limits().batch_chars))
            table: dict[str, Any] = {"preset": preset}
            if embedder:
                table["embedder"] = {"type": embedder}
            with Memory.open(table, path=root / f"{preset}-{chars}", limits=limits) as memory:
                # Warm-up: tables created, lazy imports and patterns loaded.
                memory.add([Observation(id="warm", text=message(_WARM_UP, seed=1), speaker="Tom",
                                        timestamp=_T0)], namespace="warm-up")
                memory.add([Observation(id="hello", text="Hi Anna, how was your week?",
                                        speaker="Tom", session="2", timestamp=_T0)],
                           namespace="b")
                observations = _observations(chars, chunk, limits)
                start = time.perf_counter()
                for batch in limits.batches(observations, len(observations)):
                    memory.add(batch, namespace="b")
                seconds = time.perf_counter() - start
            per_char = seconds / chars
            base = base if base is not None else per_char
            rows.append({"preset": preset, "chars": chars, "parts": len(observations),
                         "seconds": round(seconds, 2), "chars_per_s": round(chars / seconds),
                         "vs_smallest": round(per_char / base, 2),
                         "peak_rss_mb": round(resource.getrusage(
                             resource.RUSAGE_SELF).ru_maxrss / 1024)})
    return rows
