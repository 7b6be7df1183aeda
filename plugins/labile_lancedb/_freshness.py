"""`CommitWatcher`: noticing that another process committed to the store.

Every commit rewrites ``meta`` (its intent is set, then cleared), so a
``meta`` version other than the one this process last saw means another
writer was here, and every per-namespace cache may be stale. Asking LanceDB
for the version costs a round trip to its event-loop thread (0.25 ms idle,
several ms on a loaded machine), which would dominate a 1 ms in-memory
search; so the watcher first compares a fingerprint of ``meta``'s version
directory, one ``stat`` call, and asks LanceDB only when that changed or
cannot be trusted yet.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Final

from labile_lancedb._tables import LanceTables

__all__ = ["CommitWatcher"]

#: A fingerprint older than this is trusted to reveal any newer commit. A commit
#: made within the filesystem's timestamp granularity of the last look can leave
#: the directory's mtime unchanged, so a fingerprint taken within two seconds of
#: a commit is confirmed with LanceDB instead.
_STAMP_TRUST_NS: Final = 2_000_000_000

Stamp = tuple[int, int, int]


class CommitWatcher:
    """Looks, at most every ``every_s`` seconds, whether ``meta`` has a new version.

    ``every_s`` is the store's ``read_consistency_s``: ``0`` looks on every call.
    ``versions_dir`` is ``None`` on an object store.
    """

    def __init__(self, versions_dir: Path | None, every_s: float) -> None:
        self._versions_dir = versions_dir
        self._every_s = every_s
        self._last_look = 0.0
        self._stamp: Stamp | None = None

    def looked_now(self) -> None:
        """Count the present as a look (the store was just opened and read)."""
        self._last_look = time.monotonic()

    def new_version(self, tables: LanceTables, *, force: bool = False) -> int | None:
        """The ``meta`` version another process committed since the last look, or ``None``.

        ``None`` also when the last look is more recent than ``every_s``, unless
        ``force``: a writer about to read the state its batch depends on asks
        LanceDB for the newest version whatever ``every_s`` allows.
        """
        now = time.monotonic()
        if not force and self._every_s and now - self._last_look < self._every_s:
            return None
        self._last_look = now
        stamp = self._fingerprint()
        if (not force and stamp is not None and stamp == self._stamp
                and time.time_ns() - stamp[0] > _STAMP_TRUST_NS):
            return None
        if force:
            tables.meta_table.checkout_latest()
        version: int = tables.meta_table.version
        self._stamp = stamp
        return None if version == tables.meta_version else version

    def _fingerprint(self) -> Stamp | None:
        """``meta``'s version directory as (mtime, size, links): a commit adds a
        manifest file there, which changes its mtime. ``None`` on an object store
        (there is no directory to look at: LanceDB is asked every time)."""
        if self._versions_dir is None:
            return None
        try:
            st = os.stat(self._versions_dir)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_nlink)
