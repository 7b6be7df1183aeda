"""The ``scripted`` LLM: replays canned replies, for tests and offline demos.

Replies are matched by regular expression against the prompt (first matching
rule wins, each rule's replies are consumed in order and the last one repeats)
or, when no rule matches, taken in order from a queue. A reply that is an
exception instance is raised instead of returned, which injects failures
(timeouts, rate limits); a string that is not JSON exercises the repair and
fail-closed paths. Every call is recorded in ``calls`` and in the usage meter.

Failure injection: `ScriptedLLM.timeout()`, `ScriptedLLM.rate_limit()`,
`ScriptedLLM.unavailable()` and `ScriptedLLM.auth_error()` build the same
exception types the litellm client raises once its retries are spent
(`labile_llm.retry.LLMTimeoutError` …), and `ScriptedLLM.malformed()` a broken
JSON reply. By default an injected failure is raised at once; pass
``retry=RetryPolicy(...)`` (and a fake ``sleep``) to have transient ones
retried exactly as the litellm client does, each retry consuming the next
reply.

Token counting (`labile_llm.tokens`): the same tokenizer as litellm's
default (tiktoken ``cl100k_base``) when it can be loaded offline, otherwise,
or with ``tokenizer="estimate"``, the kernel's offline estimate.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs

from labile.plugin import LLMError, UsageMeter, bounded
from labile_llm.json_completion import JSONCompletion
from labile_llm.retry import (
    LLMAuthError,
    LLMRateLimitError,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    call_with_retry,
)
from labile_llm.tokens import TokenCounter, token_counter

Reply = str | BaseException


@attrs.frozen(kw_only=True)
class ScriptedLLMConfig:
    """Options of the ``scripted`` LLM when built from a config file.

    Attributes:
        replies: Replies returned in order when no rule matches.
        max_repairs: Repair attempts for invalid JSON before failing closed.
    """

    replies: tuple[str, ...] = ()
    max_repairs: int = attrs.field(default=1, validator=bounded(0, 10))
    tokenizer: Literal["auto", "tiktoken", "estimate"] = "auto"


@attrs.define
class ScriptedCall:
    """One recorded call."""

    operation: str
    prompt: str
    system: str | None
    reply: str | None
    json_schema: Mapping[str, Any] | None


class ScriptedLLM(JSONCompletion):
    """An `LLMClient` that replays scripted replies."""

    name = "scripted"

    def __init__(
        self,
        config: ScriptedLLMConfig | None = None,
        deps: Any = None,
        *,
        replies: Sequence[Reply] = (),
        rules: Sequence[tuple[str, Reply | Sequence[Reply]]] = (),
        usage: UsageMeter | None = None,
        tokenizer: TokenCounter | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Build a scripted model.

        Args:
            config: Options when built from a config file.
            deps: Pipeline deps (its usage meter is used).
            replies: In-order replies (after ``config.replies``).
            rules: ``(regex, reply or [replies])``; the first rule whose regex
                matches the prompt answers; its replies are consumed in order
                and the last one repeats.
            usage: The meter to record calls in.
            tokenizer: A token-counting function (default per
                ``config.tokenizer``).
            retry: Retry transient injected failures like the litellm client.
            sleep: The wait used between retries (inject a fake in tests).
        """
        config = config or ScriptedLLMConfig()
        self.max_repairs = config.max_repairs
        self._queue: list[Reply] = [*config.replies, *replies]
        self._rules: list[tuple[re.Pattern[str], list[Reply]]] = []
        for pattern, reply in rules:
            seq = [reply] if isinstance(reply, str | BaseException) else list(reply)
            self._rules.append((re.compile(pattern, re.DOTALL), seq))
        self.usage = usage or (getattr(deps, "usage", None) if deps is not None else None)
        self._count: TokenCounter = tokenizer or token_counter(config.tokenizer)
        self._retry = retry
        self._sleep = sleep
        self.calls: list[ScriptedCall] = []

    # -- failure injection ----------------------------------------------------
    @staticmethod
    def timeout(message: str = "scripted timeout") -> LLMTimeoutError:
        """A timeout, as the litellm client raises it after its retries."""
        return LLMTimeoutError(message, error_type="Timeout", status_code=408)

    @staticmethod
    def rate_limit(
        message: str = "scripted rate limit", *, retry_after: float | None = None
    ) -> LLMRateLimitError:
        """A rate-limit refusal (429), optionally with a ``Retry-After`` hint."""
        return LLMRateLimitError(message, error_type="RateLimitError", status_code=429,
                                 retry_after=retry_after)

    @staticmethod
    def unavailable(message: str = "scripted server error") -> LLMUnavailableError:
        """A connection failure or 5xx."""
        return LLMUnavailableError(message, error_type="ServiceUnavailableError",
                                   status_code=503)

    @staticmethod
    def auth_error(message: str = "scripted authentication failure") -> LLMAuthError:
        """An authentication failure (never retried)."""
        return LLMAuthError(message, error_type="AuthenticationError", status_code=401)

    @staticmethod
    def malformed(text: str = '{"answer": "half a reply", ') -> str:
        """A reply that no JSON repair can recover (exercises fail-closed paths)."""
        return text

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` as this client accounts them (answer budgets use it too)."""
        return self._count(text)

    def add_replies(self, *replies: Reply) -> None:
        """Queue more in-order replies."""
        self._queue.extend(replies)

    def _next(self, prompt: str) -> Reply:
        for pattern, seq in self._rules:
            if pattern.search(prompt):
                return seq.pop(0) if len(seq) > 1 else seq[0]
        if not self._queue:
            raise LLMError("scripted LLM has no reply left for this prompt")
        return self._queue.pop(0)

    def _complete_raw(
        self,
        prompt: str,
        *,
        operation: str,
        system: str | None,
        json_schema: Mapping[str, Any] | None,
        max_tokens: int | None,
    ) -> str:
        if self._retry is None:
            return self._attempt(prompt, operation, system, json_schema)
        return call_with_retry(
            lambda _attempt: self._attempt(prompt, operation, system, json_schema),
            policy=self._retry, sleep=self._sleep,
        )

    def _attempt(
        self,
        prompt: str,
        operation: str,
        system: str | None,
        json_schema: Mapping[str, Any] | None,
    ) -> str:
        start = time.perf_counter()
        reply = self._next(prompt)
        failed = isinstance(reply, BaseException)
        text = None if failed else str(reply)
        self.calls.append(ScriptedCall(operation, prompt, system, text, json_schema))
        if self.usage is not None:
            self.usage.record(
                operation,
                prompt_tokens=self._count((system or "") + prompt),
                completion_tokens=self._count(text or ""),
                latency_ms=(time.perf_counter() - start) * 1000,
                failed=failed,
            )
        if isinstance(reply, BaseException):
            raise reply
        return str(reply)
