"""The scripted LLM: replay by pattern and order, failure injection, repair, tokens."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from labile._errors import LLMError, LLMOutputError
from labile._protocols import LLMClient
from labile._registry import collect
from labile._usage import UsageMeter
from labile_llm import ScriptedLLM, ScriptedLLMConfig
from labile_llm.retry import (
    ErrorKind,
    LLMAuthError,
    LLMRateLimitError,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    classify_error,
)
from labile_llm.tokens import estimate_tokens, litellm_tokenizer, token_counter

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def test_replays_by_pattern_then_in_order() -> None:
    llm = ScriptedLLM(replies=["q1", "q2"], rules=[(r"^extract", ["e1", "e2"]),
                                                   (r"plan", "p")])
    assert isinstance(llm, LLMClient)
    assert llm.complete_text("extract this", operation="extract") == "e1"
    assert llm.complete_text("other", operation="x") == "q1"
    assert llm.complete_text("extract that", operation="extract") == "e2"
    assert llm.complete_text("extract more", operation="extract") == "e2"  # last repeats
    assert llm.complete_text("make a plan", operation="plan") == "p"
    assert llm.complete_text("again", operation="x") == "q2"
    with pytest.raises(LLMError, match="no reply left"):
        llm.complete_text("again", operation="x")
    assert [c.operation for c in llm.calls] == ["extract", "x", "extract", "extract", "plan", "x"]
    llm.add_replies("late")
    assert llm.complete_text("z", operation="x") == "late"


def test_failure_helpers_raise_litellm_client_types() -> None:
    cases: list[tuple[Any, type[Exception], ErrorKind]] = [
        (ScriptedLLM.timeout(), LLMTimeoutError, ErrorKind.TIMEOUT),
        (ScriptedLLM.rate_limit(retry_after=3), LLMRateLimitError, ErrorKind.RATE_LIMIT),
        (ScriptedLLM.unavailable(), LLMUnavailableError, ErrorKind.TRANSIENT),
        (ScriptedLLM.auth_error(), LLMAuthError, ErrorKind.AUTH),
    ]
    for exc, cls, kind in cases:
        usage = UsageMeter()
        llm = ScriptedLLM(replies=[exc], usage=usage)
        with pytest.raises(cls):
            llm.complete_text("x", operation="op")
        assert classify_error(exc) is kind
        assert usage.snapshot()["op"]["failures"] == 1
    assert ScriptedLLM.rate_limit(retry_after=3).retry_after == 3


def test_injected_failures_retried_like_the_litellm_client() -> None:
    sleeps: list[float] = []
    usage = UsageMeter()
    llm = ScriptedLLM(replies=[ScriptedLLM.rate_limit(retry_after=2.0), ScriptedLLM.timeout(),
                               '{"a": 1}'], usage=usage,
                      retry=RetryPolicy(max_retries=3, backoff_base_s=0.1), sleep=sleeps.append)
    assert llm.complete_json("a?", SCHEMA, operation="extract") == {"a": 1}
    assert len(sleeps) == 2 and sleeps[0] >= 2.0
    snap = usage.snapshot()["extract"]
    assert snap["calls"] == 3 and snap["failures"] == 2

    auth = ScriptedLLM(replies=[ScriptedLLM.auth_error(), "never"],
                       retry=RetryPolicy(max_retries=3), sleep=sleeps.append)
    with pytest.raises(LLMAuthError):
        auth.complete_text("x", operation="op")
    assert len(sleeps) == 2  # no retry on auth
    gives_up = ScriptedLLM(rules=[(".", ScriptedLLM.unavailable())],
                           retry=RetryPolicy(max_retries=1), sleep=sleeps.append)
    with pytest.raises(LLMUnavailableError) as info:
        gives_up.complete_text("x", operation="op")
    assert info.value.attempts == 2


def test_malformed_json_is_repaired_then_fails_closed() -> None:
    llm = ScriptedLLM(replies=["not json", '{"a": "x"}', '{"a": 5}'],
                      config=ScriptedLLMConfig(max_repairs=2))
    assert llm.complete_json("a?", SCHEMA, operation="extract") == {"a": 5}
    assert "not valid" in llm.calls[1].prompt and "expected integer" in llm.calls[2].prompt
    assert all(c.json_schema == SCHEMA for c in llm.calls)

    llm = ScriptedLLM(rules=[(".", ScriptedLLM.malformed())])
    with pytest.raises(LLMOutputError) as info:
        llm.complete_json("a?", SCHEMA, operation="extract")
    assert len(llm.calls) == 2  # one repair by default
    assert info.value.raw == ScriptedLLM.malformed()
    # single quotes and trailing commas are fixed without asking again
    llm = ScriptedLLM(replies=["{'a': 1,}"])
    assert llm.complete_json("a?", SCHEMA, operation="extract") == {"a": 1}


def test_counts_tokens_like_litellm(litellm_module: ModuleType) -> None:
    assert litellm_tokenizer() is not None
    usage = UsageMeter()
    llm = ScriptedLLM(replies=["The answer is 42."], usage=usage)
    prompt = "How many roads must a man walk down? Ünïcödé, 日本語, <|endoftext|>"
    llm.complete_text(prompt, operation="answer", system="Be brief.")
    snap = usage.snapshot()["answer"]
    tc = litellm_module.token_counter
    assert snap["prompt_tokens"] == tc(model="gpt-3.5-turbo", text="Be brief." + prompt)
    assert snap["completion_tokens"] == tc(model="gpt-3.5-turbo", text="The answer is 42.")

    est = UsageMeter()
    ScriptedLLM(ScriptedLLMConfig(tokenizer="estimate"), replies=["abcd efgh"],
                usage=est).complete_text("x" * 40, operation="o")
    assert est.snapshot()["o"]["prompt_tokens"] == estimate_tokens("x" * 40) == 10
    assert token_counter("estimate") is estimate_tokens
    assert token_counter("tiktoken")("hello world") == 2


def test_tokenizer_falls_back_to_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    import labile_llm.tokens as tokens

    monkeypatch.setattr(tokens, "_tok_state", {})
    monkeypatch.setattr(tokens, "_bundled_cl100k", lambda: None)
    assert tokens.litellm_tokenizer() is None
    assert tokens.count_tokens_like_litellm("x" * 40) == 10
    from labile._errors import MissingDependencyError

    with pytest.raises(MissingDependencyError):
        tokens.token_counter("tiktoken")


def test_registered_scripted_builds_from_config(make_pm: Callable[..., Any]) -> None:
    component = collect(make_pm())["llm"].get("scripted")
    llm = component.build(ScriptedLLMConfig(replies=('{"a": 1}',), tokenizer="estimate"), None)
    assert llm.complete_json("x", SCHEMA, operation="o") == {"a": 1}
