"""`ReplyTally`: how every ``complete_json`` call of a client ended, per operation.

Kept by `labile_llm.json_completion.JSONCompletion`, so hosted, local and
scripted clients report the same outcomes:

* ``valid``: the first reply validated;
* ``repaired``: a re-ask after an invalid reply validated;
* ``rejected:<reason>``: the call failed closed. Reasons: ``invalid`` (still
  invalid after the repairs), ``truncated`` (the reply was cut at its token
  budget, `ReplyCutError`), or the `labile_llm.retry.ErrorKind` value of a
  failed call (``timeout``, ``context_window``, ``server`` …).
"""

from __future__ import annotations

import threading
from collections import Counter

from labile.plugin import LLMOutputError

__all__ = ["ReplyCutError", "ReplyTally"]


class ReplyCutError(LLMOutputError):
    """The reply reached its token budget before its JSON value closed.

    Fails closed without a repair: a repair prompt is longer and the reply
    would be cut again. Tallied as ``rejected:truncated``.
    """


class ReplyTally:
    """Thread-safe counts of ``complete_json`` outcomes per operation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ops: dict[str, Counter[str]] = {}

    def add(self, operation: str, outcome: str) -> None:
        """Count one outcome of ``operation``."""
        with self._lock:
            self._ops.setdefault(operation, Counter())[outcome] += 1

    def snapshot(self) -> dict[str, dict[str, int]]:
        """A copy of the counts, by operation (operations sorted)."""
        with self._lock:
            return {op: dict(c) for op, c in sorted(self._ops.items())}

    def totals(self) -> dict[str, int]:
        """The counts summed over operations."""
        total: Counter[str] = Counter()
        for counts in self.snapshot().values():
            total.update(counts)
        return dict(total)
