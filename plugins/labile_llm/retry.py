"""Retries, backoff, client-side rate limits and error classification for LLM calls.

Provider-independent: nothing here imports litellm. Errors raised by a
provider SDK are classified by their class names (litellm and openai share
them) and HTTP status codes, so the same rules serve litellm, a raw OpenAI
client, or the scripted model's injected failures.

Contract:

* Rate limits (429), timeouts (408, ``Timeout``), connection failures and
  server errors (5xx) are *transient*: `call_with_retry` retries them with
  exponential backoff and jitter, honouring a provider's ``Retry-After``
  hint, up to ``RetryPolicy.max_retries`` times.
* Authentication, permission, bad-request, not-found and context-window
  errors can never succeed by repeating the request: they are raised at once.
* What reaches the caller is always a `LLMCallError` subclass (a
  `labile._errors.LLMError`) naming the error kind and the attempts made; its
  message is passed through `redact` so API keys never travel in it. A
  caller's own exceptions (programming errors, `LLMError` from elsewhere) are
  re-raised unchanged.
"""

from __future__ import annotations

import enum
import os
import random
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final, TypeVar

import attrs

from labile.plugin import LLMError, get_logger

log = get_logger(__name__)
T = TypeVar("T")

__all__ = [
    "RETRYABLE",
    "ErrorKind",
    "LLMAuthError",
    "LLMCallError",
    "LLMRateLimitError",
    "LLMRequestError",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "RequestLimiter",
    "RetryPolicy",
    "call_with_retry",
    "classify_error",
    "known_secrets",
    "redact",
    "retry_after_s",
    "scrub",
    "to_llm_error",
]


class ErrorKind(enum.StrEnum):
    """What went wrong with a model call, as far as retrying is concerned."""

    RATE_LIMIT = "rate_limit"
    TIMEOUT = "timeout"
    TRANSIENT = "transient"  # connection failure, 5xx
    AUTH = "auth"  # 401, 403, missing key
    BAD_REQUEST = "bad_request"  # 400, 422, unsupported parameter, content policy
    CONTEXT_WINDOW = "context_window"  # the prompt is too long for the model
    NOT_FOUND = "not_found"  # unknown model or endpoint
    OTHER = "other"


#: Kinds worth repeating the request for.
RETRYABLE: Final = frozenset({ErrorKind.RATE_LIMIT, ErrorKind.TIMEOUT, ErrorKind.TRANSIENT})


class LLMCallError(LLMError):
    """A model call failed for good.

    Attributes:
        kind: The `ErrorKind`.
        attempts: How many requests were made (1 + retries).
        error_type: The class name of the provider's exception, if any.
        status_code: The HTTP status the provider reported, if any.
        retry_after: The provider's ``Retry-After`` hint in seconds, if any.
    """

    default_kind: ErrorKind = ErrorKind.OTHER

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind | None = None,
        attempts: int = 1,
        error_type: str | None = None,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.kind = kind or self.default_kind
        self.retry_after = retry_after
        self.attempts = attempts
        self.error_type = error_type
        self.status_code = status_code
        super().__init__(message)


class LLMRateLimitError(LLMCallError):
    """The provider kept refusing for rate limits (429) until retries ran out."""

    default_kind = ErrorKind.RATE_LIMIT


class LLMTimeoutError(LLMCallError):
    """The request kept timing out until retries ran out."""

    default_kind = ErrorKind.TIMEOUT


class LLMUnavailableError(LLMCallError):
    """Connection failures or server errors (5xx) until retries ran out."""

    default_kind = ErrorKind.TRANSIENT


class LLMAuthError(LLMCallError):
    """Missing, invalid or insufficient credentials (never retried)."""

    default_kind = ErrorKind.AUTH


class LLMRequestError(LLMCallError):
    """The request itself is wrong: bad parameters, unknown model, prompt too long."""

    default_kind = ErrorKind.BAD_REQUEST


_ERROR_CLASS: Final[dict[ErrorKind, type[LLMCallError]]] = {
    ErrorKind.RATE_LIMIT: LLMRateLimitError,
    ErrorKind.TIMEOUT: LLMTimeoutError,
    ErrorKind.TRANSIENT: LLMUnavailableError,
    ErrorKind.AUTH: LLMAuthError,
    ErrorKind.BAD_REQUEST: LLMRequestError,
    ErrorKind.CONTEXT_WINDOW: LLMRequestError,
    ErrorKind.NOT_FOUND: LLMRequestError,
    ErrorKind.OTHER: LLMCallError,
}

#: Exception class names of litellm/openai, first match along the MRO wins.
_BY_NAME: Final[dict[str, ErrorKind]] = {
    "RateLimitError": ErrorKind.RATE_LIMIT,
    "RouterRateLimitError": ErrorKind.RATE_LIMIT,
    "Timeout": ErrorKind.TIMEOUT,
    "APITimeoutError": ErrorKind.TIMEOUT,
    "ContextWindowExceededError": ErrorKind.CONTEXT_WINDOW,
    "ContentPolicyViolationError": ErrorKind.BAD_REQUEST,
    "UnsupportedParamsError": ErrorKind.BAD_REQUEST,
    "AuthenticationError": ErrorKind.AUTH,
    "PermissionDeniedError": ErrorKind.AUTH,
    "BudgetExceededError": ErrorKind.AUTH,
    "BadRequestError": ErrorKind.BAD_REQUEST,
    "UnprocessableEntityError": ErrorKind.BAD_REQUEST,
    "NotFoundError": ErrorKind.NOT_FOUND,
    "APIConnectionError": ErrorKind.TRANSIENT,
    "InternalServerError": ErrorKind.TRANSIENT,
    "ServiceUnavailableError": ErrorKind.TRANSIENT,
    "BadGatewayError": ErrorKind.TRANSIENT,
}
_PROVIDER_MODULES: Final = ("litellm", "openai", "httpx", "httpcore", "anthropic", "aiohttp")


def classify_error(exc: BaseException) -> ErrorKind:  # noqa: PLR0911
    """The `ErrorKind` of ``exc``.

    Looks, in order, at labile's own `LLMCallError`, the provider exception's
    class names along its MRO, its ``status_code``, and finally the builtin
    `TimeoutError`/`ConnectionError`. Anything else is `ErrorKind.OTHER`
    (never retried).
    """
    if isinstance(exc, LLMCallError):
        return exc.kind
    if isinstance(exc, LLMError):
        return ErrorKind.OTHER
    for cls in type(exc).__mro__:
        kind = _BY_NAME.get(cls.__name__)
        if kind is not None:
            return kind
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and not isinstance(status, bool):
        if status == 429:
            return ErrorKind.RATE_LIMIT
        if status == 408:
            return ErrorKind.TIMEOUT
        if status in (401, 402, 403):
            return ErrorKind.AUTH
        if status == 404:
            return ErrorKind.NOT_FOUND
        if status == 413:
            return ErrorKind.CONTEXT_WINDOW
        if 400 <= status < 500:
            return ErrorKind.BAD_REQUEST
        if status >= 500:
            return ErrorKind.TRANSIENT
    if isinstance(exc, TimeoutError):
        return ErrorKind.TIMEOUT
    if isinstance(exc, ConnectionError):
        return ErrorKind.TRANSIENT
    return ErrorKind.OTHER


def _is_provider_error(exc: BaseException) -> bool:
    return any(
        (cls.__module__ or "").split(".")[0] in _PROVIDER_MODULES for cls in type(exc).__mro__
    )


# -- secrets ----------------------------------------------------------------

#: Environment variables whose values are redacted from error messages.
SECRET_ENV_VARS: Final = (
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "MISTRAL_API_KEY", "COHERE_API_KEY",
    "GROQ_API_KEY", "TOGETHERAI_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY",
    "XAI_API_KEY", "HUGGINGFACE_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
)
_KEY_PATTERNS: Final = (
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-.=]{8,}"),
    re.compile(r"(?i)(api[_-]?key['\"]?\s*[:=]\s*['\"]?)[^\s'\",;]{6,}"),
)


def known_secrets(extra_env: Iterable[str | None] = ()) -> list[str]:
    """Values of the well-known provider key variables (and ``extra_env``) now set."""
    names = [*SECRET_ENV_VARS, *(n for n in extra_env if n)]
    return [v for v in (os.environ.get(n) for n in names) if v and len(v) >= 4]


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets`` (exact values, 4 characters or more) masked.

    For a model's reply: a provider that echoes the caller's key must not get it
    into the reply cache, an error's ``raw`` or a repair prompt. Only the exact
    values go, so a reply that merely mentions something key-shaped is kept.
    """
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret and anything shaped like an API key masked."""
    text = scrub(text, secrets)
    text = _KEY_PATTERNS[0].sub(lambda m: f"{m.group(1)}-***", text)
    text = _KEY_PATTERNS[1].sub("Bearer ***", text)
    return _KEY_PATTERNS[2].sub(lambda m: f"{m.group(1)}***", text)


def to_llm_error(
    exc: BaseException, kind: ErrorKind, *, attempts: int, secrets: Iterable[str] = ()
) -> LLMCallError:
    """The `LLMCallError` subclass for ``kind``, with a redacted message."""
    if isinstance(exc, LLMCallError):
        exc.attempts = max(exc.attempts, attempts)
        return exc
    message = redact(str(exc), [*secrets, *known_secrets()])[:1000]
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) and not isinstance(status, bool) else None
    cls = _ERROR_CLASS[kind]
    return cls(
        f"{kind.value}: {type(exc).__name__}: {message} (after {attempts} attempt(s))",
        kind=kind, attempts=attempts, error_type=type(exc).__name__, status_code=status,
    )


# -- backoff ----------------------------------------------------------------


def retry_after_s(exc: BaseException) -> float | None:
    """The provider's ``Retry-After`` hint in seconds, when it sent a numeric one."""
    value = getattr(exc, "retry_after", None)
    if value is None:
        headers: Any = getattr(exc, "headers", None)
        if not isinstance(headers, Mapping):
            response = getattr(exc, "response", None)
            headers = getattr(response, "headers", None)
        if headers is not None:
            try:
                value = headers.get("retry-after") or headers.get("Retry-After")
            except Exception:  # odd header containers: no hint
                value = None
    try:
        seconds = float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
    return seconds if seconds is not None and seconds >= 0 else None


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How often and how patiently to retry transient failures.

    The wait before retry ``n`` (0-based) is drawn uniformly from
    ``[cap / 2, cap]`` with ``cap = min(backoff_max_s, backoff_base_s * 2**n)``
    ("equal jitter": spread out, never zero), and is at least the provider's
    ``Retry-After`` hint (capped at ``backoff_max_s``).

    Attributes:
        max_retries: Retries after the first attempt (0 disables retrying).
        backoff_base_s: The first cap, in seconds.
        backoff_max_s: The largest wait, in seconds.
        jitter: Randomise waits (``False``: always wait the cap).
    """

    max_retries: int = attrs.field(default=4, validator=attrs.validators.ge(0))
    backoff_base_s: float = attrs.field(default=1.0, validator=attrs.validators.ge(0))
    backoff_max_s: float = attrs.field(default=30.0, validator=attrs.validators.ge(0))
    jitter: bool = True

    def delay(
        self, retry_index: int, rng: random.Random | None = None, retry_after: float | None = None
    ) -> float:
        """Seconds to wait before retry number ``retry_index`` (0-based)."""
        cap = min(self.backoff_max_s, self.backoff_base_s * (2.0 ** min(retry_index, 30)))
        wait = (rng or random).uniform(cap / 2, cap) if self.jitter else cap
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.backoff_max_s))
        return wait


def call_with_retry(
    fn: Callable[[int], T],
    *,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
    on_error: Callable[[BaseException, ErrorKind, int, float | None], None] | None = None,
    secrets: Iterable[str] = (),
) -> T:
    """Call ``fn(attempt)`` until it succeeds, retrying transient failures.

    Args:
        fn: The request; receives the 0-based attempt number.
        policy: Retry count and backoff.
        sleep: Waits between attempts (injectable for tests).
        rng: Jitter source (injectable for tests).
        on_error: Called for every failure with ``(exc, kind, attempt,
            delay)``; ``delay`` is ``None`` when no retry follows.
        secrets: Strings to mask in the raised error's message.

    Raises:
        LLMCallError: a provider error that is permanent, or transient ones
            past ``policy.max_retries`` (the subclass names the kind).
        Exception: anything ``fn`` raised that is not a provider error is
            re-raised unchanged (programming errors stay visible).
    """
    secrets = list(secrets)
    attempt = 0
    while True:
        try:
            return fn(attempt)
        except Exception as exc:
            kind = classify_error(exc)
            retry = kind in RETRYABLE and attempt < policy.max_retries
            delay = policy.delay(attempt, rng, retry_after_s(exc)) if retry else None
            if on_error is not None:
                on_error(exc, kind, attempt, delay)
            if not retry:
                if isinstance(exc, LLMCallError) or _is_provider_error(exc):
                    raise to_llm_error(exc, kind, attempts=attempt + 1, secrets=secrets) from None
                raise
            assert delay is not None
            sleep(delay)
            attempt += 1


# -- client-side limits -------------------------------------------------------


class RequestLimiter:
    """Caps requests in flight and requests started per minute, across threads.

    ``with limiter.slot():`` around each request (not around the backoff
    sleeps): it blocks until fewer than ``max_concurrency`` requests are in
    flight and fewer than ``requests_per_minute`` started in the last 60
    seconds. ``clock`` and ``sleep`` are injectable for tests.
    """

    def __init__(
        self,
        *,
        max_concurrency: int = 4,
        requests_per_minute: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if requests_per_minute is not None and requests_per_minute < 1:
            raise ValueError(f"requests_per_minute must be >= 1, got {requests_per_minute}")
        self.max_concurrency = max_concurrency
        self.requests_per_minute = requests_per_minute
        self._sem = threading.BoundedSemaphore(max_concurrency)
        self._lock = threading.Lock()
        self._starts: deque[float] = deque()
        self._clock, self._sleep = clock, sleep
        self.waited_s = 0.0  # total time spent waiting for the RPM window

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one request slot for the duration of the block."""
        self._sem.acquire()
        try:
            self._wait_for_rate()
            yield
        finally:
            self._sem.release()

    def _wait_for_rate(self) -> None:
        rpm = self.requests_per_minute
        if rpm is None:
            return
        while True:
            with self._lock:
                now = self._clock()
                while self._starts and now - self._starts[0] >= 60.0:
                    self._starts.popleft()
                if len(self._starts) < rpm:
                    self._starts.append(now)
                    return
                wait = max(60.0 - (now - self._starts[0]), 0.001)
                self.waited_s += wait
            log.debug("llm_rpm_wait", wait_s=round(wait, 3), requests_per_minute=rpm)
            self._sleep(wait)
