"""Fixtures of the HTTP API tests: a served memory behind Starlette's test client."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("starlette", reason="the HTTP API needs pip install -e '.[serve]'")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx (pip install httpx)")

from http_helpers import DEMO, IN_MEMORY
from starlette.testclient import TestClient

from labile import AsyncMemory, Memory
from labile_http.app import build_app
from labile_mcp.convert import messages_to_observations
from labile_mcp.policy import ServePolicy


@pytest.fixture
def memory() -> Iterator[Memory]:
    """A REALM memory with the demo conversation in ``maya`` and one turn in ``secret``."""
    from datetime import UTC, datetime

    mem = Memory.open(IN_MEMORY)
    mem.add(messages_to_observations(DEMO, now=datetime.now(UTC)), namespace="maya")
    mem.add(messages_to_observations([{"id": "x1", "content": "The vault code is 4411.",
                                       "time": "2024-01-01T00:00:00Z"}],
                                     now=datetime.now(UTC)), namespace="secret")
    yield mem
    mem.close()


@pytest.fixture
def client(memory: Memory) -> Iterator[TestClient]:
    """The API serving only ``maya`` (purge allowed), no token."""
    app = build_app(AsyncMemory(memory), ServePolicy(namespaces=("maya",), allow_purge=True))
    with TestClient(app) as c:
        yield c
