"""Shared pieces of the HTTP API tests: a demo conversation, memories, a live server."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labile import AsyncMemory, Memory
from labile_http.app import build_app
from labile_mcp.policy import ServePolicy

#: REALM over the in-memory store with the hashing embedder: real graphs, fast.
IN_MEMORY: dict[str, Any] = {"preset": "realm", "store": {"type": "memory"},
                             "embedder": {"type": "hashing"}}


def lancedb_config(directory: Path) -> dict[str, Any]:
    """REALM over a LanceDB store in ``directory`` (a real store on disk)."""
    return {"preset": "realm", "store": {"type": "lancedb", "path": str(directory / "store")},
            "embedder": {"type": "hashing"}}


#: A short conversation with dates, people, places and a change of mind.
DEMO: list[dict[str, str]] = [
    {"id": "t1", "role": "Maya", "time": "2024-03-02T10:00:00Z", "session": "s1",
     "content": "We moved to Lisbon last week, the flat is near the river."},
    {"id": "t2", "role": "Tom", "time": "2024-03-02T10:01:00Z", "session": "s1",
     "content": "Lisbon! How is the new job at the bakery going?"},
    {"id": "t3", "role": "Maya", "time": "2024-03-02T10:02:00Z", "session": "s1",
     "content": "I love it. I bake sourdough bread every morning."},
    {"id": "t4", "role": "Maya", "time": "2024-04-20T14:00:00Z", "session": "s2",
     "content": "I adopted a grey cat called Pixel last Saturday."},
    {"id": "t5", "role": "Tom", "time": "2024-04-20T14:01:00Z", "session": "s2",
     "content": "Pixel sounds lovely. Does she like the river walks?"},
    {"id": "t6", "role": "Maya", "time": "2024-04-20T14:02:00Z", "session": "s2",
     "content": "She does, and she sleeps on the sourdough starter shelf."},
]


@contextmanager
def live_server(memory: Memory, namespaces: tuple[str, ...], port: int, *,
                token: str | None = None, allow_purge: bool = False) -> Iterator[str]:
    """Serve ``memory`` with uvicorn on ``127.0.0.1:port`` in a thread; yield the base URL."""
    import uvicorn

    amem = AsyncMemory(memory)
    app = build_app(amem, ServePolicy(namespaces=namespaces, allow_purge=allow_purge),
                    token=token)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None,
                                           access_log=False, log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
