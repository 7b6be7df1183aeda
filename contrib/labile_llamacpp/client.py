"""`LlamaCppClient`: labile's `LLMClient` on an in-process llama.cpp model.

No server, no key, no network: the GGUF model runs inside the process through
llama-cpp-python (``pip install 'labile[local]'``). This module never imports
``llama_cpp`` at import time; `load_llama_cpp` does, inside the factory.

Per call the client:

1. renders the chat with the model's own chat template (from the GGUF
   metadata) and tokenizes it with the model's tokenizer, so the prompt's
   token count is exact before anything is evaluated;
2. refuses a prompt whose tokens plus the reply budget (``max_tokens``) do
   not fit the context window: `LLMRequestError` with kind
   ``context_window`` naming both numbers. Nothing is cut silently, neither
   the prompt nor the reply budget (llama-cpp-python itself would shrink the
   reply budget without saying so);
3. constrains decoding for JSON requests (``structured_output``): with
   ``schema`` a grammar compiled from the request's JSON schema
   (`labile_llamacpp.grammar`), with ``json`` the generic JSON grammar, with
   ``prompt`` none. The schema is written into the prompt unless the grammar
   enforces it or the prompt already carries it;
4. generates under the model's lock (one generation at a time per loaded
   model), stopping at ``timeout_s`` (`LLMTimeoutError`);
5. records the call in the usage meter: prompt and completion tokens from
   the real tokenizer, latency, and ``failed`` for refused, timed-out or
   crashed calls (cost is always 0).

`JSONCompletion` then extracts, validates and repairs the JSON exactly as for
the litellm client. A JSON reply cut at ``max_tokens`` fails closed at once
(`LLMOutputError`, no repair: a longer repair prompt would be cut again).
Every ``complete_json`` outcome is tallied per operation in ``replies``
(`labile_llm.replies.ReplyTally`, kept by `JSONCompletion`): ``valid`` (first
try), ``repaired``, or rejected with a reason.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Final

# The kernel's LLM machinery, imported here only (see the module docstring of
# labile._llm: it is moving out of the kernel; the imports follow it).
from labile.plugin import MissingDependencyError, UsageMeter, get_logger
from labile_llamacpp.config import LlamaCppConfig
from labile_llamacpp.grammar import GrammarCache
from labile_llamacpp.models import LoadedModel, ModelKey, shared_model
from labile_llamacpp.source import model_file
from labile_llm.json_completion import (
    JSONCompletion,
    json_attempt,
    json_instruction,
    schema_in_prompt,
    strip_schema_text,
)
from labile_llm.replies import ReplyCutError, ReplyTally
from labile_llm.retry import ErrorKind, LLMCallError, LLMRequestError, LLMTimeoutError

log = get_logger(__name__)

INSTALL_HINT: Final = "pip install 'labile[local]'"

__all__ = ["INSTALL_HINT", "LlamaCppClient", "ReplyTally", "build", "load_llama_cpp"]


def load_llama_cpp() -> ModuleType:
    """Import ``llama_cpp``.

    Raises:
        MissingDependencyError: it is not installed, or its native library
            does not load on this machine.
    """
    try:
        import llama_cpp
    except ImportError:
        raise MissingDependencyError(
            f"the 'llamacpp' llm needs llama-cpp-python: {INSTALL_HINT} (see the local "
            "models page of the docs for the build flags)"
        ) from None
    except (OSError, RuntimeError) as exc:
        raise MissingDependencyError(
            f"llama-cpp-python is installed but its native library failed to load ({exc}); "
            f"rebuild it: {INSTALL_HINT} with the CMAKE_ARGS from the local models page"
        ) from exc
    module: ModuleType = llama_cpp
    return module


def build(config: LlamaCppConfig, deps: Any) -> LlamaCppClient:
    """The registered factory: a client on the process's shared model."""
    return LlamaCppClient(config, deps)


class LlamaCppClient(JSONCompletion):
    """An `LLMClient` on a GGUF model run in-process by llama.cpp.

    Attributes:
        config: The `LlamaCppConfig`.
        model: The `LoadedModel` (shared with other clients of the same file).
        name: ``"llamacpp:<file name>"``.
        usage: The `UsageMeter` every call is recorded in.
        replies: The `ReplyTally` of ``complete_json`` outcomes (from `JSONCompletion`).
    """

    def __init__(
        self,
        config: LlamaCppConfig | None = None,
        deps: Any = None,
        *,
        usage: UsageMeter | None = None,
        model: LoadedModel | None = None,
        llama_cpp_module: ModuleType | None = None,
        grammar_module: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Build a client.

        Args:
            config: The options (defaults: the SmolLM2 package, greedy decoding).
            deps: Pipeline deps; its ``usage`` meter is used.
            usage: The meter to record in (default: ``deps.usage`` or a new one).
            model: A loaded model to use instead of the pooled one (tests).
            llama_cpp_module: An already-imported ``llama_cpp``.
            grammar_module: Replaces ``llama_cpp.llama_grammar`` (tests).
            clock: The monotonic clock of the generation deadline.

        Raises:
            MissingDependencyError: llama-cpp-python or the model package is
                not installed.
            ConfigError: the model file cannot be found.
        """
        self.config = config or LlamaCppConfig()
        self._llama_cpp = llama_cpp_module
        if model is None:
            self._llama_cpp = self._llama_cpp or load_llama_cpp()
            path = model_file(self.config)
            model = shared_model(self._llama_cpp, ModelKey(
                path=str(path), n_ctx=self.config.n_ctx, n_threads=self.config.n_threads,
                n_batch=self.config.n_batch))
        self.model = model
        if grammar_module is None:
            grammar_module = (self._llama_cpp or load_llama_cpp()).llama_grammar
        self._grammars = GrammarCache(grammar_module, check=model.grammar_check,
                                      max_chars=self.config.max_string_chars)
        meter = usage or (getattr(deps, "usage", None) if deps is not None else None)
        self.usage: UsageMeter = meter if isinstance(meter, UsageMeter) else UsageMeter()
        self.name = f"llamacpp:{Path(model.key.path).name}"
        self.max_repairs = self.config.max_repairs
        self._clock = clock

    def __repr__(self) -> str:
        return f"LlamaCppClient(model={Path(self.model.key.path).name!r})"

    @property
    def grammar_fallbacks(self) -> int:
        """Schemas the grammar converter rejected (asked with the generic JSON grammar)."""
        return self._grammars.unsupported

    # -- one generation ------------------------------------------------------
    def _grammar(self, schema: Mapping[str, Any] | None) -> tuple[str, Any | None]:
        """``(mode, grammar)`` for a request; ``mode`` is ``text`` without a schema."""
        if schema is None:
            return "text", None
        mode = self.config.structured_output
        if mode == "schema":
            grammar = self._grammars.for_schema(schema)
            if grammar is not None:
                return mode, grammar
            mode = "json"
        if mode == "json":
            return mode, self._grammars.any_json()
        return mode, None

    def _complete_raw(
        self,
        prompt: str,
        *,
        operation: str,
        system: str | None,
        json_schema: Mapping[str, Any] | None,
        max_tokens: int | None,
    ) -> str:
        mode, grammar = self._grammar(json_schema)
        user = prompt
        if json_schema is not None and mode == "schema":
            user = strip_schema_text(prompt)  # the grammar enforces it
        elif json_schema is not None and not schema_in_prompt(
            prompt, json_schema
        ):
            user = f"{prompt}\n\n{json_instruction(json_schema)}"
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}
        ]
        rendered = self.model.formatter(messages=messages)
        tokens = self.model.tokenize(rendered.prompt)
        budget = max_tokens or self.config.max_tokens
        if len(tokens) + budget > self.model.n_ctx:
            self.usage.record(operation, failed=True)
            log.warning("llamacpp_prompt_too_long", operation=operation,
                        prompt_tokens=len(tokens), max_tokens=budget, n_ctx=self.model.n_ctx)
            raise LLMRequestError(
                f"{operation}: the prompt is {len(tokens)} tokens and the reply may take "
                f"{budget} (max_tokens), which does not fit the context window of "
                f"{self.model.n_ctx} tokens; raise n_ctx (the model was trained for "
                f"{self.model.n_ctx_train or 'an unknown number of'} tokens) or lower max_tokens",
                kind=ErrorKind.CONTEXT_WINDOW, error_type="ContextWindowExceeded",
            )
        text, finish, completion_tokens = self._generate(
            tokens, rendered.stop, budget=budget, grammar=grammar, operation=operation, mode=mode)
        if json_schema is not None and finish == "length" and not _parses(text):
            log.warning("llamacpp_reply_truncated", operation=operation, max_tokens=budget,
                        completion_tokens=completion_tokens)
            raise ReplyCutError(
                f"{operation}: the reply was cut at max_tokens={budget} before its JSON value "
                "closed; raise max_tokens", raw=text)  # whole: callers may salvage a prefix
        return text

    def _generate(
        self,
        tokens: list[int],
        stop: Any,
        *,
        budget: int,
        grammar: Any | None,
        operation: str,
        mode: str,
    ) -> tuple[str, str, int]:
        """Run one generation; returns ``(text, finish_reason, completion tokens)``."""
        timeout = self.config.timeout_s
        timed_out = threading.Event()

        def past_deadline(_ids: Any, _logits: Any) -> bool:
            if deadline is not None and self._clock() > deadline:
                timed_out.set()
                return True
            return False

        with self.model.lock:
            start = time.perf_counter()
            deadline = None if timeout is None else self._clock() + timeout
            kwargs: dict[str, Any] = {
                "prompt": tokens, "max_tokens": budget, "temperature": self._temperature(),
                "seed": self.config.seed, "repeat_penalty": self.config.repeat_penalty,
                "stop": stop, "grammar": grammar,
                "stopping_criteria": self._stopping([past_deadline]),
            }
            try:
                out = self.model.llama.create_completion(**kwargs)
            except ValueError as exc:  # llama-cpp-python's own context-window check
                self.usage.record(operation, latency_ms=_ms(start), failed=True)
                raise LLMRequestError(f"{operation}: {exc}", kind=ErrorKind.CONTEXT_WINDOW,
                                      error_type=type(exc).__name__) from exc
            except Exception as exc:
                self.usage.record(operation, latency_ms=_ms(start), failed=True)
                raise LLMCallError(f"{operation}: llama.cpp failed: {exc}",
                                   error_type=type(exc).__name__) from exc
            latency = _ms(start)
        choice = (out.get("choices") or [{}])[0]
        text = str(choice.get("text") or "")
        finish = str(choice.get("finish_reason") or "")
        usage = out.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens", len(tokens)))
        completion_tokens = int(usage.get("completion_tokens", 0))
        self.usage.record(operation, prompt_tokens=prompt_tokens,
                          completion_tokens=completion_tokens, latency_ms=latency,
                          failed=timed_out.is_set())
        log.debug("llm_call", operation=operation, model=self.name, mode=mode,
                  prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                  finish_reason=finish, latency_ms=round(latency, 1))
        if timed_out.is_set():
            raise LLMTimeoutError(
                f"{operation}: generation passed timeout_s={timeout} after {completion_tokens} "
                "tokens", error_type="Timeout")
        return text, finish, completion_tokens

    def _temperature(self) -> float:
        """The sampling temperature: ``repair_temperature`` for a repair request.

        Greedy decoding answers a repair prompt with the same mistake (no
        repair of SmolLM2's succeeded in 140 greedy calls), so repairs sample.
        """
        if json_attempt() > 0 and self.config.repair_temperature is not None:
            return self.config.repair_temperature
        return self.config.temperature

    def _stopping(self, criteria: list[Callable[[Any, Any], bool]]) -> Any:
        module = self._llama_cpp
        if module is not None and hasattr(module, "StoppingCriteriaList"):
            return module.StoppingCriteriaList(criteria)
        return criteria


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True

