"""The object-store writer lease (`labile_lancedb._lease.ObjectLease`), on obstore's
in-memory store, which implements the same conditional puts as S3: mutual exclusion,
release, expiry of a dead holder's lease, and a stalled holder learning it lost it."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labile.plugin import StoreError

pytest.importorskip("obstore")

from obstore.store import MemoryStore

from labile_lancedb._lease import ObjectLease
from labile_lancedb._lock import StoreBusyError


def _lease(store: MemoryStore, ttl_s: float = 30.0, timeout_s: float = 0.2) -> ObjectLease:
    return ObjectLease(store, "mem://store", ttl_s=ttl_s, timeout_s=timeout_s)


def test_a_held_lease_keeps_others_out_until_released() -> None:
    store = MemoryStore()
    a, b = _lease(store), _lease(store)
    a.acquire()
    a.acquire()  # re-entrant
    with pytest.raises(StoreBusyError, match=r"pid \d+ .*writer\.lease"):
        b.acquire()
    a.release()
    assert not b.try_acquire(0.1)  # still held once
    a.release()
    assert b.try_acquire(1.0)  # freed: taken at once, no expiry wait
    b.close()
    a.close()


def test_a_dead_holders_lease_expires_and_a_stalled_holder_learns_it_lost_it() -> None:
    store = MemoryStore()
    dead, nxt = _lease(store, ttl_s=0.3), _lease(store, ttl_s=0.3, timeout_s=5.0)
    dead.acquire()
    dead._stop_heartbeat()  # the holder stops renewing, as a killed process would
    t0 = time.monotonic()
    assert nxt.try_acquire(5.0)
    assert 0.3 <= time.monotonic() - t0 < 3.0  # taken once seen unchanged for ttl_s
    dead._start_heartbeat()  # the stalled holder wakes up: its renewal fails
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        try:
            dead.check_held()
        except StoreError as exc:
            assert "taken over" in str(exc)
            break
        time.sleep(0.05)
    else:
        pytest.fail("the stalled holder never learnt that it lost the lease")
    nxt.check_held()  # the new holder is unaffected
    nxt.close()
    dead.close()


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, 2]), st.booleans()), max_size=20))
def test_at_most_one_lease_is_held_at_any_time(ops: list[tuple[int, bool]]) -> None:
    """Property: whatever sequence of take attempts (without waiting) and releases
    three leases on one object make, never more than one of them holds it, and a
    free lease is always taken by the first that tries."""
    store = MemoryStore()
    leases = [_lease(store) for _ in range(3)]
    held = [0, 0, 0]
    for who, take in ops:
        if take:
            others = any(h for i, h in enumerate(held) if i != who)
            got = leases[who].try_acquire(0.0)
            assert got == (not others)  # re-entrant for its holder, refused to the rest
            held[who] += got
        elif held[who]:
            leases[who].release()
            held[who] -= 1
        assert sum(1 for h in held if h) <= 1
    for lease in leases:
        lease.close()
