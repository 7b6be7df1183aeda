"""The library is quiet: nothing on stdout or stderr unless the application configures logging."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lifecycle_helpers import chat

from labile import Memory
from labile._logconfig import stdlib_name

SCRIPT = """
import sys
from labile import Memory, Observation
from datetime import datetime, timezone
with Memory.open(preset=sys.argv[1], path=sys.argv[2]) as memory:
    memory.add([Observation(id="1", text="I adopted a beagle named Rex.", speaker="Ann",
                            timestamp=datetime(2024, 1, 1, tzinfo=timezone.utc))],
               namespace="u")
    memory.search("dog", namespace="u", k=3)
"""


@pytest.mark.parametrize("preset", ["realm", "allmem"])
def test_open_add_search_close_prints_nothing(preset: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, preset, str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=600, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")


def test_configured_logging_gets_events_under_labile_names(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="labile")
    with Memory.open({"embedder": {"type": "hashing"}}, preset="bm25",
                     path=tmp_path / "s") as memory:
        memory.add(chat()[:2], namespace="u")
    records = [r for r in caplog.records if r.getMessage().startswith("lancedb_store_created")]
    assert records and records[0].name == "labile.lancedb._tables"
    assert f"path='{tmp_path / 's'}'" in records[0].getMessage()
    assert records[0].labile["event"] == "lancedb_store_created"  # type: ignore[attr-defined]


def test_logger_names_are_under_labile() -> None:
    assert stdlib_name("labile._memory") == "labile._memory"
    assert stdlib_name("labile_realm.construct") == "labile.realm.construct"
    assert stdlib_name("my_plugin") == "labile.my_plugin"
