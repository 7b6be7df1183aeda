"""Stable node ids and the short-integer id maps used in LLM prompts.

A prompt never shows a model a real node id: nodes are numbered 1..n for the
prompt, and the reply's numbers are mapped back through an `IdMap`. A number
the map does not know makes the whole reply invalid, so a model cannot invent
or mistype an id into the graph.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from labile.plugin import LLMOutputError


def stable_id(prefix: str, *parts: str) -> str:
    """A deterministic node id from a kind prefix and identifying parts.

    The same parts give the same id in every process, which keeps ingestion
    idempotent (re-running an import rewrites the same nodes). ``|`` never
    appears in the result, so edge ids stay unambiguous.

    Args:
        prefix: A short kind tag (``"ev"``, ``"fa"``, ``"en"``, ``"ep"``).
        *parts: Strings that identify the unit within its namespace.

    Returns:
        ``"<prefix>-<20 hex digits>"``.
    """
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=10).hexdigest()
    return f"{prefix}-{digest}"


class IdMap:
    """Numbers real ids 1..n for a prompt and maps the numbers back.

    Example:
        >>> m = IdMap(["n-a", "n-b"])
        >>> m.short("n-b"), m.real(1)
        (2, 'n-a')
    """

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._to_short: dict[str, int] = {}
        self._to_real: list[str] = []
        for real in ids:
            self.add(real)

    def add(self, real: str) -> int:
        """Number ``real`` (idempotent) and return its short id."""
        short = self._to_short.get(real)
        if short is None:
            self._to_real.append(real)
            short = len(self._to_real)
            self._to_short[real] = short
        return short

    def short(self, real: str) -> int:
        """The short id of a numbered real id (KeyError if it was never added)."""
        return self._to_short[real]

    def real(self, short: object) -> str:
        """The real id behind a short id from a model's reply.

        Raises:
            LLMOutputError: ``short`` is not an integer this map handed out.
        """
        if isinstance(short, bool) or not isinstance(short, int | str):
            raise LLMOutputError(f"node reference {short!r} is not an integer id")
        try:
            idx = int(short)
        except ValueError:
            raise LLMOutputError(f"node reference {short!r} is not an integer id") from None
        if not 1 <= idx <= len(self._to_real):
            raise LLMOutputError(f"node reference {short!r} names no node shown in the prompt")
        return self._to_real[idx - 1]

    def __contains__(self, real: object) -> bool:
        return real in self._to_short

    def __len__(self) -> int:
        return len(self._to_real)

    def items(self) -> list[tuple[int, str]]:
        """``(short, real)`` pairs in numbering order."""
        return [(i + 1, r) for i, r in enumerate(self._to_real)]
