"""`ObjectLease`: the store's write lock on an object store, a lease with expiry.

An object store has no file lock, and a process killed by ``kill -9`` cannot
release anything. The lease is one small object, ``<store>/_labile/writer.lease``,
written only with conditional puts, which S3 (``If-None-Match`` / ``If-Match``),
GCS and Azure all offer:

* **Take**: create the object if it does not exist (``If-None-Match: *``), or
  replace a free or expired record if it is still the version read
  (``If-Match: <etag>``). Two processes racing for it: exactly one put succeeds.
* **Hold**: while held, a heartbeat thread rewrites the record every third of
  ``ttl_s`` (``If-Match``: it fails, and the holder learns it lost the lease, if
  anyone else took it). `check_held` raises once that happened, and the batch
  protocol calls it before its final commit.
* **Expire**: a waiter counts a record as expired once it has seen the *same*
  version of it for ``ttl_s`` on its own monotonic clock. No wall clocks are
  compared, so clock skew between machines does not matter; a writer that died
  holds the store at most ``ttl_s`` beyond the moment a waiter first looks.
* **Release**: rewrite the record as free (``If-Match``), so the next writer
  need not wait for expiry. A process that takes the lease again within
  ``_YIELD_S`` of releasing it waits that long first, so a waiting writer gets
  its turn (batches written back to back by one process pay 0.1 s each).

The lease is re-entrant per instance, like `labile_lancedb._lock.FileLock`,
whose interface it shares.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any, Final

from labile.plugin import StoreError, get_logger
from labile_lancedb._location import StoreLocation
from labile_lancedb._lock import Holding, holder_id

__all__ = ["LEASE_KEY", "ObjectLease", "lease_keys", "object_store_for"]

log = get_logger(__name__)

#: The lease object's key under the store's prefix.
LEASE_KEY: Final = "_labile/writer.lease"
#: How often a waiter looks at the lease again.
_POLL_S: Final = 0.05
#: How long a process that just released the lease waits before taking it again.
_YIELD_S: Final = 2 * _POLL_S
#: Storage options that configure the HTTP client rather than the store.
_CLIENT_OPTIONS: Final = frozenset({
    "allow_http", "allow_invalid_certificates", "connect_timeout", "timeout", "proxy_url",
    "user_agent", "http1_only", "http2_only", "pool_idle_timeout", "pool_max_idle_per_host"})
#: Options LanceDB reads itself and the object-store client does not know.
_LANCE_ONLY: Final = frozenset({"download_retry_count", "max_retries", "retry_timeout",
                                "new_table_data_storage_version", "use_opendal",
                                "shared_threadpool"})


def object_store_for(location: StoreLocation) -> Any:
    """An `obstore` store rooted at the location's URI, with its storage options.

    Raises:
        StoreError: obstore is not installed, or refuses the URI or an option.
    """
    try:
        from obstore.store import from_url
    except ImportError:  # pragma: no cover - the extra is documented
        raise StoreError("an object-store path needs the obstore package: "
                         "pip install 'labile[s3]'") from None
    config: dict[str, Any] = {}
    client: dict[str, Any] = {}
    for key, value in location.storage_options.items():
        if key in _LANCE_ONLY:
            continue
        (client if key in _CLIENT_OPTIONS else config)[key] = value
    try:
        options: Any = {"config": config or None, "client_options": client or None}
        return from_url(location.uri, **options)
    except Exception as exc:
        raise StoreError(f"cannot reach the object store {location.uri}: "
                         f"{type(exc).__name__}: {exc}") from None


def lease_keys(store: Any, prefix: str) -> list[str]:
    """The keys of every object under ``prefix`` (the namespace leases)."""
    import obstore

    keys: list[str] = []
    for chunk in obstore.list(store, prefix=prefix):
        keys.extend(str(item["path"]) for item in chunk)
    return keys


class ObjectLease(Holding):
    """A writer lease on one object (see the module docs), re-entrant per instance.

    Args:
        store: An obstore store rooted at the store's URI.
        uri: The store's URI (for messages).
        ttl_s: How long the lease lasts without renewal.
        timeout_s: How long `acquire` waits for another holder.
    """

    def __init__(self, store: Any, uri: str, ttl_s: float, timeout_s: float,
                 key: str = LEASE_KEY) -> None:
        self._store = store
        self.key = key
        self.path = f"{uri}/{key}"
        self.ttl_s = ttl_s
        self.timeout_s = timeout_s
        self._me = f"{holder_id()} ({uuid.uuid4().hex[:8]})"
        self._depth = 0
        self._etag: str | None = None
        self._renewals = 0
        self._lost: str | None = None
        self._io = threading.Lock()  # the heartbeat and the owner both put
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None
        self._closed = False
        self._released_at = -1e9  # monotonic time of the last release by this instance

    # -- the record -------------------------------------------------------------------
    def _read(self) -> tuple[dict[str, Any], str] | None:
        """The record and its etag, or ``None`` when there is no lease object."""
        import obstore
        from obstore.exceptions import NotFoundError

        try:
            got = obstore.get(self._store, self.key)
            data = bytes(got.bytes())
            etag = got.meta["e_tag"]
        except (NotFoundError, FileNotFoundError):  # obstore raises either, by version
            return None
        try:
            record = json.loads(data)
        except ValueError:
            record = {"holder": "unreadable lease record"}
        return (record if isinstance(record, dict) else {}), str(etag)

    def _put(self, record: dict[str, Any], etag: str | None) -> str | None:
        """Write ``record`` if the object is still ``etag`` (absent for ``None``);
        the new etag, or ``None`` if someone else wrote first."""
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        lost = (AlreadyExistsError, PreconditionError, FileExistsError)
        mode: Any = "create" if etag is None else {"e_tag": etag}
        try:
            result = obstore.put(self._store, self.key, json.dumps(record).encode(),
                                 mode=mode)
        except lost:
            return None
        return str(result["e_tag"])

    def _record(self) -> dict[str, Any]:
        self._renewals += 1  # the content changes on every renewal, so its etag does
        return {"holder": self._me, "ttl_s": self.ttl_s, "renewal": self._renewals,
                "written_at": time.time()}

    # -- the lock interface -----------------------------------------------------------
    def busy_message(self) -> str:
        # held, and kept renewed, by another writer for longer than timeout_s
        return (f"another writer ({self.holder() or 'unknown process'}) holds the write "
                f"lease {self.path} for more than lock_timeout_s = {self.timeout_s:g} s; "
                "one process writes to a namespace at a time: retry later, or raise "
                "[store] lock_timeout_s")

    def try_acquire(self, timeout_s: float) -> bool:
        """Take the lease, waiting at most ``timeout_s``; whether it was taken."""
        if self._closed:
            raise StoreError("the store is closed")
        if self._depth:
            self._depth += 1
            return True
        deadline = time.monotonic() + timeout_s
        if time.monotonic() - self._released_at < _YIELD_S:
            # Back-to-back batches: let a waiter (which looks every _POLL_S) in first,
            # or a process writing in a loop would starve every other writer.
            time.sleep(_YIELD_S)
        seen: tuple[str, float] | None = None  # (etag, when first seen)
        while True:
            current = self._read()
            now = time.monotonic()
            etag = None if current is None else current[1]
            free = current is None or not current[0].get("holder")
            if etag is not None and (seen is None or seen[0] != etag):
                seen = (etag, now)
            stale = seen is not None and now - seen[1] >= self.ttl_s
            if free or stale:
                with self._io:
                    new = self._put(self._record(), etag)
                if new is not None:
                    if stale and not free:
                        log.warning("lancedb_lease_expired", lease=self.path,
                                    holder=current[0].get("holder") if current else None)
                    self._etag, self._lost, self._depth = new, None, 1
                    self._start_heartbeat()
                    return True
                continue  # someone else wrote first: look again at once
            if now >= deadline:
                return False
            time.sleep(min(_POLL_S, max(0.0, deadline - now)))

    def wait_free(self, timeout_s: float) -> bool:
        """Whether the lease is (or, within ``timeout_s``, becomes) free or stale, held by
        no other live writer; it is not taken. ``timeout_s = 0`` looks once."""
        if self._depth:
            return True
        deadline = time.monotonic() + timeout_s
        seen: tuple[str, float] | None = None
        while True:
            current = self._read()
            now = time.monotonic()
            if current is None or not current[0].get("holder"):
                return True
            if seen is None or seen[0] != current[1]:
                seen = (current[1], now)
            if now - seen[1] >= self.ttl_s:
                return True
            if now >= deadline:
                return False
            time.sleep(min(_POLL_S, max(0.0, deadline - now)))

    def release(self) -> None:
        """Undo one `acquire`; the lease is freed when the outermost one is undone."""
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth:
            return
        self._stop_heartbeat()
        with self._io:
            if self._etag is not None and self._lost is None:
                self._put({"holder": "", "released_by": self._me}, self._etag)
            self._etag = None
        self._released_at = time.monotonic()

    def check_held(self) -> None:
        """Raise if the lease was lost (another writer took it after it expired).

        Raises:
            StoreError: naming the lease; the caller must not commit.
        """
        if self._lost is not None:
            raise StoreError(self._lost)

    def holder(self) -> str:
        """Who holds the lease now (``""`` if free or unknown)."""
        try:
            current = self._read()
        except Exception:
            return ""
        return "" if current is None else str(current[0].get("holder") or "")

    def close(self) -> None:
        """Free the lease if held. Idempotent."""
        if self._depth:
            self._depth = 1
            self.release()
        self._closed = True

    # -- heartbeat --------------------------------------------------------------------
    def _start_heartbeat(self) -> None:
        self._stop.clear()
        self._beat = threading.Thread(target=self._heartbeat, name="labile-lease",
                                      daemon=True)
        self._beat.start()

    def _stop_heartbeat(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
            self._beat = None

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            with self._io:
                if self._etag is None or self._lost is not None:
                    return
                try:
                    new = self._put(self._record(), self._etag)
                except Exception as exc:  # a transient error: the next beat retries
                    log.warning("lancedb_lease_renewal_failed", lease=self.path,
                                error=f"{type(exc).__name__}: {exc}")
                    continue
                if new is None:
                    self._lost = (f"the write lease {self.path} was taken over by another "
                                  "writer (this one did not renew it within lease_ttl_s)")
                    log.error("lancedb_lease_lost", lease=self.path)
                    return
                self._etag = new
