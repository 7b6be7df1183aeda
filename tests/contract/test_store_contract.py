"""The `Store` contract (`labile.testing.StoreContract`), run against every bundled store:
the reference `MemoryStore` and the LanceDB store.

A failure on ``TestMemoryStore`` is a kernel bug (the reference defines the
semantics); a failure on ``TestLanceStore`` only is a bug of the LanceDB store.
The checks themselves ship in the kernel, so a third-party store runs the very
same suite (see ``docs/store.md``, "Testing your own store").
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from labile._memstore import MemoryStore
from labile._protocols import Store
from labile.testing import StoreContract


class TestMemoryStore(StoreContract):
    """The reference store against its own contract."""

    @pytest.fixture
    def store(self) -> Iterator[Store]:
        s = MemoryStore()
        yield s
        s.close()


class TestLanceStore(StoreContract):
    """The LanceDB store, one new directory per check."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        from labile_lancedb.config import LanceStoreConfig
        from labile_lancedb.store import LanceStore

        s = LanceStore(LanceStoreConfig(path=str(tmp_path / "mem")),
                       SimpleNamespace(embedder=self.embedder))
        yield s
        s.close()

    def reopen(self, store: Store) -> Store:
        """Close the store and open its directory again (the deferred durability check)."""
        from labile_lancedb.config import LanceStoreConfig
        from labile_lancedb.store import LanceStore

        assert isinstance(store, LanceStore)
        store.close()
        return LanceStore(LanceStoreConfig(path=str(store.path)),
                          SimpleNamespace(embedder=self.embedder))


ROOT = Path(__file__).resolve().parents[2]


def _python(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        str(ROOT / p) for p in ("core", "plugins", "contrib")))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120, check=False)


def test_a_subclass_without_a_store_fixture_fails_with_a_pointer(tmp_path: Path) -> None:
    (tmp_path / "test_forgotten.py").write_text(
        "from labile.testing import StoreContract\n\n\n"
        "class TestForgotten(StoreContract):\n"
        "    pass\n"
    )
    out = _python("-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "empty_namespace",
                  "test_forgotten.py", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 error" in out.stdout, out.stdout
    assert "TestForgotten must define a `store` fixture" in out.stdout, out.stdout


def test_a_failing_check_shows_the_compared_values(tmp_path: Path) -> None:
    """The suite's asserts are rewritten by pytest, as a third party's own tests are."""
    (tmp_path / "test_broken.py").write_text(
        "import pytest\n"
        "from labile._memstore import MemoryStore\n"
        "from labile.testing import StoreContract\n\n\n"
        "class Forgetful(MemoryStore):\n"
        "    def count_nodes(self, namespace, where=None):\n"
        "        return 41\n\n\n"
        "class TestBroken(StoreContract):\n"
        "    @pytest.fixture\n"
        "    def store(self):\n"
        "        yield Forgetful()\n"
    )
    out = _python("-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "nested_batches",
                  "test_broken.py", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "assert 41 == 2" in out.stdout, out.stdout


def test_importing_labile_imports_neither_pytest_nor_the_suite() -> None:
    code = ("import sys, labile, labile._memory\n"
            "print(sorted(m for m in ('pytest', 'labile._store_contract') if m in sys.modules))")
    out = _python("-c", code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
