"""``labile bench serve`` end to end on a tiny corpus (slow: it starts a server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_helpers import write_config

from labile_bench.mcp_serve import corpus
from labile_cli import main as labile_main


def test_the_corpus_is_deterministic_and_its_questions_name_its_people() -> None:
    first, questions = corpus(30)
    again, _ = corpus(30)
    assert [(o.id, o.text, o.timestamp) for o in first] == \
        [(o.id, o.text, o.timestamp) for o in again]
    assert len({o.id for o in first}) == 30
    speakers = {o.speaker for o in first}
    assert all(any(p in q for p in speakers) for q in questions)


@pytest.mark.slow
def test_bench_serve_reports_both_sides_and_their_ratio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "summary.json"
    status = labile_main(["bench", "serve", "-c", str(write_config(tmp_path)), "--clients", "2",
                          "--seconds", "0.5", "--turns", "12", "--json", str(out)])
    assert status == 0
    summary = json.loads(out.read_text())
    assert summary == json.loads(capsys.readouterr().out)
    for side in ("in_process", "mcp_http"):
        for clients in ("1", "2"):
            phase = summary[side][clients]
            assert phase["requests"] >= 1 and phase["p95_ms"] >= phase["p50_ms"] > 0
    assert summary["overhead"]["p50_ratio_1_client"] > 0
