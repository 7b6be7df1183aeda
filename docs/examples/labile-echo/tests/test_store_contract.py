"""How a third party checks a store against labile's `Store` contract.

labile-echo registers no store of its own, so it runs the suite against the
kernel's in-memory store; a plugin with a store builds its own in the fixture
(for example ``MyStore(MyStoreConfig(path=str(tmp_path)), deps)``, with
``deps.embedder`` set to ``StoreContract.embedder``). Every check of the
contract becomes a test of this class.

Run with ``pytest docs/examples/labile-echo/tests``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from labile.plugin import Store
from labile.testing import MemoryStore, StoreContract


class TestMemoryStoreContract(StoreContract):
    """The contract suite, against a new, empty store per check."""

    @pytest.fixture
    def store(self) -> Iterator[Store]:
        store = MemoryStore()
        yield store
        store.close()
