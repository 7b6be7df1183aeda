"""Question-by-question comparison of two per-question logs (``labile bench compare``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labile_bench.compare import compare_logs, format_comparison, sign_test
from labile_cli import main


def _row(index: int, r5: float, sid: str = "c") -> dict:
    return {"sample_id": sid, "index": index, "category": 1, "question": f"q{index}?",
            "metrics": {"recall@5": r5, "ndcg@5": r5}}


def test_counts_moves_and_lists_them() -> None:
    a = [_row(0, 1.0), _row(1, 0.0), _row(2, 0.5), _row(3, 0.0)]
    b = [_row(0, 1.0), _row(1, 1.0), _row(2, 0.0), _row(3, 1.0)]
    cmp = compare_logs(a, b)
    r5 = next(m for m in cmp.metrics if m.metric == "recall@5")
    assert (r5.better, r5.worse) == (2, 1)
    assert r5.mean_a == pytest.approx(0.375) and r5.mean_b == pytest.approx(0.75)
    assert [q["index"] for q in cmp.moved] == [1, 2, 3]
    assert cmp.moved[1]["recall@5"] == [0.5, 0.0]
    assert "recall@5" in format_comparison(cmp)


def test_questions_are_matched_by_conversation_and_index() -> None:
    a = [_row(0, 1.0, "x"), _row(0, 0.0, "y")]
    b = [_row(0, 0.0, "y"), _row(0, 1.0, "x"), _row(5, 1.0, "x")]  # reordered, one extra
    cmp = compare_logs(a, b)
    assert cmp.questions == 2 and cmp.moved == ()


def test_sign_test() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(3, 3) == 1.0
    assert sign_test(10, 0) == pytest.approx(2 / 1024)
    assert sign_test(4, 3) == sign_test(3, 4) and sign_test(4, 3) > 0.5


def test_no_common_question_or_an_unknown_metric_is_an_error() -> None:
    with pytest.raises(ValueError, match="no question in common"):
        compare_logs([_row(0, 1.0, "x")], [_row(0, 1.0, "y")])
    with pytest.raises(ValueError, match="unknown metric 'R@5'.*recall@5, ndcg@5"):
        compare_logs([_row(0, 1.0)], [_row(0, 1.0)], focus="R@5")


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("\n".join(json.dumps(r) for r in [_row(0, 0.0), _row(1, 1.0)]) + "\n")
    b.write_text("\n".join(json.dumps(r) for r in [_row(0, 1.0), _row(1, 1.0)]) + "\n")
    out_file = tmp_path / "cmp.json"
    assert main(["bench", "compare", str(a), str(b), "--list", "--json", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert "c #0 (cat 1) recall@5 0.00 -> 1.00: q0?" in out
    assert json.loads(out_file.read_text())["metrics"][0]["better"] == 1


def test_cli_names_an_unreadable_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "a.jsonl"
    good.write_text(json.dumps(_row(0, 1.0)) + "\n")
    assert main(["bench", "compare", str(good), str(tmp_path / "missing.jsonl")]) != 0
    assert "cannot read the per-question log" in capsys.readouterr().err
