"""Each offline test starts with an empty ONNX session pool (`labile_offline.pool`),
so a test about loading (integrity checks, missing packages) really loads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from labile_offline.pool import release_sessions


@pytest.fixture(autouse=True)
def empty_session_pool() -> Iterator[None]:
    release_sessions()
    yield
    release_sessions()
