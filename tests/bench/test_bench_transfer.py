"""The transfer-ceiling analysis of per-question logs (``labile bench transfer``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from labile_bench.transfer import analyse_transfer, format_transfer
from labile_cli import main


def _row(sid: str, gold: list[str], retrieved: list[str], question: str = "q?") -> dict:
    return {"sample_id": sid, "question": question, "gold": gold, "retrieved_turns": retrieved}


def _by(report, feedback: str, link: str):  # type: ignore[no-untyped-def]
    return next(r for r in report.rows if r.feedback == feedback and r.link == link)


def test_oracle_carries_recalled_gold_to_a_similar_later_question() -> None:
    rows = [
        # q0 retrieves its gold D1 at rank 1 (an oracle answerer would cite it)
        _row("c", ["D1"], ["D1", "X1", "X2", "X3", "X4", "X5"]),
        # q1 asks the same thing in other words and misses D1 in its top 5
        _row("c", ["D1"], ["X6", "X7", "X8", "X9", "Y1", "D1"]),
    ]
    same = np.array([[1.0, 0.0], [1.0, 0.0]])
    report = analyse_transfer(rows, same, thresholds=(0.8,))
    oracle = _by(report, "oracle", "similar>=0.8")
    assert (oracle.carried, oracle.carried_gold, oracle.questions_gaining) == (1, 1, 1)
    assert oracle.precision == 1.0
    # the system's own top 3 carries D1 and two non-gold turns
    self3 = _by(report, "self-top3", "similar>=0.8")
    assert (self3.carried, self3.carried_gold) == (3, 1)


def test_dissimilar_questions_and_other_conversations_carry_nothing() -> None:
    rows = [
        _row("a", ["D1"], ["D1", "X1"]),
        _row("b", ["D1"], ["X2", "X3"]),  # another conversation: never linked
        _row("a", ["D1"], ["X4", "X5"]),  # orthogonal question
    ]
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    report = analyse_transfer(rows, vectors)
    assert all(r.carried == 0 for r in report.rows if r.link.startswith("similar"))


def test_shared_link_follows_a_co_used_turn() -> None:
    rows = [
        _row("c", ["A", "B"], ["A", "B", "Z"]),
        _row("c", ["B"], ["A", "Q", "R", "S", "T", "B"]),  # shares A with q0's citations
    ]
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])
    oracle = _by(analyse_transfer(rows, vectors), "oracle", "shared")
    assert (oracle.carried, oracle.carried_gold) == (1, 1)


def test_base_precision_by_rank_band() -> None:
    rows = [_row("c", ["a", "g"], ["a", "b", "c", "d", "e", "g", "h", "i", "j", "k"])]
    report = analyse_transfer(rows, np.ones((1, 2)))
    assert report.base_precision_top5 == pytest.approx(0.2)
    assert report.base_precision_6_10 == pytest.approx(0.2)
    assert "ranks 1-5 0.200" in format_transfer(report)


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="2 question vectors for 1 log rows"):
        analyse_transfer([_row("c", [], [])], np.ones((2, 2)))
    with pytest.raises(ValueError, match="log row 0 lacks gold"):
        analyse_transfer([{"sample_id": "c", "retrieved_turns": []}], np.ones((1, 2)))
    with pytest.raises(ValueError, match="unknown feedback model 'x'.*oracle"):
        analyse_transfer([_row("c", [], [])], np.ones((1, 2)), feedbacks=("x",))


def test_cli_reads_a_locomo_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "locomo-x.jsonl"
    rows = [_row("c", ["D1"], ["D1", "X"], "What did Ana adopt?"),
            _row("c", ["D1"], ["Y", "D1"], "What did Ana adopt?")]
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out_file = tmp_path / "t.json"
    assert main(["bench", "transfer", str(log), "--embedder", "hashing",
                 "--json", str(out_file)]) == 0
    assert "oracle" in capsys.readouterr().out
    data = json.loads(out_file.read_text())
    assert data["questions"] == 2
    # identical questions: the oracle carries D1 (already in q1's top 5, so it is not new)
    assert all(r["carried_gold"] == 0 for r in data["rows"])


def test_cli_rejects_a_file_that_is_not_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"x": 1}\n')
    assert main(["bench", "transfer", str(bad), "--embedder", "hashing"]) != 0
    assert "not a per-question log" in capsys.readouterr().err
