"""A minimal progress bar on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")


def progress(
    items: Iterable[T],
    *,
    total: int | None = None,
    label: str = "",
    enabled: bool | None = None,
    stream: TextIO | None = None,
) -> Iterator[T]:
    """Yield ``items`` while drawing ``label [####....] n/total rate/s`` on stderr.

    Drawing is off when ``enabled`` is False, or (by default) when stderr is
    not a TTY, so logs and CI output stay clean.
    """
    stream = stream or sys.stderr
    if enabled is None:
        enabled = stream.isatty()
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    if not enabled:
        yield from items
        return
    start = last = time.perf_counter()
    for n, item in enumerate(items, start=1):
        yield item
        now = time.perf_counter()
        if now - last >= 0.1 or n == total:
            last = now
            rate = n / max(now - start, 1e-9)
            if total:
                filled = int(30 * n / total)
                bar = "#" * filled + "." * (30 - filled)
                stream.write(f"\r{label} [{bar}] {n}/{total} {rate:,.1f}/s")
            else:
                stream.write(f"\r{label} {n} {rate:,.1f}/s")
            stream.flush()
    stream.write("\n")  # after the loop: keep the last state visible
    stream.flush()
