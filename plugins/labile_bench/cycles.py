"""``labile bench cycles``: open, search and close a Memory many times in one process.

A service that opens a `labile.Memory` per request must not grow: every cycle
should give back the threads and memory it took. This benchmark fills a small
store once, then runs ``cycles`` rounds of open → search → close on it and
reports, at checkpoints, the process's threads (OS threads, which include
onnxruntime's and LanceDB's own) and its resident memory. Growth is read
against the first checkpoint, taken after a warm-up, since the first opens
load models and fill caches for good.
"""

from __future__ import annotations

import gc
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from labile_offline.pool import release_sessions

__all__ = ["WARM_UP", "Checkpoint", "os_threads", "rss_mb", "run_cycles"]

#: Cycles after which the process is taken as warm: growth is read from here.
WARM_UP = 10


@attrs.frozen
class Checkpoint:
    """The process after ``cycle`` open/search/close cycles."""

    cycle: int
    os_threads: int
    python_threads: int
    rss_mb: float
    ms_per_cycle: float


def os_threads() -> int:
    """Threads of this process as the kernel counts them (Linux), else Python's count."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def rss_mb() -> float:
    """Resident memory of this process in MiB (Linux; 0.0 elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _checkpoints(cycles: int, every: int) -> set[int]:
    return {c for c in range(every, cycles + 1, every)} | {min(WARM_UP, cycles), cycles}


def run_cycles(cycles: int, *, config: dict[str, Any] | None = None,
               preset: str | None = "realm", every: int = 100,
               path: Path | None = None, pool: bool = True) -> Iterator[Checkpoint]:
    """Fill a store, then yield a `Checkpoint` after `WARM_UP` cycles, every ``every``
    cycles and at the end.

    Args:
        cycles: How many open/search/close cycles to run.
        config: The pipeline's config table (default: the preset's).
        preset: The preset to open.
        every: Checkpoint spacing.
        path: The store's directory (default: a fresh temporary one).
        pool: Share ONNX sessions across Memories (`labile_offline.pool`); ``False``
            empties the pool after each cycle, so every open loads its own session
            as before the pool existed (the baseline).
    """
    from labile import Memory
    from labile.plugin import Observation

    where = path or Path(tempfile.mkdtemp(prefix="labile-cycles-"))
    start = datetime(2024, 1, 1, tzinfo=UTC)
    turns = [Observation(id=f"t{i}", text=f"Ana practised the violin for {i + 1} hours",
                         timestamp=start + timedelta(days=i), speaker="Ana")
             for i in range(10)]
    with Memory.open(config, preset=preset, path=where) as memory:
        memory.add(turns, namespace="u")
    marks = _checkpoints(cycles, every)
    clock = time.perf_counter()
    for cycle in range(1, cycles + 1):
        with Memory.open(path=where) as memory:
            memory.search("violin practice", namespace="u", k=3)
        if not pool:
            release_sessions()
        if cycle in marks:
            gc.collect()
            elapsed = time.perf_counter() - clock
            yield Checkpoint(cycle, os_threads(), threading.active_count(), rss_mb(),
                             elapsed * 1000 / cycle)
