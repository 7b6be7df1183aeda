"""One ONNX session (and tokenizer) per model and settings, shared by the whole process.

Each `labile.Memory` builds its own embedder. Without sharing, every open
loaded the model again: a service opening a Memory per request paid the load
(hundreds of milliseconds) each time, and each session left memory and
onnxruntime threads behind after its Memory closed (about 0.6 MB per cycle with
MiniLM). Embedders therefore ask `shared_session` instead of loading: the first
call loads, later calls with the same `SessionKey` get the same pair. Sharing
is safe because ``InferenceSession.run`` and ``Tokenizer.encode_batch`` may be
called from several threads at once, and nothing about a session depends on the
Memory that asked for it. `release_sessions` empties the pool (tests, or a
process that is done embedding).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import attrs

from labile.plugin import get_logger

log = get_logger(__name__)

__all__ = ["SessionKey", "pooled_sessions", "release_sessions", "shared_session"]


@attrs.frozen
class SessionKey:
    """What makes two loaded sessions interchangeable.

    Attributes:
        model: The embedder's vector-space name (one model file per name).
        threads: onnxruntime's intra-op threads.
        max_tokens: The tokenizer's truncation length.
    """

    model: str
    threads: int
    max_tokens: int


_POOL: dict[SessionKey, tuple[Any, Any]] = {}
_POOL_LOCK = threading.Lock()


def shared_session(key: SessionKey, load: Callable[[], tuple[Any, Any]]) -> tuple[Any, Any]:
    """The process's ``(session, tokenizer)`` for ``key``; ``load()`` makes it on first use.

    ``load`` runs under the pool's lock, so two embedders opening at once load
    once. If it raises, nothing is pooled and the next call tries again.
    """
    with _POOL_LOCK:
        pair = _POOL.get(key)
        if pair is None:
            pair = load()
            _POOL[key] = pair
            log.debug("onnx_session_pooled", model=key.model, threads=key.threads,
                      max_tokens=key.max_tokens, pooled=len(_POOL))
        return pair


def pooled_sessions() -> int:
    """How many sessions the pool holds."""
    with _POOL_LOCK:
        return len(_POOL)


def release_sessions() -> None:
    """Drop every pooled session (embedders holding one keep it until they go)."""
    with _POOL_LOCK:
        _POOL.clear()
