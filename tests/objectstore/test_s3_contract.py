"""The `Store` contract (`labile.testing.StoreContract`) on ``s3://``, against moto's
S3 server on loopback, plus what only an object store has: options checked at
config time, credentials read from named variables, and the writer lease."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from objectstore_helpers import S3Server, deps, node, obs, open_s3_store

from labile._protocols import Store
from labile.plugin import StoreError
from labile.testing import StoreContract
from labile_lancedb._lock import StoreBusyError
from labile_lancedb.config import LanceStoreConfig
from store_checks import check_reader_never_sees_an_open_batch


class TestS3LanceStore(StoreContract):
    """The LanceDB store on an ``s3://`` prefix, one new prefix per check."""

    _reopen: Callable[[], Store]  # opens this check's prefix (set by the fixture)

    @pytest.fixture
    def store(self, s3_server: S3Server, s3_uri: str) -> Iterator[Store]:
        self._reopen = lambda: open_s3_store(s3_server, s3_uri, dim=self.embedder.dim,
                                             lease_ttl_s=5.0)
        s = self._reopen()
        yield s
        s.close()

    def reopen(self, store: Store) -> Store:
        """Close the store and open its prefix again (the deferred durability check)."""
        store.close()
        return self._reopen()

    @pytest.mark.slow
    def test_random_writes_agree_with_the_reference_store(self, store: Store) -> None:
        """The seeded random history (hundreds of S3 round trips): in the slow run."""
        super().test_random_writes_agree_with_the_reference_store(store)


def test_credentials_in_the_config_are_refused_with_the_way_to_name_them() -> None:
    with pytest.raises(ValueError, match=r"storage_options_env = \{aws_secret_access_key"):
        LanceStoreConfig(path="s3://b/p", storage_options={"aws_secret_access_key": "x"})


@pytest.mark.parametrize(("kw", "match"), [
    ({"path": "ftp://host/p"}, "scheme 'ftp' is not supported"),
    ({"path": "./local", "storage_options": {"aws_region": "x"}}, "object-store paths only"),
    ({"path": "s3://b/p", "storage_options_env": {"aws_region": "not a name"}},
     "not an environment variable name"),
    ({"path": "s3://b/p", "storage_options": {"aws_region": "a"},
      "storage_options_env": {"aws_region": "REGION"}}, "both"),
])
def test_bad_location_options_fail_when_the_config_is_built(kw: dict[str, Any],
                                                            match: str) -> None:
    with pytest.raises(ValueError, match=match):
        LanceStoreConfig(**kw)


def test_a_missing_credential_variable_is_named_at_open(s3_server: S3Server,
                                                        s3_uri: str) -> None:
    from labile_lancedb.store import LanceStore

    config = LanceStoreConfig(path=s3_uri, storage_options=s3_server.options(),
                              storage_options_env={"aws_secret_access_key": "LABILE_NO_SUCH_VAR"})
    with pytest.raises(StoreError, match="LABILE_NO_SUCH_VAR.*not set"):
        LanceStore(config, deps())


def test_a_second_writer_waits_for_the_lease_then_fails_naming_the_holder(
        s3_server: S3Server, s3_uri: str) -> None:
    holder = open_s3_store(s3_server, s3_uri, lease_ttl_s=5.0)
    waiter = open_s3_store(s3_server, s3_uri, lease_ttl_s=5.0, lock_timeout_s=0.3)
    with holder.batch("u"):
        holder.upsert_nodes("u", [node("a")])
        with (pytest.raises(StoreBusyError, match=r"_labile/ns/.*lock_timeout_s"),
              waiter.batch("u")):
            waiter.upsert_nodes("u", [node("b")])
        assert waiter.count_nodes("u") == 0  # readers are not blocked
    assert [n.id for n in waiter.iter_nodes("u")] == ["a"]
    with waiter.batch("u"):  # released at commit: the next writer proceeds at once
        waiter.upsert_nodes("u", [node("b")])
    assert holder.count_nodes("u") == 2
    holder.close()
    waiter.close()


def test_a_reader_never_sees_a_batch_before_its_commit(s3_server: S3Server,
                                                       s3_uri: str) -> None:
    """A batch pushed to the tables early (a full-text search inside it writes the
    buffer out) is invisible to another process's reads until the batch commits:
    the reader reads the table versions the last commit marker names."""
    writer = open_s3_store(s3_server, s3_uri, lease_ttl_s=5.0)
    with writer.batch("u"):
        writer.add_observations("u", [obs("o0")])
        writer.upsert_nodes("u", [node("n0", content="espresso before")])
    reader = open_s3_store(s3_server, s3_uri, lease_ttl_s=5.0)
    check_reader_never_sees_an_open_batch(writer, reader, obs, node)
    writer.close()
    reader.close()


def test_a_store_lease_left_by_a_dead_maintainer_is_taken_over(s3_server: S3Server,
                                                              s3_uri: str) -> None:
    """A maintainer killed while holding the store lease leaves it held and never
    renewed: a writer waits for it to expire, frees it, and writes."""
    store = open_s3_store(s3_server, s3_uri, lease_ttl_s=1.0, lock_timeout_s=30.0)
    lease = store._engine._locks.store_lease  # type: ignore[attr-defined]
    current = lease._read()
    assert lease._put({"holder": "a dead maintainer"}, current[1] if current else None)
    t0 = time.monotonic()
    with store.batch("u"):
        store.upsert_nodes("u", [node("a")])
    assert time.monotonic() - t0 < 20.0
    assert store.count_nodes("u") == 1
    store.close()
