"""``labile bench crash``: a real ``kill -9`` of a writer subprocess, then the checks.

The default suite kills each operation that erases, and an import, twice; the
slow suite runs every operation longer, on local disk and on ``s3://`` (moto).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from labile.cli import main
from labile_bench.crash import moto_s3, run_crash
from labile_bench.crash_child import OPS


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
    tally = run_crash("bm25", 20, directory=tmp_path, seed=7, op=op, show_progress=False)
    assert (tally.failures, tally.problems) == (0, [])
    assert tally.in_op or op == "add"


@pytest.mark.slow
@pytest.mark.parametrize("op", ["forget-erase", "purge-erase", "erase"])
def test_kills_of_erasing_writers_on_s3(tmp_path: Path, op: str) -> None:
    pytest.importorskip("moto.server", reason="pip install 'labile[test]' (moto)")
    with moto_s3(f"test-{op}") as store:
        tally = run_crash("bm25", 5, directory=tmp_path, seed=11, op=op, store=store,
                          show_progress=False)
    assert (tally.store, tally.failures, tally.problems) == ("s3", 0, [])


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
