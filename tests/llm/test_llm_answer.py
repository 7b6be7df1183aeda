"""Answering: context building within a budget, citations, feedback, fail-closed."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labile._errors import InputError, LLMOutputError
from labile._hookspecs import hookimpl
from labile._memory import Memory
from labile._model import Answer, Feedback, Hit, Node, OperationReport, Reach, RetrievalResult
from labile._usage import UsageMeter
from labile.testing import observations
from labile_llm import ScriptedLLM
from labile_llm.answer import ANSWER_PROMPT_VERSION, ANSWER_SCHEMA, answer_question, build_context
from labile_llm.usage import usage_delta

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def words(text: str) -> int:
    return len(text.split())


def hit(node_id: str, text: str, *, days: int | None, score: float) -> Hit:
    ts = None if days is None else T0 + timedelta(days=days)
    node = Node(id=node_id, kind="k", content=text, time_start=ts)
    return Hit(node=node, score=score, via=Reach(atom="test"))


class Recorder:
    """A test plugin: a reconsolidator remembering the feedback it got."""

    def __init__(self) -> None:
        self.seen: list[tuple[RetrievalResult, Feedback]] = []

    @hookimpl
    def labile_register_reconsolidators(self, register: Any) -> None:
        register("test.recorder", self._build, summary="records feedback")

    def _build(self, _config: Any, _deps: Any) -> Recorder:
        return self

    def reconsolidate(self, result: RetrievalResult, feedback: Feedback) -> OperationReport:
        self.seen.append((result, feedback))
        return OperationReport(operator="test.recorder", namespace=result.query.namespace,
                               counts={"seen": 1})


# -- build_context ------------------------------------------------------------------


def test_context_is_dated_numbered_and_newest_first() -> None:
    hits = [hit("a", "I like tea.", days=1, score=0.9),
            hit("b", "Now I prefer\n coffee.", days=5, score=0.8),
            hit("c", "Undated note.", days=None, score=0.7),
            hit("a", "I like tea.", days=1, score=0.5)]  # duplicate node
    text, ids = build_context(hits, budget_tokens=1000, count_tokens=words)
    assert ids == ["b", "a", "c"]
    assert text.splitlines() == [
        "[1] (2024-03-06 09:00 UTC) Now I prefer coffee.",
        "[2] (2024-03-02 09:00 UTC) I like tea.",
        "[3] (undated) Undated note.",
    ]


def test_context_selects_by_relevance_within_budget() -> None:
    hits = [hit("best", "one two three four", days=0, score=0.9),
            hit("long", " ".join(["w"] * 50), days=9, score=0.8),
            hit("short", "five", days=3, score=0.7)]
    text, ids = build_context(hits, budget_tokens=15, count_tokens=words)
    assert ids == ["short", "best"]  # the long one is skipped, later short one fits
    assert words(text) <= 15
    assert build_context([], budget_tokens=10, count_tokens=words) == ("", [])
    with pytest.raises(InputError):
        build_context(hits, budget_tokens=0, count_tokens=words)


def test_context_cuts_a_too_long_best_hit() -> None:
    hits = [hit("x", " ".join(f"w{i}" for i in range(100)), days=0, score=1.0)]
    text, ids = build_context(hits, budget_tokens=20, count_tokens=words)
    assert ids == ["x"] and text.endswith("…") and words(text) <= 20
    assert text.startswith("[1] (2024-03-01 09:00 UTC) w0 w1")


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.text(min_size=0, max_size=80), min_size=0, max_size=8),
       budget=st.integers(min_value=1, max_value=120))
def test_context_never_exceeds_budget(texts: list[str], budget: int) -> None:
    """Whatever the hits and budget, the context fits the budget and numbers each node once."""
    from labile_llm.tokens import estimate_tokens as count_tokens

    hits = [hit(f"n{i}", t, days=i % 3, score=1.0 - i / 10) for i, t in enumerate(texts)]
    text, ids = build_context(hits, budget_tokens=budget, count_tokens=count_tokens)
    assert count_tokens(text) <= budget
    assert len(ids) == len(set(ids)) == (len(text.splitlines()) if text else 0)


# -- answer_question ---------------------------------------------------------------------


def _memory(make_pm: Callable[..., Any], config: dict[str, Any], *plugins: object,
            llm: Any = None) -> Memory:
    instances = {"llm": llm} if llm is not None else {}
    memory = Memory.open(config, plugin_manager=make_pm(*plugins), **instances)
    memory.add(observations(
        [("user", "I adopted a border collie named Pixel."),
         ("user", "My sister lives in Porto."),
         ("user", "Pixel learned to sit in two days.")], start=T0), namespace="u1")
    return memory


def test_answer_maps_citations_and_accounts(make_pm: Callable[..., Any],
                                            bm25_config: dict[str, Any]) -> None:
    usage = UsageMeter()
    llm = ScriptedLLM(rules=[("Question:", '{"answer": " A border collie. ", "cited": [1, 1, 9]}')],
                      usage=usage)
    with _memory(make_pm, bm25_config, llm=llm) as memory:
        as_of = T0 + timedelta(days=30)
        answer = answer_question(memory, "What dog did I adopt, Pixel?", namespace="u1", k=5,
                                 as_of=as_of)
    assert isinstance(answer, Answer)
    assert answer.text == "A border collie."
    assert answer.cited == (answer.context_ids[0],)  # duplicates and unknown numbers dropped
    assert set(answer.context_ids) <= set(answer.result.node_ids)
    assert answer.feedback == () and answer.prompt_version == ANSWER_PROMPT_VERSION
    call = llm.calls[0]
    assert call.operation == "answer" and call.json_schema == ANSWER_SCHEMA
    assert "Current date: 2024-03-31 09:00 UTC" in call.prompt
    assert "Question: What dog did I adopt, Pixel?" in call.prompt
    assert "border collie" in call.prompt and call.system
    assert answer.usage["answer"]["calls"] == 1
    assert answer.usage["total"]["prompt_tokens"] == usage.snapshot()["answer"]["prompt_tokens"]


def test_answer_with_no_hits_still_asks(make_pm: Callable[..., Any],
                                        bm25_config: dict[str, Any]) -> None:
    llm = ScriptedLLM(replies=['{"answer": "Not available in memory.", "cited": []}'])
    with _memory(make_pm, bm25_config, llm=llm) as memory:
        answer = memory.answer("zzzz qqqq?", namespace="u1")
    assert answer.text == "Not available in memory." and answer.cited == ()
    assert "(no memories were retrieved)" in llm.calls[0].prompt


def test_memory_answer_runs_feedback(make_pm: Callable[..., Any],
                                     bm25_config: dict[str, Any]) -> None:
    recorder = Recorder()
    bm25_config["reconsolidate"] = [{"type": "test.recorder"}]
    llm = ScriptedLLM(rules=[("Question:", '{"answer": "Porto", "cited": [1]}')])
    with _memory(make_pm, bm25_config, recorder, llm=llm) as memory:
        answer = memory.answer("Where does my sister live?", namespace="u1", k=3,
                               budget_tokens=500)
    assert answer.text == "Porto"
    assert len(recorder.seen) == 1
    result, fb = recorder.seen[0]
    assert result is answer.result
    assert fb.answer == "Porto" and fb.cited == answer.cited and fb.useful is None
    assert [r.counts for r in answer.feedback] == [{"seen": 1}]


def test_invalid_answer_fails_closed_without_feedback(make_pm: Callable[..., Any],
                                                      bm25_config: dict[str, Any]) -> None:
    recorder = Recorder()
    bm25_config["reconsolidate"] = [{"type": "test.recorder"}]
    llm = ScriptedLLM(rules=[(".", ['{"answer": 3}', ScriptedLLM.malformed()])])
    with _memory(make_pm, bm25_config, recorder, llm=llm) as memory, \
            pytest.raises(LLMOutputError):
        memory.answer("Where does my sister live?", namespace="u1")
    assert recorder.seen == []
    with _memory(make_pm, bm25_config, recorder, llm=ScriptedLLM()) as memory, \
            pytest.raises(InputError):
        memory.answer("   ", namespace="u1")


def test_feedback_can_be_switched_off(make_pm: Callable[..., Any],
                                      bm25_config: dict[str, Any]) -> None:
    recorder = Recorder()
    bm25_config["reconsolidate"] = [{"type": "test.recorder"}]
    llm = ScriptedLLM(rules=[(".", '{"answer": "Porto", "cited": []}')])
    with _memory(make_pm, bm25_config, recorder, llm=llm) as memory:
        other = ScriptedLLM(rules=[(".", '{"answer": "Lisbon", "cited": []}')])
        answer = answer_question(memory, "Where does my sister live?", namespace="u1",
                                 feedback=False, llm=other)
    assert answer.text == "Lisbon" and recorder.seen == [] and llm.calls == []


def test_usage_delta_sums_meters() -> None:
    a, b = UsageMeter(), UsageMeter()
    before = [a.snapshot(), b.snapshot()]
    a.record("plan", prompt_tokens=5, completion_tokens=1, cost_usd=0.5)
    b.record("answer", prompt_tokens=7, completion_tokens=2)
    b.record("answer", prompt_tokens=1, completion_tokens=1, failed=True)
    delta = usage_delta(before, [a.snapshot(), b.snapshot()])
    assert delta["plan"]["prompt_tokens"] == 5 and delta["answer"]["calls"] == 2
    assert delta["answer"]["failures"] == 1
    assert delta["total"]["prompt_tokens"] == 13 and delta["total"]["cost_usd"] == 0.5
    assert json.dumps(delta)
    empty = usage_delta([a.snapshot()], [a.snapshot()])
    assert set(empty) == {"total"} and empty["total"]["calls"] == 0
