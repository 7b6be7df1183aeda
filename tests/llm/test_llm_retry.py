"""Error classification, backoff, retry loop, limiter, redaction, reply cache."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from labile._errors import LLMError, LLMOutputError
from labile_llm.cache import CachedReply, ResponseCache
from labile_llm.retry import (
    ErrorKind,
    LLMAuthError,
    LLMCallError,
    LLMRateLimitError,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
    RequestLimiter,
    RetryPolicy,
    call_with_retry,
    classify_error,
    redact,
    retry_after_s,
)


class _Status(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"status {status_code}")
        self.status_code = status_code


def _litellm_errors(litellm: ModuleType) -> dict[str, BaseException]:
    p = {"llm_provider": "openai", "model": "gpt-4o-mini"}
    return {
        "rate": litellm.RateLimitError("slow down", **p),
        "timeout": litellm.Timeout("took too long", **p),
        "conn": litellm.APIConnectionError("no route", **p),
        "ise": litellm.InternalServerError("boom", **p),
        "unavailable": litellm.ServiceUnavailableError("busy", **p),
        "auth": litellm.AuthenticationError("bad key", **p),
        "bad": litellm.BadRequestError("bad", **p),
        "ctx": litellm.ContextWindowExceededError("too long", **p),
        "unsupported": litellm.UnsupportedParamsError(message="no response_format", **p),
        "notfound": litellm.NotFoundError("no such model", **p),
    }


@pytest.mark.parametrize(("name", "kind"), [
    ("rate", ErrorKind.RATE_LIMIT), ("timeout", ErrorKind.TIMEOUT),
    ("conn", ErrorKind.TRANSIENT), ("ise", ErrorKind.TRANSIENT),
    ("unavailable", ErrorKind.TRANSIENT), ("auth", ErrorKind.AUTH),
    ("bad", ErrorKind.BAD_REQUEST), ("ctx", ErrorKind.CONTEXT_WINDOW),
    ("unsupported", ErrorKind.BAD_REQUEST), ("notfound", ErrorKind.NOT_FOUND),
])
def test_classify_litellm_exceptions(litellm_module: ModuleType, name: str,
                                     kind: ErrorKind) -> None:
    assert classify_error(_litellm_errors(litellm_module)[name]) is kind


@pytest.mark.parametrize(("exc", "kind"), [
    (_Status(429), ErrorKind.RATE_LIMIT), (_Status(408), ErrorKind.TIMEOUT),
    (_Status(401), ErrorKind.AUTH), (_Status(403), ErrorKind.AUTH),
    (_Status(404), ErrorKind.NOT_FOUND), (_Status(400), ErrorKind.BAD_REQUEST),
    (_Status(502), ErrorKind.TRANSIENT), (TimeoutError(), ErrorKind.TIMEOUT),
    (ConnectionResetError(), ErrorKind.TRANSIENT), (ValueError("x"), ErrorKind.OTHER),
    (LLMTimeoutError("t"), ErrorKind.TIMEOUT), (LLMAuthError("a"), ErrorKind.AUTH),
    (LLMOutputError("o"), ErrorKind.OTHER),
])
def test_classify_by_status_and_builtin(exc: BaseException, kind: ErrorKind) -> None:
    assert classify_error(exc) is kind


def test_error_types_are_llm_errors() -> None:
    for cls in (LLMRateLimitError, LLMTimeoutError, LLMUnavailableError, LLMAuthError,
                LLMRequestError):
        assert issubclass(cls, LLMCallError) and issubclass(cls, LLMError)
    assert LLMRateLimitError("x").kind is ErrorKind.RATE_LIMIT


def test_backoff_is_exponential_jittered_and_capped() -> None:
    policy = RetryPolicy(max_retries=5, backoff_base_s=1.0, backoff_max_s=5.0)
    rng = random.Random(0)
    for n, cap in enumerate([1.0, 2.0, 4.0, 5.0, 5.0]):
        for _ in range(20):
            assert cap / 2 <= policy.delay(n, rng) <= cap
    assert RetryPolicy(jitter=False, backoff_base_s=1, backoff_max_s=8).delay(2) == 4.0
    # Retry-After wins over a shorter backoff but is capped too.
    assert policy.delay(0, rng, retry_after=3.0) == 3.0
    assert policy.delay(0, rng, retry_after=99.0) == 5.0


def test_retry_after_hint(litellm_module: ModuleType) -> None:
    exc = litellm_module.RateLimitError("slow", llm_provider="openai", model="m",
                                        headers={"retry-after": "7"})
    assert retry_after_s(exc) == 7.0
    assert retry_after_s(ValueError()) is None
    assert retry_after_s(LLMRateLimitError("x", retry_after=2.5)) == 2.5


def test_call_with_retry_recovers_from_transient(litellm_module: ModuleType) -> None:
    errors = _litellm_errors(litellm_module)
    outcomes: list[Any] = [errors["rate"], errors["timeout"], errors["ise"], "ok"]
    sleeps: list[float] = []
    seen: list[tuple[ErrorKind, int, float | None]] = []

    def fn(attempt: int) -> str:
        outcome = outcomes[attempt]
        if isinstance(outcome, BaseException):
            raise outcome
        return str(outcome)

    result = call_with_retry(
        fn, policy=RetryPolicy(max_retries=3, backoff_base_s=0.5), sleep=sleeps.append,
        rng=random.Random(1), on_error=lambda e, k, n, d: seen.append((k, n, d)),
    )
    assert result == "ok"
    assert len(sleeps) == 3
    assert [k for k, _, _ in seen] == [ErrorKind.RATE_LIMIT, ErrorKind.TIMEOUT,
                                        ErrorKind.TRANSIENT]
    assert 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0 and 1.0 <= sleeps[2] <= 2.0


def test_call_with_retry_gives_up_with_typed_error(litellm_module: ModuleType) -> None:
    rate = _litellm_errors(litellm_module)["rate"]
    sleeps: list[float] = []
    calls = []

    def fn(attempt: int) -> str:
        calls.append(attempt)
        raise rate

    with pytest.raises(LLMRateLimitError) as info:
        call_with_retry(fn, policy=RetryPolicy(max_retries=2), sleep=sleeps.append)
    assert calls == [0, 1, 2] and len(sleeps) == 2
    assert info.value.attempts == 3 and info.value.status_code == 429
    assert info.value.error_type == "RateLimitError"
    assert info.value.__cause__ is None  # provider exception (and its locals) not chained


@pytest.mark.parametrize(("name", "cls"), [("auth", LLMAuthError), ("bad", LLMRequestError),
                                           ("ctx", LLMRequestError),
                                           ("notfound", LLMRequestError)])
def test_permanent_errors_are_not_retried(litellm_module: ModuleType, name: str,
                                          cls: type[LLMCallError]) -> None:
    exc = _litellm_errors(litellm_module)[name]
    sleeps: list[float] = []
    calls = []

    def fn(attempt: int) -> str:
        calls.append(attempt)
        raise exc

    with pytest.raises(cls) as info:
        call_with_retry(fn, policy=RetryPolicy(max_retries=5), sleep=sleeps.append)
    assert calls == [0] and sleeps == []
    assert info.value.attempts == 1


def test_programming_errors_pass_through_unchanged() -> None:
    def fn(attempt: int) -> str:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        call_with_retry(fn, policy=RetryPolicy(), sleep=lambda s: None)


def test_redact_masks_known_secrets_and_key_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "plainsecretvalue42")
    from labile_llm.retry import known_secrets

    text = ("key plainsecretvalue42 and sk-proj-abcdefghijklmnop and "
            "Authorization: Bearer abc.def.ghijklmnop api_key='zzzzzzzzzz'")
    out = redact(text, known_secrets())
    for secret in ("plainsecretvalue42", "abcdefghijklmnop", "abc.def.ghijklmnop", "zzzzzzzzzz"):
        assert secret not in out
    assert "sk-***" in out and "Bearer ***" in out


def test_limiter_caps_concurrency() -> None:
    limiter = RequestLimiter(max_concurrency=2)
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def work() -> None:
        with limiter.slot():
            with lock:
                state["now"] += 1
                state["max"] = max(state["max"], state["now"])
            time.sleep(0.02)
            with lock:
                state["now"] -= 1

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state["max"] == 2


def test_limiter_requests_per_minute_with_fake_clock() -> None:
    now = [100.0]
    sleeps: list[float] = []

    def sleep(s: float) -> None:
        sleeps.append(s)
        now[0] += s

    limiter = RequestLimiter(max_concurrency=1, requests_per_minute=2, clock=lambda: now[0],
                             sleep=sleep)
    starts = []
    for _ in range(5):
        with limiter.slot():
            starts.append(now[0])
    assert sleeps == [60.0, 60.0]
    assert starts == [100.0, 100.0, 160.0, 160.0, 220.0]
    with pytest.raises(ValueError):
        RequestLimiter(max_concurrency=0)


def test_cache_roundtrip(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    key = ResponseCache.key(model="m", messages=[{"role": "user", "content": "hi"}],
                            temperature=0.0)
    assert key == ResponseCache.key(temperature=0.0, model="m",
                                    messages=[{"role": "user", "content": "hi"}])
    assert key != ResponseCache.key(model="m", messages=[], temperature=0.0)
    assert cache.get(key) is None
    reply = CachedReply(text='{"a": 1}', prompt_tokens=5, completion_tokens=2, cost_usd=0.001)
    cache.put(key, reply, model="m", operation="extract")
    assert cache.get(key) == reply
    assert ResponseCache(tmp_path / "c").get(key) == reply  # a second process / re-run
    assert len(cache) == 1
    cache.clear()
    assert len(cache) == 0
    assert (tmp_path / "c" / "llm_cache.sqlite3").is_file()
