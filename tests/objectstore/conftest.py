"""Fixtures of the object-store tests: moto's S3 server on a loopback port.

One server per test session (``moto.server.ThreadedMotoServer`` on 127.0.0.1, a
port the OS picks); every test gets its own bucket prefix. The tests skip
cleanly when moto or obstore is not installed or the server cannot start.
Nothing here reaches a network beyond loopback.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from objectstore_helpers import BUCKET, S3Server

_prefixes = itertools.count()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """The running server, with the test bucket created."""
    pytest.importorskip("obstore")
    server_mod = pytest.importorskip("moto.server")
    try:
        server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"moto's S3 server cannot start here: {exc}")
    s3 = S3Server(endpoint=f"http://{host}:{port}")
    try:
        s3.create_bucket()
        yield s3
    finally:
        server.stop()


@pytest.fixture
def s3_uri(s3_server: S3Server, request: Any) -> str:
    """A fresh ``s3://`` prefix for one test."""
    name = request.node.name.replace("[", "-").replace("]", "")[:40]
    return f"s3://{BUCKET}/{name}-{next(_prefixes)}"
