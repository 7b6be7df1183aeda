"""An optional on-disk cache of model replies, so a benchmark re-run does not pay twice.

Storage: one SQLite file, ``<cache_dir>/llm_cache.sqlite3`` (stdlib
``sqlite3``; safe for several threads and processes, each operation opens and
closes its own connection, so nothing needs closing and nothing leaks).

Keys: the SHA-256 of the canonical JSON of everything that determines the
reply — model, messages (system and user text), the ``response_format`` sent,
temperature, max tokens, api base — plus `CACHE_FORMAT`. Change any of them
and the call misses. Values: the reply text and the token counts and cost of
the original call.

What is stored: replies (which may quote your data) and the model name and
operation; never prompts in clear, never API keys (keys are not part of any
key either). Delete the file to forget everything. Failed calls are never
cached; a reply that fails JSON validation is cached like any other, so a
re-run replays the same repair sequence. `labile.Memory.forget` deletes the
replies that quote a forgotten observation (`ResponseCache.forget_replies`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import attrs

__all__ = ["CACHE_FILE", "CACHE_FORMAT", "CachedReply", "ResponseCache"]

#: Bumped whenever the key recipe or the stored values change meaning.
CACHE_FORMAT: Final = 1
CACHE_FILE: Final = "llm_cache.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    operation TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    created_at TEXT NOT NULL
)
"""


@attrs.frozen(kw_only=True)
class CachedReply:
    """One stored reply with the figures of the call that produced it."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class ResponseCache:
    """A reply cache in one SQLite file under ``directory`` (created if missing)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory).expanduser()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / CACHE_FILE
        self._lock = threading.Lock()
        with self._connect() as conn, conn:
            conn.execute(_SCHEMA)

    def _connect(self) -> closing[sqlite3.Connection]:
        return closing(sqlite3.connect(self.path, timeout=30.0))

    @staticmethod
    def key(**parts: Any) -> str:
        """A stable hex key for the call described by ``parts`` (JSON-able values)."""
        payload = json.dumps(
            {"format": CACHE_FORMAT, **parts}, sort_keys=True, separators=(",", ":"),
            ensure_ascii=False, default=str,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def get(self, key: str) -> CachedReply | None:
        """The reply stored under ``key``, or ``None``."""
        with self._lock, self._connect() as conn:
            row = conn.execute(
                "SELECT text, prompt_tokens, completion_tokens, cost_usd FROM replies "
                "WHERE key = ?", (key,),
            ).fetchone()
        if row is None:
            return None
        return CachedReply(text=row[0], prompt_tokens=int(row[1]),
                           completion_tokens=int(row[2]), cost_usd=float(row[3]))

    def put(self, key: str, reply: CachedReply, *, model: str, operation: str) -> None:
        """Store ``reply`` under ``key`` (replacing any older entry)."""
        with self._lock, self._connect() as conn, conn:
            conn.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, model, operation, reply.text, reply.prompt_tokens,
                 reply.completion_tokens, reply.cost_usd, datetime.now(UTC).isoformat()),
            )

    def __len__(self) -> int:
        with self._lock, self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def forget_replies(self, matches: Callable[[str], bool]) -> int:
        """Delete every reply whose text ``matches``, then rewrite the file (``VACUUM``)
        so the deleted text leaves no trace in free pages; returns how many went."""
        with self._lock, self._connect() as conn:
            rows = conn.execute("SELECT key, text FROM replies").fetchall()
            doomed = [(key,) for key, text in rows if matches(text)]
            if doomed:
                with conn:
                    conn.executemany("DELETE FROM replies WHERE key = ?", doomed)
                conn.execute("VACUUM")
        return len(doomed)

    def clear(self) -> None:
        """Forget every stored reply."""
        with self._lock, self._connect() as conn, conn:
            conn.execute("DELETE FROM replies")
