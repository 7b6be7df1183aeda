"""The ``store`` fixture of the LanceDB store tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lancedb_helpers import open_store

from labile_lancedb.store import LanceStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LanceStore]:
    """A new store in a temporary directory, closed afterwards."""
    s = open_store(tmp_path / "mem")
    yield s
    s.close()
