"""The writer that ``labile bench crash`` kills: ``python -m labile_bench.crash_child``.

It opens a memory, then adds batches of synthetic turns forever (with a search
and a feedback after every third batch) and, after each batch, runs the
operation under test (`OPS`), and tells its parent on stdout what it is doing,
one flushed line at a time: ``ready``; ``begin <batch>``, ``commit <batch>``
just before the store commits the outermost batch, ``ack <batch>`` once
``add`` returned; ``op <n> <details>`` before the operation's call and
``done <n>`` once it returned. The parent kills it with SIGKILL at a random
moment (or just after a ``commit`` or an ``op`` line) and checks what the
store kept. These lines are the protocol with the parent, not logs.

The operations (each after batch ``b``):

``add``: none (the batches only). ``forget`` / ``forget-erase``: forget batch
``b - 1`` (``erase=True``). ``purge`` / ``purge-erase``: add batch ``b`` to the
namespace `AUX` too (``aux <b>`` when acknowledged), then purge `AUX`.
``erase``: `erase_history`. ``consolidate``: `Memory.consolidate`.
``import``: import an export of `NAMESPACE`, taken at start, into the new
namespace ``import-<n>`` (``op <n> <observations> <nodes> <edges>``).
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
#: The namespace the purge operations fill and purge.
AUX: Final = "aux"
#: Prefix of the namespaces the import operation writes.
IMPORTED: Final = "import-"
#: The operations the bench can kill, in the order ``--op all`` runs them.
OPS: Final = ("add", "forget", "purge", "forget-erase", "purge-erase", "erase",
              "consolidate", "import")
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


def batch_of(observation_id: str) -> int:
    """The batch number in an id made by `batch_turns`."""
    return int(observation_id.split("-")[0][1:])


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


def _operate(memory: Memory, op: str, batch: int, number: int,
             export: list[dict[str, Any]]) -> None:
    """Run ``op`` once, after ``batch`` was acknowledged, framed by ``op`` / ``done`` lines."""
    from labile_io.transfer import import_records

    if op in ("purge", "purge-erase"):
        memory.add(batch_turns(batch), namespace=AUX)
        _say(f"aux {batch}")
    if op == "import":
        counts = [sum(r.get("type") == kind for r in export)
                  for kind in ("observation", "node", "edge")]
        _say(f"op {number} {' '.join(map(str, counts))}")
    else:
        _say(f"op {number} {batch}")
    if op in ("forget", "forget-erase"):
        memory.forget(NAMESPACE, [o.id for o in batch_turns(batch - 1)],
                      erase=op == "forget-erase")
    elif op in ("purge", "purge-erase"):
        memory.purge(AUX, erase=op == "purge-erase")
    elif op == "erase":
        memory.store.erase_history()
    elif op == "consolidate":
        memory.consolidate(namespace=NAMESPACE)
    elif op == "import":
        import_records(memory, export, f"{IMPORTED}{number}")
    _say(f"done {number}")


def main(argv: list[str]) -> None:
    """``crash_child CONFIG_JSON FIRST_BATCH [OP FIRST_OP]``: write batches from
    ``FIRST_BATCH`` on, running ``OP`` (numbered from ``FIRST_OP``) after each."""
    table, first = json.loads(argv[0]), int(argv[1])
    op, number = (argv[2], int(argv[3])) if len(argv) > 3 else ("add", 0)
    memory = Memory.open(table)
    export: list[dict[str, Any]] = []
    if op == "import":
        from labile_io.transfer import export_records

        export = list(export_records(memory, NAMESPACE))
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
        if op != "add":
            _operate(memory, op, batch, number, export)
            number += 1
        batch += 1


if __name__ == "__main__":  # pragma: no cover - run by the crash bench as a subprocess
    main(sys.argv[1:])
