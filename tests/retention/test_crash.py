"""An apply is one commit: when it fails the store is as it was, and a retry hides all once."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from retention_helpers import T0, snapshot, turns

from labile import Memory
from labile_retention import RetentionPolicy, apply_retention

NOW = T0 + timedelta(days=400)


def test_a_failed_commit_hides_nothing_and_a_retry_hides_all(tmp_path: Path) -> None:
    from labile_lancedb._txn import Journal

    cfg = {"preset": "bm25", "embedder": {"type": "hashing"}}
    policy = RetentionPolicy(unused_days=90, small_talk_days=0)
    with Memory.open(cfg, path=tmp_path / "clean") as clean:
        clean.add(turns("t", [0, 10, 20, 380, 390, 395]), namespace="u")
        apply_retention(clean, "u", policy, now=NOW)
        expected = snapshot(clean, "u")
    real_commit = Journal.commit

    def commit_then_fail(self: Journal, txn: Any, seqs: dict[str, int]) -> None:
        self.write(txn, seqs)  # the rows reach LanceDB ...
        raise OSError("disk full")  # ... and the commit fails before it is final

    with Memory.open(cfg, path=tmp_path / "failing") as failing:
        failing.add(turns("t", [0, 10, 20, 380, 390, 395]), namespace="u")
        before = snapshot(failing, "u")
        Journal.commit = commit_then_fail  # type: ignore[method-assign]
        try:
            with pytest.raises(Exception, match="disk full"):
                apply_retention(failing, "u", policy, now=NOW)
        finally:
            Journal.commit = real_commit  # type: ignore[method-assign]
        assert snapshot(failing, "u") == before
    commits: list[int] = []

    def counted(self: Journal, txn: Any, seqs: dict[str, int]) -> None:
        commits.append(1)
        real_commit(self, txn, seqs)

    with Memory.open(path=tmp_path / "failing") as reopened:
        assert snapshot(reopened, "u") == before
        Journal.commit = counted  # type: ignore[method-assign]
        try:
            report = apply_retention(reopened, "u", policy, now=NOW)
        finally:
            Journal.commit = real_commit  # type: ignore[method-assign]
        # One commit: a failure anywhere leaves all of it or none of it.
        assert len(report.hidden) == 4 and len(commits) == 1
        assert snapshot(reopened, "u") == expected
