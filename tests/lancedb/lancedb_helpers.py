"""Shared helpers for the LanceDB store tests: records, stores and child processes.

A plain module (not a conftest) with a unique name, imported by the test files;
the ``store`` fixture is in this folder's ``conftest.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from labile._model import Edge, Node, Observation, edge_id
from labile_lancedb.config import LanceStoreConfig
from labile_lancedb.store import LanceStore

DIM = 16
T0 = datetime(2024, 1, 1, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]


def deps(name: str = "test-emb", dim: int = DIM) -> Any:
    """What `LanceStore` reads from its deps: an embedder's name and dimension."""
    return SimpleNamespace(embedder=SimpleNamespace(name=name, dim=dim))


def open_store(path: Path | str, *, dim: int = DIM, **kw: Any) -> LanceStore:
    """A store at ``path`` for ``dim``-d vectors, with config options ``kw``."""
    return LanceStore(LanceStoreConfig(path=str(path), **kw), deps(dim=dim))


def rvec(rng: np.random.Generator, n: int = 1, dim: int = DIM) -> NDArray[np.float32]:
    """``n`` random unit vectors."""
    x = rng.standard_normal((n, dim)).astype(np.float32)
    unit: NDArray[np.float32] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return unit


def obs(oid: str, text: str = "hello", **kw: Any) -> Observation:
    """Observation ``oid`` at `T0`."""
    return Observation(id=oid, text=text, timestamp=T0, **kw)


def node(nid: str, content: str = "", **kw: Any) -> Node:
    """Node ``nid`` (kind ``fact`` unless given)."""
    kw.setdefault("kind", "fact")
    return Node(id=nid, content=content or f"content {nid}", **kw)


def edge(src: str, dst: str, pred: str = "rel", **kw: Any) -> Edge:
    """Edge ``src -pred-> dst``."""
    return Edge(id=edge_id(src, pred, dst), src=src, dst=dst, predicate=pred, **kw)


def child_env() -> dict[str, str]:
    """The environment of a child Python that imports labile from this checkout."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        str(ROOT / p) for p in ("core", "plugins", "contrib")))


def run_py(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a child Python and wait for it."""
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=timeout, env=child_env(), check=False)
