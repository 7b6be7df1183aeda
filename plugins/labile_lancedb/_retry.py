"""Reads that survive another process deleting the table versions they read.

An erase (`labile_lancedb._erase.erase_history`) or a cleanup drops old table
versions while other processes may be reading them: a reader pinned to such a
version, or holding a handle on one of its files, gets a raw LanceDB error
(``Version N no longer exists``, ``Not found``). `retrying_read` turns that
into a retry on the versions ``meta`` names now (the eraser moved every pin
before deleting anything); a pin that still names a deleted version with no
intent open (a store left by an older build's interrupted erase) is read at
the newest versions instead; after `READ_ATTEMPTS` the caller gets a
`StoreError` that says what happened, never the raw engine error.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, Final, Protocol, TypeVar

from labile.plugin import StoreError, get_logger
from labile_lancedb._tables import version_gone

__all__ = ["READ_ATTEMPTS", "retrying_read"]

log = get_logger(__name__)

#: Tries of one read whose versions keep being deleted under it.
READ_ATTEMPTS: Final = 5

F = TypeVar("F", bound=Callable[..., Any])


class _Reader(Protocol):
    """What a retried read needs of the `labile_lancedb._engine.Engine`."""

    path: Any

    def after_version_gone(self, namespace: str | None, attempt: int) -> None:
        """Drop what the deleted versions made stale before the next try."""
        ...


def _namespace(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    ns = args[0] if args else kwargs.get("namespace")
    return ns if isinstance(ns, str) else None


def retrying_read(method: F) -> F:
    """Decorate a read method of the `Engine` or of an object with an ``_engine``; the
    method's first argument is the namespace read (or none: every namespace)."""

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        engine: _Reader = getattr(self, "_engine", self)
        namespace = _namespace(args, kwargs)
        for attempt in range(READ_ATTEMPTS):
            try:
                return method(self, *args, **kwargs)
            except StoreError:
                raise
            except Exception as exc:
                if not version_gone(exc):
                    raise
                if attempt == READ_ATTEMPTS - 1:
                    raise StoreError(
                        f"reading {'every namespace' if namespace is None else repr(namespace)} "
                        f"of {engine.path} failed: the table versions it read were deleted "
                        f"by another process (an erase or a cleanup) {READ_ATTEMPTS} times "
                        f"in a row; try the read again ({type(exc).__name__}: {exc})"
                    ) from exc
                log.info("lancedb_read_retried", namespace=namespace, attempt=attempt + 1,
                         error=f"{type(exc).__name__}: {exc}"[:300])
                engine.after_version_gone(namespace, attempt)
                time.sleep(0.01 * 2 ** attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    return call  # type: ignore[return-value]
