"""The writer that ``labile bench crash`` kills: ``python -m labile_bench.crash_child``.

It opens a memory, then adds batches of synthetic turns forever (with a search
and a feedback after every third batch), and tells its parent on stdout what it
is doing, one flushed line at a time: ``ready``, ``begin <batch>``,
``commit <batch>`` just before the store commits the outermost batch, and
``ack <batch>`` once ``add`` returned. The parent kills it with SIGKILL at a
random moment (or just after a ``commit`` line) and checks what the store kept.
These lines are the protocol with the parent, not logs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from labile import Memory
from labile.plugin import Observation

#: Turns per batch.
BATCH: Final = 3
NAMESPACE: Final = "crash"
LINES: Final = (
    "I adopted a cat named Miso last spring.", "We moved to Porto because of my new job.",
    "My sister Lena plays the cello in an orchestra.", "Miso knocked over the plant again.",
    "Lena's concert is on Friday; she practised all winter.", "Porto is rainy in November.",
    "Did you go to the concert in the end?", "Yes, and Miso stayed with our neighbour Rui.",
)
T0: Final = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def batch_turns(batch: int) -> list[Observation]:
    """The turns of batch ``batch`` (ids ``b<batch>-<j>``); the same on every call."""
    out = []
    for j in range(BATCH):
        i = batch * BATCH + j
        out.append(Observation(id=f"b{batch}-{j}", text=f"{LINES[i % len(LINES)]} (turn {i})",
                               speaker=("Ana", "Ben")[i % 2], session=f"s{batch // 4}",
                               timestamp=T0 + timedelta(minutes=i)))
    return out


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _announce_commits(memory: Memory, current: list[int]) -> None:
    """Wrap the store's ``batch`` so the outermost block says ``commit`` before committing."""
    store: Any = memory.store
    real = store.batch
    depth = [0]

    @contextmanager
    def batch(namespace: str) -> Iterator[None]:
        with real(namespace):
            depth[0] += 1
            try:
                yield
            finally:
                depth[0] -= 1
            if depth[0] == 0:
                _say(f"commit {current[0]}")

    store.batch = batch


def main(argv: list[str]) -> None:
    """``crash_child CONFIG_JSON FIRST_BATCH``: write batches from ``FIRST_BATCH`` on."""
    table, first = json.loads(argv[0]), int(argv[1])
    memory = Memory.open(table)
    current = [first]
    _announce_commits(memory, current)
    _say("ready")
    batch = first
    while True:
        current[0] = batch
        _say(f"begin {batch}")
        memory.add(batch_turns(batch), namespace=NAMESPACE)
        _say(f"ack {batch}")
        if batch % 3 == 2:
            result = memory.search("Where did they move?", namespace=NAMESPACE, k=4)
            memory.feedback(result, cited=[h.node.id for h in result.hits[:2]], useful=True)
        batch += 1


if __name__ == "__main__":  # pragma: no cover - run by the crash bench as a subprocess
    main(sys.argv[1:])
