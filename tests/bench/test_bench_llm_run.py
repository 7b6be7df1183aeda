"""``bench locomo --llm``: the real-model runner, driven by a scripted model on a tiny fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labile import LabileError
from labile_bench.llm_report import format_llm_table
from labile_bench.llm_run import run_llm_locomo, subset
from labile_bench.llm_spec import parse_llm_spec
from labile_bench.llm_tally import per_turn, stage_totals
from labile_io.locomo import load_locomo

DATA = Path(__file__).parent / "data" / "locomo_tiny.json"
FAST = {"store": {"type": "memory"}, "embedder": {"type": "hashing"}}
ANSWER = json.dumps({"answer": "cello", "cited": [1]})


def test_subset_keeps_only_questions_answerable_from_the_kept_turns() -> None:
    conversations, _ = load_locomo(DATA)
    one = subset(conversations, sessions=1)[0]
    assert [s.number for s in one.sessions] == [1]
    # D2:2 is not kept; category 5 is never asked
    assert [q.evidence for q in one.questions] == [("D1:2",), ("D1:1", "D1:3")]
    two_turns = subset(conversations, sessions=1, turns=2)[0]
    assert [q.evidence for q in two_turns.questions] == [("D1:2",)]
    assert subset(conversations, questions=1)[0].questions[0].category == 4


def test_run_counts_calls_outcomes_and_both_question_passes(tmp_path: Path) -> None:
    """Answer 2 is malformed twice (fails closed, never judged); judge 1 says CORRECT."""
    conversations, _ = load_locomo(DATA)
    llm = {"type": "scripted", "replies": [ANSWER, '{"verdict": "CORRECT"}', "nope", "nope"]}
    summary = run_llm_locomo(subset(conversations, sessions=1), ["bm25"], llm,
                             dataset=str(DATA), ks=(5,), log_dir=tmp_path,
                             config_overrides=FAST, show_progress=False)
    bm25 = summary["presets"]["bm25"]
    assert summary["questions"] == 2 and bm25["turns"] == 3
    assert bm25["ingest"]["total"]["calls"] == 0  # bm25 makes no LLM decision
    assert bm25["replies"] == {"answer": {"valid": 1, "rejected:invalid": 1},
                               "judge": {"valid": 1}}
    off, on = bm25["questions"]["reconsolidation_off"], bm25["questions"]["reconsolidation_on"]
    assert off["n"] == on["n"] == 2 and "qa" not in off
    assert on["stages"]["answer"]["calls"] == 3  # one call, then a failed one and its repair
    assert on["stages"]["judge"]["calls"] == 1
    assert on["qa"]["accuracy"] == 50.0 and on["qa"]["errors"] == 1
    rows = [json.loads(line) for line in
            (tmp_path / "locomo-llm-bm25.jsonl").read_text().splitlines()]
    assert [r["pass"] for r in rows] == ["no_feedback"] * 2 + ["feedback"] * 2
    assert rows[2]["qa"]["predicted"] == "cello" and rows[3]["qa"]["error"]
    table = format_llm_table(summary)
    assert "R@5 recon. on" in table and "2/0/1" in table  # valid / repaired / rejected


def test_no_qa_keeps_retrieval_only() -> None:
    conversations, _ = load_locomo(DATA)
    summary = run_llm_locomo(subset(conversations, sessions=1), ["bm25"], {"type": "scripted"},
                             dataset=str(DATA), ks=(5,), qa=False, config_overrides=FAST,
                             show_progress=False)
    # bm25 does not reconsolidate: without QA there is no second pass
    assert summary["presets"]["bm25"]["questions"]["reconsolidation_on"] is None


def test_per_turn_splits_online_from_consolidation_operations() -> None:
    rows = [{"usage": {"extract": {"calls": 1, "prompt_tokens": 100}},
             "replies": {"extract": {"valid": 1}}, "wall_s": 2.0, "cpu_s": 1.0},
            {"usage": {"extract": {"calls": 1, "prompt_tokens": 50},
                       "diagnose": {"calls": 2, "prompt_tokens": 400}},
             "replies": {"diagnose": {"rejected:truncated": 1, "valid": 1}},
             "wall_s": 4.0, "cpu_s": 1.0}]
    online = per_turn(rows, exclude={"diagnose"})
    assert online["total"]["calls"] == 2 and online["per_turn"]["prompt_tokens"] == 75
    assert online["replies"] == {"valid": 1} and online["wall_s_per_turn"] == 3.0
    inside = per_turn(rows, include={"diagnose"})
    assert inside["total"]["prompt_tokens"] == 400
    assert inside["replies"] == {"rejected:truncated": 1, "valid": 1}
    stages = stage_totals([{"usage": {"search": {"plan": {"calls": 2}}}},
                           {"usage": {"search": {"plan": {"calls": 1}}}}])
    assert stages["search"]["calls"] == 3 and stages["search"]["per_row"]["calls"] == 1.5


@pytest.mark.parametrize(("spec", "table"), [
    ("llamacpp", {"type": "llamacpp"}),
    ("llamacpp:n_threads=1,timeout_s=null,temperature=0.5,structured_output=json",
     {"type": "llamacpp", "n_threads": 1, "timeout_s": None, "temperature": 0.5,
      "structured_output": "json"}),
    ("litellm:model=openai/smol,api_base=http://127.0.0.1:8080/v1",
     {"type": "litellm", "model": "openai/smol", "api_base": "http://127.0.0.1:8080/v1"}),
])
def test_parse_llm_spec(spec: str, table: dict[str, object]) -> None:
    assert parse_llm_spec(spec) == table


@pytest.mark.parametrize("spec", ["", ":n_threads=1", "llamacpp:n_threads", "llamacpp:N=1"])
def test_parse_llm_spec_names_what_is_wrong(spec: str) -> None:
    with pytest.raises(LabileError, match="--llm"):
        parse_llm_spec(spec)


def test_add_per_session_keeps_figures_per_turn() -> None:
    """One ``add`` per session: rows count their turns, per-turn means divide by turns."""
    conversations, _ = load_locomo(DATA)
    cut = subset(conversations)
    n_turns = sum(len(s.turns) for c in cut for s in c.sessions)
    n_sessions = sum(len(c.sessions) for c in cut)
    summary = run_llm_locomo(cut, ["bm25"], {"type": "scripted"}, dataset=str(DATA), ks=(5,),
                             qa=False, config_overrides=FAST, add_per="session",
                             show_progress=False)
    bm25 = summary["presets"]["bm25"]
    assert summary["add_per"] == "session"
    assert bm25["turns"] == n_turns and bm25["adds"] == n_sessions < n_turns
    assert bm25["ingest"]["turns"] == n_turns
    assert [r["turns"] for r in bm25["turn_rows"]] == [len(s.turns) for c in cut
                                                      for s in c.sessions]
    with pytest.raises(ValueError, match="add_per must be one of turn, session"):
        run_llm_locomo(cut, ["bm25"], {"type": "scripted"}, dataset=str(DATA), qa=False,
                       config_overrides=FAST, add_per="day", show_progress=False)


def test_allmem_llm_reports_what_its_diagnosis_pre_gate_skipped() -> None:
    """Every buffered neighbourhood is asked or skipped with a reason; the table says so."""
    conversations, _ = load_locomo(DATA)
    describe = json.dumps({"summary": "a message", "keywords": ["one", "two", "three"]})
    llm = {"type": "scripted", "replies": [describe] * 20}
    summary = run_llm_locomo(subset(conversations, sessions=1), ["allmem-llm"], llm,
                             dataset=str(DATA), ks=(5,), qa=False, config_overrides=FAST,
                             show_progress=False)
    entry = summary["presets"]["allmem-llm"]
    counts = entry["consolidation"]["diagnosis"]
    (run,) = entry["consolidation"]["runs"]
    skipped = sum(n for k, n in counts.items() if k.startswith("skipped:"))
    assert counts["asked"] + skipped == run["counts"]["neighbourhoods"] > 0
    assert isinstance(run["log"], list)  # every target's outcome, with its reason
    json.dumps(summary)  # the summary is written as JSON
    assert f"{counts['asked']}/{skipped}" in format_llm_table(summary)
