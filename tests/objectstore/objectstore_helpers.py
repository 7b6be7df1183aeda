"""Shared helpers of the object-store tests: the moto server's options and stores on it.

A plain module with a unique name (not a conftest), imported by the test files.
Credentials are fake and passed by environment variable name, as a deployment
would pass real ones.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs
import numpy as np

from labile.plugin import Node, Observation
from labile_lancedb.config import LanceStoreConfig
from labile_lancedb.store import LanceStore

BUCKET = "labile-test"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]
#: The environment variables the stores read their (fake) credentials from.
CREDENTIAL_ENV = {"LABILE_TEST_S3_KEY": "testing", "LABILE_TEST_S3_SECRET": "testing"}


@attrs.frozen
class S3Server:
    """A running moto S3 server on loopback."""

    endpoint: str

    def options(self) -> dict[str, str]:
        """The non-secret storage options of a store on this server."""
        return {"aws_endpoint": self.endpoint, "aws_region": "us-east-1", "allow_http": "true"}

    def config(self, uri: str, **kw: Any) -> LanceStoreConfig:
        """A store config for ``uri`` on this server (credentials by variable name)."""
        os.environ.update(CREDENTIAL_ENV)
        return LanceStoreConfig(
            path=uri, storage_options=self.options(),
            storage_options_env={"aws_access_key_id": "LABILE_TEST_S3_KEY",
                                 "aws_secret_access_key": "LABILE_TEST_S3_SECRET"}, **kw)

    def create_bucket(self) -> None:
        """Create the test bucket (idempotent)."""
        import urllib.request

        req = urllib.request.Request(f"{self.endpoint}/{BUCKET}", method="PUT")
        with urllib.request.urlopen(req, timeout=10):  # loopback only
            pass


def node(nid: str, dim: int = 16, content: str | None = None) -> Node:
    """A fact node with a deterministic unit embedding."""
    vec = np.random.default_rng(abs(hash(nid)) % 2**32).standard_normal(dim).astype(np.float32)
    return Node(id=nid, kind="fact", content=content or f"content of {nid}",
                embedding=vec / np.linalg.norm(vec), created_at=T0)


def obs(oid: str, text: str | None = None) -> Observation:
    """An observation at a fixed time."""
    return Observation(id=oid, text=text or f"turn {oid}", timestamp=T0)


def deps(name: str = "test-emb", dim: int = 16) -> Any:
    """What `LanceStore` reads from its deps: an embedder's name and dimension."""
    return SimpleNamespace(embedder=SimpleNamespace(name=name, dim=dim))


def open_s3_store(server: S3Server, uri: str, *, dim: int = 16, **kw: Any) -> LanceStore:
    """A LanceDB store at ``uri`` on the moto server."""
    return LanceStore(server.config(uri, **kw), deps(dim=dim))


def child_env() -> dict[str, str]:
    """The environment of a child Python that imports labile from this checkout."""
    return dict(os.environ, **CREDENTIAL_ENV, PYTHONPATH=os.pathsep.join(
        str(ROOT / p) for p in ("core", "plugins", "contrib")))
