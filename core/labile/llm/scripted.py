"""The ``scripted`` LLM: replays canned replies, for tests and offline demos.

Replies are matched by regular expression against the prompt (first matching
rule wins, each rule's replies are consumed in order and the last one repeats)
or, when no rule matches, taken in order from a queue. A reply that is an
exception instance is raised instead of returned, which injects failures
(timeouts, rate limits); a string that is not JSON exercises the repair and
fail-closed paths. Every call is recorded in ``calls`` and in the usage meter.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from labile.errors import LLMError
from labile.llm.base import JSONCompletion
from labile.usage import UsageMeter

Reply = str | BaseException


@attrs.frozen(kw_only=True)
class ScriptedLLMConfig:
    """Options of the ``scripted`` LLM when built from a config file.

    Attributes:
        replies: Replies returned in order when no rule matches.
        max_repairs: Repair attempts for invalid JSON before failing closed.
    """

    replies: tuple[str, ...] = ()
    max_repairs: int = attrs.field(default=1, validator=attrs.validators.ge(0))


def count_tokens(text: str) -> int:
    """An offline token estimate (about 4 characters per token, words at least)."""
    return max(len(text.split()), (len(text) + 3) // 4) if text else 0


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
        tokenizer: Any = None,
    ) -> None:
        config = config or ScriptedLLMConfig()
        self.max_repairs = config.max_repairs
        self._queue: list[Reply] = [*config.replies, *replies]
        self._rules: list[tuple[re.Pattern[str], list[Reply]]] = []
        for pattern, reply in rules:
            seq = [reply] if isinstance(reply, str | BaseException) else list(reply)
            self._rules.append((re.compile(pattern, re.DOTALL), seq))
        self.usage = usage or (getattr(deps, "usage", None) if deps is not None else None)
        self._count = tokenizer or count_tokens
        self.calls: list[ScriptedCall] = []

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
