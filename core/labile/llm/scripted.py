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
(`labile.llm.retry.LLMTimeoutError` …), and `ScriptedLLM.malformed()` a broken
JSON reply. By default an injected failure is raised at once; pass
``retry=RetryPolicy(...)`` (and a fake ``sleep``) to have transient ones
retried exactly as the litellm client does, each retry consuming the next
reply.

Token counting: the same tokenizer as litellm's default (tiktoken
``cl100k_base``) when it can be loaded offline from the encoding file that
litellm bundles (found without importing litellm, checked by SHA-256);
otherwise, or with ``tokenizer="estimate"``, `count_tokens`' estimate.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import attrs
import structlog

from labile.errors import LLMError, MissingDependencyError
from labile.llm.base import JSONCompletion
from labile.llm.retry import (
    LLMAuthError,
    LLMRateLimitError,
    LLMTimeoutError,
    LLMUnavailableError,
    RetryPolicy,
    call_with_retry,
)
from labile.usage import UsageMeter

log = structlog.get_logger(__name__)
Reply = str | BaseException
TokenCounter = Callable[[str], int]


@attrs.frozen(kw_only=True)
class ScriptedLLMConfig:
    """Options of the ``scripted`` LLM when built from a config file.

    Attributes:
        replies: Replies returned in order when no rule matches.
        max_repairs: Repair attempts for invalid JSON before failing closed.
    """

    replies: tuple[str, ...] = ()
    max_repairs: int = attrs.field(default=1, validator=attrs.validators.ge(0))
    tokenizer: Literal["auto", "tiktoken", "estimate"] = "auto"


def count_tokens(text: str) -> int:
    """An offline token estimate (about 4 characters per token, words at least)."""
    return max(len(text.split()), (len(text) + 3) // 4) if text else 0


# -- the litellm-compatible tokenizer -----------------------------------------

#: litellm bundles tiktoken files named as tiktoken caches them (SHA-1 of the URL).
_CL100K_FILE: Final = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_CL100K_SHA256: Final = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL: Final = {
    "<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276,
}
_tok_lock = threading.Lock()
_tok_state: dict[str, Any] = {}


def _bundled_cl100k() -> Path | None:
    """litellm's bundled cl100k file, located without importing litellm."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in locations:
        path = Path(root) / "litellm_core_utils" / "tokenizers" / _CL100K_FILE
        if path.is_file():
            return path
    return None


def _load_cl100k() -> TokenCounter | None:
    path = _bundled_cl100k()
    if path is None:
        return None
    try:
        import tiktoken
    except ImportError:
        return None
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != _CL100K_SHA256:
        log.warning("tokenizer_file_mismatch", path=str(path))
        return None
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    encoding = tiktoken.Encoding(
        name="cl100k_base", pat_str=_CL100K_PATTERN, mergeable_ranks=ranks,
        special_tokens=dict(_CL100K_SPECIAL),
    )

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=())) if text else 0

    return count


def litellm_tokenizer() -> TokenCounter | None:
    """The cl100k counter litellm uses by default, or ``None`` if unavailable offline.

    Loaded once per process (about 0.5 s) on first use; never touches the
    network: the encoding comes from the file litellm ships, verified by hash.
    """
    with _tok_lock:
        if "counter" not in _tok_state:
            try:
                _tok_state["counter"] = _load_cl100k()
            except Exception as exc:  # a broken install must not break counting
                log.warning("tokenizer_load_failed", error_type=type(exc).__name__)
                _tok_state["counter"] = None
        counter: TokenCounter | None = _tok_state["counter"]
        return counter


def count_tokens_like_litellm(text: str) -> int:
    """Tokens in ``text`` by litellm's default tokenizer, else `count_tokens`' estimate."""
    counter = litellm_tokenizer()
    return counter(text) if counter is not None else count_tokens(text)


def token_counter(kind: Literal["auto", "tiktoken", "estimate"] = "auto") -> TokenCounter:
    """A token-counting function.

    Args:
        kind: ``"auto"`` (litellm's tokenizer when available offline, else
            the estimate), ``"tiktoken"`` (required), ``"estimate"``.

    Raises:
        MissingDependencyError: ``kind="tiktoken"`` and it cannot be loaded.
    """
    if kind == "estimate":
        return count_tokens
    if kind == "tiktoken":
        counter = litellm_tokenizer()
        if counter is None:
            raise MissingDependencyError(
                "the cl100k tokenizer needs tiktoken and litellm's bundled encoding: "
                "pip install 'labile[llm]'"
            )
        return counter
    return count_tokens_like_litellm


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
