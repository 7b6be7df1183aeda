"""The `Store` contract as a reusable pytest suite; public as `labile.testing.StoreContract`.

Importing this package imports pytest: only test code imports it (``import
labile`` never does). The checks live in a submodule registered for pytest's
assertion rewriting before it is imported, so a failing check in a third
party's run shows the compared values, as an assertion in its own tests would.
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("labile._store_contract.records", "labile._store_contract.suite",
                              "labile._store_contract.erasure", "labile._store_contract.deferred",
                              "labile._store_contract.differential")

from labile._store_contract.records import ContractEmbedder  # noqa: E402
from labile._store_contract.suite import StoreContract  # noqa: E402

__all__ = ["ContractEmbedder", "StoreContract"]
