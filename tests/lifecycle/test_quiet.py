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


def test_importing_labile_leaves_structlog_unconfigured() -> None:
    """The library configures no process-wide state: an application's structlog is its own."""
    code = "import labile, labile.plugin, structlog; assert not structlog.is_configured()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def test_library_modules_log_through_labile_loggers() -> None:
    """No module under core/, plugins/ or contrib/ asks structlog for a logger or configures
    it: `labile.plugin.get_logger` gives one that writes to stdlib logging whatever the
    application did to structlog."""
    root = Path(__file__).resolve().parents[2]
    offenders = [
        f"{path.relative_to(root)}:{n}"
        for top in ("core", "plugins", "contrib")
        for path in sorted((root / top).rglob("*.py"))
        if path.name != "_logconfig.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "structlog.get_logger(" in line or "structlog.configure(" in line
    ]
    assert not offenders, f"use labile.plugin.get_logger instead: {offenders}"


def test_an_application_that_configures_structlog_still_gets_labile_events_via_logging(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """labile's loggers ignore the application's structlog config: events reach stdlib logging."""
    import structlog

    structlog.configure(processors=[structlog.processors.JSONRenderer()],
                        logger_factory=structlog.PrintLoggerFactory(sys.stdout))
    try:
        caplog.set_level(logging.DEBUG, logger="labile")
        with Memory.open({"embedder": {"type": "hashing"}}, preset="bm25",
                         path=tmp_path / "s") as memory:
            memory.add(chat()[:2], namespace="u")
    finally:
        structlog.reset_defaults()
    assert any(r.getMessage().startswith("lancedb_store_created") for r in caplog.records)
