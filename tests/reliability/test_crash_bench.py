"""``labile bench crash``: a real ``kill -9`` of a writer subprocess, then the checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from labile.cli import main
from labile_bench.crash import run_crash


def test_a_killed_writer_leaves_a_store_that_passes_every_check(tmp_path: Path) -> None:
    tally = run_crash("bm25", 2, directory=tmp_path, seed=3, show_progress=False)
    assert (tally.trials, tally.failures, tally.problems) == (2, 0, [])
    assert tally.rollbacks + tally.committed_unacked >= 1  # each kill had a batch in flight


def test_the_command_refuses_zero_trials(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "crash", "--trials", "0"]) == 2
    assert "--trials must be at least 1" in capsys.readouterr().err
