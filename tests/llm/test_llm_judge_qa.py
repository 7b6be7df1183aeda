"""The LLM judge and the QA evaluator, with scripted models."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from labile._errors import LLMOutputError
from labile._memory import Memory
from labile._usage import UsageMeter
from labile.testing import observations
from labile_bench.judge import (
    JUDGE_PROMPT_VERSION,
    JUDGE_SCHEMA,
    judge,
    judge_prompt_sha256,
    load_judge_prompt,
    render_judge_prompt,
)
from labile_bench.qa import QAEvaluator, evaluate_qa, make_qa_hook, qa_markdown, summarize
from labile_io.locomo import Question
from labile_llm import ScriptedLLM

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_judge_prompt_is_versioned_package_data() -> None:
    text = load_judge_prompt()
    assert JUDGE_PROMPT_VERSION == "judge_v1"
    for field in ("{question}", "{gold}", "{predicted}"):
        assert text.count(field) == 1
    assert len(judge_prompt_sha256()) == 64
    with pytest.raises(FileNotFoundError):
        load_judge_prompt("judge_v999")
    with pytest.raises(FileNotFoundError):
        load_judge_prompt("../judge_v1")


def test_render_is_single_pass() -> None:
    prompt = render_judge_prompt("When?", "7 May 2023", "  {gold} maybe  ")
    assert "Reference answer: 7 May 2023" in prompt
    assert "Assistant's answer: {gold} maybe" in prompt
    assert '{"verdict": "CORRECT"}' in prompt


def test_judge_verdicts() -> None:
    usage = UsageMeter()
    llm = ScriptedLLM(replies=['{"verdict": "CORRECT"}', '{"verdict": "WRONG"}'], usage=usage)
    assert judge(llm, "When?", "7 May 2023", "May 7, 2023") is True
    assert judge(llm, "When?", "7 May 2023", "June 2022") is False
    assert [c.operation for c in llm.calls] == ["judge", "judge"]
    assert llm.calls[0].json_schema == JUDGE_SCHEMA
    assert usage.snapshot()["judge"]["calls"] == 2
    assert judge(llm, "When?", "7 May 2023", "   ") is False  # no call for an empty answer
    assert len(llm.calls) == 2
    bad = ScriptedLLM(rules=[(".", '{"verdict": "MAYBE"}')])
    with pytest.raises(LLMOutputError):
        judge(bad, "q", "g", "p")
    assert len(bad.calls) == 2  # asked once more, then failed closed


# -- evaluator ---------------------------------------------------------------------------


def _memory(make_pm: Callable[..., Any], config: dict[str, Any]) -> Memory:
    memory = Memory.open(config, plugin_manager=make_pm())
    memory.add(observations([("Caroline", "I went to the LGBTQ support group yesterday."),
                             ("Melanie", "I ran a charity race for mental health."),
                             ("Caroline", "I am researching adoption agencies.")],
                            start=T0), namespace="conv-26")
    return memory


def _answers() -> ScriptedLLM:
    return ScriptedLLM(usage=UsageMeter(), rules=[
        ("Question: When did Caroline", '{"answer": "7 May 2023", "cited": [1]}'),
        ("Question: What was the charity", '{"answer": "mental health", "cited": [1]}'),
        ("Question: What is Caroline's pet", '{"answer": "Not available in memory.", '
                                             '"cited": []}'),
        ("Question: A broken", ScriptedLLM.malformed()),
    ])


def _judge() -> ScriptedLLM:
    return ScriptedLLM(usage=UsageMeter(), rules=[
        (r"Assistant's answer: 7 May 2023", '{"verdict": "CORRECT"}'),
        (r"Assistant's answer: mental health", '{"verdict": "CORRECT"}'),
        (r"Assistant's answer: Not available", ["not json", "still not json"]),
        (".", '{"verdict": "WRONG"}'),
    ])


QUESTIONS = [
    Question(index=0, question="When did Caroline go to the support group?",
             answer="7 May 2023", category=2, evidence=("D1:1",), raw_evidence=("D1:1",)),
    {"question": "What was the charity race for?", "answer": "mental health awareness",
     "category": 4, "id": "q1"},
    {"question": "What is Caroline's pet called?", "answer": "Caroline has no pet mentioned",
     "category": 5},
    {"question": "A broken question about adoption", "answer": "agencies", "category": 1},
]


def test_evaluator_rows(make_pm: Callable[..., Any], bm25_config: dict[str, Any]) -> None:
    answers, judge_llm = _answers(), _judge()
    with _memory(make_pm, bm25_config) as memory:
        evaluator = QAEvaluator(answers, judge_llm, k=5, budget_tokens=500)
        rows = [evaluator.evaluate(memory, "conv-26", q, as_of=T0) for q in QUESTIONS]
    first, second, adversarial, broken = rows
    assert first["id"] == 0 and first["predicted"] == "7 May 2023"
    assert first["verdict"] == "CORRECT" and first["correct"] is True
    assert first["f1"] == 1.0 and first["bleu1"] == 1.0 and first["rouge_l"] == 1.0
    assert first["tokens"] == first["prompt_tokens"] + first["completion_tokens"] > 0
    assert first["llm_calls"] == 1 and first["judge_tokens"] > 0
    assert first["cited"] and set(first["cited"]) <= set(first["retrieved"])
    assert second["id"] == "q1" and second["correct"] is True
    assert 0 < second["f1"] < 1
    # the judge never produced valid JSON: an ERROR verdict, counted wrong
    assert adversarial["verdict"] == "ERROR" and adversarial["correct"] is False
    assert adversarial["error"].startswith("judge: LLMOutputError")
    # the answer failed closed: empty prediction, judge not asked
    assert broken["predicted"] == "" and broken["verdict"] == "ERROR"
    assert broken["error"].startswith("answer: LLMOutputError") and broken["judge_tokens"] == 0
    assert broken["llm_calls"] == 2  # the answer call and its repair
    assert all("Reference answer: agencies" not in c.prompt for c in judge_llm.calls)
    assert json.dumps(rows)


def test_evaluate_qa_and_summary(make_pm: Callable[..., Any],
                                 bm25_config: dict[str, Any]) -> None:
    with _memory(make_pm, bm25_config) as memory:
        out = evaluate_qa(memory, "conv-26", QUESTIONS, answer_llm=_answers(),
                          judge_llm=_judge(), k=5, as_of=T0)
    summary = out["summary"]
    assert summary["excluded_categories"] == ["5"]
    assert summary["overall"]["n"] == 3  # category 5 left out
    assert summary["overall"]["accuracy"] == pytest.approx(66.7)
    assert summary["overall"]["errors"] == 1
    assert list(summary["by_category"]) == ["1", "2", "4", "5"]
    assert summary["by_category"]["5"]["n"] == 1
    assert summary["judge_prompt"]["version"] == "judge_v1"
    table = qa_markdown(summary)
    assert "| 5 adversarial (excluded) | 1 |" in table
    assert "| 2 temporal | 1 | 100.0 | 100.0 |" in table
    assert table.splitlines()[-1].startswith("| overall | 3 | 66.7")
    assert json.dumps(out)


def test_without_judge_only_local_metrics(make_pm: Callable[..., Any],
                                          bm25_config: dict[str, Any]) -> None:
    with _memory(make_pm, bm25_config) as memory:
        row = QAEvaluator(_answers()).evaluate(memory, "conv-26", QUESTIONS[0])
    assert row["verdict"] is None and row["correct"] is None and row["f1"] == 1.0
    summary = summarize([row])
    assert summary["overall"]["accuracy"] is None and summary["overall"]["f1"] == 100.0
    assert summary["overall"]["judged"] == 0


def test_summarize_arithmetic() -> None:
    def row(cat: Any, correct: bool, f1: float, tokens: int, cost: float) -> dict[str, Any]:
        return {"category": cat, "correct": correct, "f1": f1, "bleu1": f1, "rouge_l": f1,
                "tokens": tokens, "judge_tokens": 10, "cost_usd": cost, "judge_cost_usd": 0.1,
                "latency_ms": 10.0, "error": None}

    rows = [row(1, True, 1.0, 100, 0.01), row(1, False, 0.0, 300, 0.03),
            row(5, True, 0.5, 50, 0.0), row("x", True, 0.25, 10, 0.0)]
    summary = summarize(rows)
    overall = summary["overall"]
    assert overall["n"] == 3 and overall["accuracy"] == pytest.approx(66.7)
    assert overall["f1"] == pytest.approx(41.7)
    assert overall["tokens_per_question"] == pytest.approx(136.7)
    assert overall["cost_usd"] == pytest.approx(0.04)
    assert overall["judge_cost_usd"] == pytest.approx(0.3)
    assert list(summary["by_category"]) == ["1", "5", "x"]
    assert summarize(rows, exclude_categories=())["overall"]["n"] == 4
    assert summarize([])["overall"]["n"] == 0


def test_locomo_qa_hook(make_pm: Callable[..., Any], bm25_config: dict[str, Any]) -> None:
    factory = make_qa_hook(answer_llm=_answers(), judge_llm=_judge())
    hook = factory("bm25")
    assert factory.hooks == {"bm25": hook}
    conversation = SimpleNamespace(sample_id="conv-26")
    with _memory(make_pm, bm25_config) as memory:
        for q in QUESTIONS[:2]:
            question = q if isinstance(q, Question) else SimpleNamespace(**q)
            result = memory.search(question.question, namespace="conv-26", k=5, as_of=T0)
            extra = hook(memory, conversation, question, result)
            assert extra["qa"]["sample_id"] == "conv-26"
            assert extra["qa"]["retrieved"] == result.node_ids
    summary = hook.summary()
    assert summary["overall"]["n"] == 2 and summary["overall"]["accuracy"] == 100.0
    assert summary["models"] == {"answer": "scripted", "judge": "scripted"}
    assert summary["usage"]["judge"]["judge"]["calls"] == 2
    assert json.dumps(summary)


def test_named_models_are_built_lazily(make_pm: Callable[..., Any],
                                       bm25_config: dict[str, Any],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from labile._errors import MissingDependencyError

    hook = make_qa_hook(answer_model="gpt-4o-mini", judge_model="gpt-4o-mini")("hybrid")
    monkeypatch.setitem(sys.modules, "litellm", None)
    with _memory(make_pm, bm25_config) as memory:
        result = memory.search("support group", namespace="conv-26", k=5)
        with pytest.raises(MissingDependencyError):
            hook(memory, SimpleNamespace(sample_id="x"), QUESTIONS[0], result)
