"""``labile bench crash``: a real ``kill -9`` of a writer subprocess, then the checks.

The default suite kills each operation that erases, and an import, twice; the
slow suite runs every operation longer, on local disk and on ``s3://`` (moto).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from labile_bench.crash import run_crash
from labile_bench.crash_child import OPS
from labile_cli import main


def test_a_killed_writer_leaves_a_store_that_passes_every_check(tmp_path: Path) -> None:
    tally = run_crash("bm25", 2, directory=tmp_path, seed=3, show_progress=False)
    assert (tally.trials, tally.failures, tally.problems) == (2, 0, [])
    assert tally.rollbacks + tally.committed_unacked >= 1  # each kill had a batch in flight


@pytest.mark.parametrize("op", ["forget-erase", "purge-erase", "import"])
def test_a_writer_killed_while_it_erases_or_imports_leaves_a_sound_store(
        tmp_path: Path, op: str) -> None:
    tally = run_crash("bm25", 2, directory=tmp_path, seed=5, op=op, show_progress=False)
    assert (tally.trials, tally.failures, tally.problems) == (2, 0, [])


@pytest.mark.slow
@pytest.mark.parametrize("op", OPS)
def test_many_kills_of_every_operation(tmp_path: Path, op: str) -> None:
    tally = run_crash("bm25", 10, directory=tmp_path, seed=7, op=op, show_progress=False)
    assert (tally.failures, tally.problems) == (0, [])
    assert tally.in_op or op == "add"


#: How long the S3 run of one operation may take before it counts as stalled.
S3_RUN_LIMIT_S = 420


@pytest.mark.slow
@pytest.mark.parametrize("op", ["forget-erase", "purge-erase", "erase"])
def test_kills_of_erasing_writers_on_s3(tmp_path: Path, op: str) -> None:
    """On s3:// the bench runs in its own process group, under a time limit: a run that
    stalls (the bench has been seen waiting with no request in flight, cause not found
    yet; docs/reliability.md) is reported as such instead of hanging the suite, and a run
    that finishes must pass every check."""
    pytest.importorskip("moto.server", reason="pip install 'labile[test]' (moto)")
    out = tmp_path / "crash.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from labile_cli import main; sys.exit(main())",
         "bench", "crash", "--preset", "bm25", "--op", op, "--trials", "5", "--seed", "11",
         "--s3", "--dir", str(tmp_path / "run"), "--json", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=S3_RUN_LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.xfail(f"the S3 crash bench of {op} stalled past {S3_RUN_LIMIT_S} s "
                     "(known, unexplained: docs/reliability.md)")
    assert proc.returncode == 0, err[-3000:]
    rows = json.loads(out.read_text())
    assert rows and all(r["failures"] == 0 for r in rows), rows


def test_an_unknown_operation_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown operation 'vacuum'; known: add, forget"):
        run_crash("bm25", 1, directory=tmp_path, op="vacuum")


def test_the_command_names_the_operations_it_knows(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "crash", "--op", "vacuum"])
    assert "forget-erase" in capsys.readouterr().err


def test_the_command_refuses_zero_trials(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "crash", "--trials", "0"]) == 2
    assert "--trials must be at least 1" in capsys.readouterr().err
