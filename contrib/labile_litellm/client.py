"""`LiteLLMClient`: labile's `LLMClient` on top of ``litellm.completion``.

This module never imports litellm at import time; `load_litellm` does, inside
the factory, after setting litellm's offline variables
(``LITELLM_LOCAL_MODEL_COST_MAP``, ``LITELLM_OFFLINE_MODE``) unless the user
set them, so the import never fetches a price map or a tokenizer.

Per call the client:

1. picks how to ask for JSON (`LiteLLMClient.structured_mode`): JSON-schema
   mode where ``litellm.supports_response_schema(model)`` or where
   ``api_base`` names a self-hosted server (litellm cannot know what a local
   server supports, and every common one constrains decoding by schema in one
   of two dialects), JSON-object mode where the provider accepts
   ``response_format``, else prompt-only (the schema is written into the
   prompt). Providers force a top-level object in the structured modes, so a
   schema whose top level is not an object is asked prompt-only. If a server
   rejects the ``response_format`` in ``auto`` mode (at once: a rejected format
   is never retried, whatever status the server sent it with), the client
   steps down one mode for the rest of its life and asks again; with an
   ``api_base`` the step after OpenAI's JSON-schema dialect is
   ``{"type": "json_object", "schema": …}``, which llama-cpp-python's server
   understands;
2. answers from the reply cache when one is configured;
3. waits for a concurrency slot and the requests-per-minute window;
4. calls the model with litellm's and the OpenAI SDK's own retries disabled
   (``max_retries=0``), retrying transient failures itself
   (`labile_llm.retry`), and raising a typed `LLMCallError` otherwise;
5. records every request (failed ones too) in the usage meter under its
   operation: tokens as the provider reports them (counted locally when it
   does not), cost as litellm prices it (0 where it cannot), latency.

`JSONCompletion` then validates against the schema, re-asks at most
``max_repairs`` times and fails closed with `LLMOutputError`.

Secrets: keys are read from the environment at call time and passed only to
litellm; they are never logged, stored, cached, or kept in the config. Error
messages are redacted before they leave the client; a reply that echoes a key
has it masked before it is cached, returned, raised (``LLMOutputError.raw``) or
quoted in a repair prompt; and litellm's ``set_verbose``, which prints provider
errors to stdout past any logging filter, is kept off. A loopback
``api_base`` without ``api_key_env`` gets a placeholder key (`LOCAL_KEY`):
local servers need none, the OpenAI SDK refuses to send a request without
one, and the provider's real key has no business going to a local server.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Final

import attrs

from labile.plugin import UsageMeter, get_logger
from labile_litellm import redacting
from labile_litellm.config import LiteLLMConfig
from labile_litellm.loading import (
    INSTALL_HINT,
    LOCAL_KEY,
    is_loopback,
    load_litellm,
    silence_verbose,
)
from labile_litellm.response import as_int, mentions_format, read_response
from labile_llm.cache import CachedReply, ResponseCache
from labile_llm.json_completion import (
    JSONCompletion,
    json_instruction,
    schema_in_prompt,
    strip_schema_text,
)
from labile_llm.retry import (
    ErrorKind,
    LLMAuthError,
    LLMCallError,
    LLMRequestError,
    RequestLimiter,
    RetryPolicy,
    call_with_retry,
    known_secrets,
    redact,
    scrub,
)
from labile_llm.schema_bounds import grammar_schema
from labile_llm.tokens import count_tokens_like_litellm

log = get_logger(__name__)

#: Structured-output modes from strongest to weakest.
MODES = ("json_schema", "json_object_schema", "json_object", "prompt")
#: Modes that send a ``response_format``.
_FORMAT_MODES: Final = frozenset({"json_schema", "json_object_schema", "json_object"})
_NAME_RE = re.compile(r"[^A-Za-z0-9_-]+")

__all__ = ["INSTALL_HINT", "LOCAL_KEY", "MODES", "LiteLLMClient", "build", "is_loopback",
           "load_litellm"]


def build(config: LiteLLMConfig, deps: Any) -> LiteLLMClient:
    """The registered factory: a client recording into ``deps.usage``."""
    return LiteLLMClient(config, deps)


class LiteLLMClient(JSONCompletion):
    """An `LLMClient` for any litellm model.

    Attributes:
        config: The `LiteLLMConfig` (no secrets in it).
        model: The litellm model string.
        name: ``"litellm:<model>"``.
        usage: The `UsageMeter` every request is recorded in.
    """

    def __init__(
        self,
        config: LiteLLMConfig | None = None,
        deps: Any = None,
        *,
        usage: UsageMeter | None = None,
        completion: Callable[..., Any] | None = None,
        litellm_module: ModuleType | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        limiter: RequestLimiter | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        """Build a client.

        Args:
            config: The options (defaults: ``gpt-4o-mini``, temperature 0).
            deps: Pipeline deps; its ``usage`` meter is used.
            usage: The meter to record in (default: ``deps.usage`` or a new one).
            completion: Replaces ``litellm.completion`` (tests, wrappers).
            litellm_module: An already-imported litellm.
            sleep: The wait used for backoff and rate limits (fake it in tests).
            clock: The monotonic clock of the rate limiter.
            rng: Jitter source.
            limiter: Share another client's concurrency and rate limits.
            cache: Share another client's reply cache.

        Raises:
            MissingDependencyError: litellm is not installed.
        """
        self.config = config or LiteLLMConfig()
        self._litellm = litellm_module or load_litellm()
        self._completion = completion or self._litellm.completion
        # An injected completion brings its own transport and credentials.
        self._environment_checked = completion is not None
        redacting.install([self.config.api_key_env])
        meter = usage or (getattr(deps, "usage", None) if deps is not None else None)
        self.usage: UsageMeter = meter if isinstance(meter, UsageMeter) else UsageMeter()
        self.model = self.config.model
        self.name = f"litellm:{self.config.model}"
        self.max_repairs = self.config.max_repairs
        self._policy = RetryPolicy(
            max_retries=self.config.max_retries, backoff_base_s=self.config.backoff_base_s,
            backoff_max_s=self.config.backoff_max_s,
        )
        self._sleep, self._clock, self._rng = sleep, clock, rng
        self._limiter = limiter or RequestLimiter(
            max_concurrency=self.config.max_concurrency,
            requests_per_minute=self.config.requests_per_minute, clock=clock, sleep=sleep,
        )
        self._cache = cache if cache is not None else (
            ResponseCache(self.config.cache_dir) if self.config.cache_dir else None
        )
        self._lock = threading.Lock()
        self._auto_mode: str | None = None
        self._rejected: set[str] = set()

    @property
    def response_cache(self) -> ResponseCache | None:
        """The on-disk reply cache, if ``cache_dir`` is set (forgetting scrubs it)."""
        return self._cache

    def __repr__(self) -> str:
        return f"LiteLLMClient(model={self.model!r})"

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` as litellm counts them by default (answer budgets use it)."""
        return count_tokens_like_litellm(text)

    # -- configuration --------------------------------------------------------
    def with_options(self, **changes: Any) -> LiteLLMClient:
        """A client with some options changed, sharing this one's meter and cache.

        Per-call overrides: ``llm.with_options(temperature=0.7).complete_text(...)``.
        The concurrency and rate limits are shared too unless they change.
        """
        config = attrs.evolve(self.config, **changes)
        same_limits = (config.max_concurrency, config.requests_per_minute) == (
            self.config.max_concurrency, self.config.requests_per_minute)
        same_cache = config.cache_dir == self.config.cache_dir
        return LiteLLMClient(
            config, usage=self.usage, completion=self._completion,
            litellm_module=self._litellm, sleep=self._sleep, clock=self._clock, rng=self._rng,
            limiter=self._limiter if same_limits else None,
            cache=self._cache if same_cache else None,
        )

    def _capability_mode(self) -> str:
        with self._lock:
            if self._auto_mode is None:
                mode = "prompt"
                try:
                    if self.config.api_base or self._litellm.supports_response_schema(
                        model=self.model
                    ):
                        mode = "json_schema"
                    elif "response_format" in (
                        self._litellm.get_supported_openai_params(model=self.model) or ()
                    ):
                        mode = "json_object"
                except Exception as exc:  # unknown provider: ask in the prompt
                    log.debug("llm_capability_unknown", model=self.model,
                              error_type=type(exc).__name__)
                self._auto_mode = mode
                log.debug("llm_structured_output", model=self.model, mode=mode)
            return self._auto_mode

    def structured_mode(self, schema: Mapping[str, Any] | None) -> str:
        """How this client will ask for ``schema``: one of `MODES`, or ``"text"``."""
        if schema is None:
            return "text"
        wanted = self.config.structured_output
        if wanted == "auto":
            mode = self._capability_mode()
            while mode != "prompt" and (mode in self._rejected or (
                    mode == "json_object_schema" and not self.config.api_base)):
                mode = MODES[MODES.index(mode) + 1]
        else:
            mode = wanted
        if mode != "prompt" and schema.get("type") != "object":
            mode = "prompt"
        return mode

    # -- the request ----------------------------------------------------------
    def _secrets(self) -> list[str]:
        return known_secrets([self.config.api_key_env])

    def _request_kwargs(
        self,
        prompt: str,
        *,
        operation: str,
        system: str | None,
        schema: Mapping[str, Any] | None,
        mode: str,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        user = prompt
        if schema is not None and mode in _FORMAT_MODES - {"json_object"} and is_loopback(
                self.config.api_base):
            # a local server decodes under the schema: its text in the prompt is dead weight
            user = strip_schema_text(prompt)
        if schema is not None and mode in ("json_object", "prompt") and not schema_in_prompt(
            prompt, schema
        ):
            user = f"{prompt}\n\n{json_instruction(schema)}"
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}
        ]
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.config.temperature,
            "max_tokens": max_tokens or self.config.max_tokens,
        }
        if mode == "json_schema" and schema is not None:
            name = _NAME_RE.sub("_", operation)[:64] or "reply"
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": dict(schema), "strict": False},
            }
        elif mode == "json_object_schema" and schema is not None:
            # the server compiles the schema into a grammar: the same string caps and
            # number steps as the in-process client (long maxLength crashed it)
            kwargs["response_format"] = {
                "type": "json_object",
                "schema": grammar_schema(schema, self.config.max_string_chars)}
        elif mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        if self.config.api_base:
            kwargs["api_base"] = self.config.api_base
        return kwargs

    def _complete_raw(
        self,
        prompt: str,
        *,
        operation: str,
        system: str | None,
        json_schema: Mapping[str, Any] | None,
        max_tokens: int | None,
    ) -> str:
        mode = self.structured_mode(json_schema)
        kwargs = self._request_kwargs(prompt, operation=operation, system=system,
                                      schema=json_schema, mode=mode, max_tokens=max_tokens)
        key = None
        secrets = self._secrets()
        if self._cache is not None:
            key = ResponseCache.key(
                model=self.model, messages=kwargs["messages"],
                response_format=kwargs.get("response_format"),
                temperature=self.config.temperature, max_tokens=kwargs["max_tokens"],
                api_base=self.config.api_base,
            )
            hit = self._cache.get(key)
            if hit is not None:
                self.usage.record(operation, prompt_tokens=hit.prompt_tokens,
                                  completion_tokens=hit.completion_tokens, cache_hit=True)
                log.debug("llm_cache_hit", operation=operation, model=self.model)
                return scrub(hit.text, secrets)  # a cache written before scrubbing
        try:
            reply = self._call(kwargs, operation=operation, mode=mode)
        except LLMCallError as err:
            if self._should_step_down(err, mode):
                with self._lock:
                    self._rejected.add(mode)
                log.warning("llm_structured_output_rejected", model=self.model, mode=mode,
                            operation=operation)
                return self._complete_raw(prompt, operation=operation, system=system,
                                          json_schema=json_schema, max_tokens=max_tokens)
            raise
        # A provider may echo the key: keep it out of the cache, of LLMOutputError.raw
        # and of the repair prompt, which all start from the text returned here.
        reply = attrs.evolve(reply, text=scrub(reply.text, secrets))
        if self._cache is not None and key is not None:
            self._cache.put(key, reply, model=self.model, operation=operation)
        return reply.text

    def _should_step_down(self, err: LLMCallError, mode: str) -> bool:
        if self.config.structured_output != "auto" or mode not in _FORMAT_MODES:
            return False
        return err.kind is ErrorKind.BAD_REQUEST and mentions_format(str(err))

    def check_environment(self) -> None:
        """Fail at once if the provider's key variables are not set.

        A missing key is not transient: asking again cannot help, so it must
        not go through the retries (litellm reports it as a generic error that
        would be retried). litellm's ``validate_environment`` knows which
        variables each provider reads. Skipped with ``api_key_env`` (checked
        per call), a loopback ``api_base`` (needs no key) or an injected
        completion; a model litellm cannot place is left to the call to judge.

        Raises:
            LLMAuthError: naming every missing variable.
        """
        if self._environment_checked or self.config.api_key_env or is_loopback(
                self.config.api_base):
            return
        try:
            found = self._litellm.validate_environment(model=self.model,
                                                       api_base=self.config.api_base)
        except Exception as exc:  # an unknown provider: the call itself will say
            log.debug("llm_environment_unchecked", model=self.model, error_type=type(exc).__name__)
            found = {}
        missing = [str(k) for k in (found.get("missing_keys") or [])]
        if missing:
            raise LLMAuthError(
                f"model {self.model!r} needs the environment variable(s) "
                f"{', '.join(missing)}, which are not set: set them, or name the variable "
                "holding your key in [llm] api_key_env", attempts=0)
        self._environment_checked = True

    def _call(self, kwargs: dict[str, Any], *, operation: str, mode: str) -> CachedReply:
        self.check_environment()
        secrets = self._secrets()

        def attempt(_n: int) -> CachedReply:
            call_kwargs = dict(kwargs, timeout=self.config.timeout_s, max_retries=0,
                               num_retries=0)
            if self.config.api_key_env:
                key = os.environ.get(self.config.api_key_env)
                if not key:
                    raise LLMAuthError(
                        f"environment variable {self.config.api_key_env} (api_key_env) is "
                        "not set"
                    )
                call_kwargs["api_key"] = key
            elif is_loopback(self.config.api_base):
                call_kwargs["api_key"] = LOCAL_KEY
            silence_verbose(self._litellm)  # the application may have switched it on
            with self._limiter.slot():
                start = time.perf_counter()
                try:
                    response = self._completion(**call_kwargs)
                except Exception as exc:
                    self.usage.record(operation, latency_ms=(time.perf_counter() - start) * 1000,
                                      failed=True)
                    if mode in _FORMAT_MODES and mentions_format(str(exc)):
                        # A server that cannot read the response_format will not read it on
                        # a retry either; llama-cpp-python's server answers it with a 500.
                        raise LLMRequestError(
                            f"{mode} rejected: {type(exc).__name__}: "
                            f"{redact(str(exc), secrets)[:600]}",
                            error_type=type(exc).__name__,
                            status_code=as_int(getattr(exc, "status_code", None)),
                        ) from exc
                    raise
                latency_ms = (time.perf_counter() - start) * 1000
            reply = read_response(response, kwargs["messages"], self._litellm)
            self.usage.record(operation, prompt_tokens=reply.prompt_tokens,
                              completion_tokens=reply.completion_tokens,
                              cost_usd=reply.cost_usd, latency_ms=latency_ms)
            log.debug("llm_call", operation=operation, model=self.model, mode=mode,
                      prompt_tokens=reply.prompt_tokens,
                      completion_tokens=reply.completion_tokens,
                      cost_usd=reply.cost_usd, latency_ms=round(latency_ms, 1))
            return reply

        def on_error(exc: BaseException, kind: ErrorKind, n: int, delay: float | None) -> None:
            fields = {"operation": operation, "model": self.model, "kind": kind.value,
                      "attempt": n + 1, "error_type": type(exc).__name__,
                      "error": redact(str(exc), secrets)[:300]}
            if delay is None:
                log.warning("llm_call_failed", **fields)
            else:
                log.info("llm_call_retry", retry_in_s=round(delay, 3), **fields)

        return call_with_retry(attempt, policy=self._policy, sleep=self._sleep, rng=self._rng,
                               on_error=on_error, secrets=secrets)
