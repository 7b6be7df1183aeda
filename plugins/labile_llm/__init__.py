"""The LLM machinery that clients share, and the ``scripted`` test client.

A library and a plugin. As a library it holds what every real client builds
on, so hosted, local and scripted models parse, validate and fail the same
way:

* `labile_llm.json_completion`: ``complete_json`` on top of a raw text call
  (JSON extraction from prose and code fences, light repair, validation,
  re-asking, failing closed), as the `JSONCompletion` mixin;
* `labile_llm.jsoncheck`: the JSON-Schema subset the prompts use;
* `labile_llm.retry`: error classification, retries with backoff and
  client-side rate limits;
* `labile_llm.cache`: an on-disk reply cache;
* `labile_llm.tokens`: token counting as litellm does it, offline;
* `labile_llm.context`: the prompt context, a search's hits as dated evidence
  within a token budget (what the answerer shows its model, and what an
  application bringing its own LLM pastes into its prompt).

As a plugin it registers the ``scripted`` client (`ScriptedLLM`), which
replays canned replies for tests and demos, the default answerer
``llm.answerer`` (`labile_llm.answer`), and renders ``RetrievalResult.context``
(the ``labile_render_context`` hook). The kernel keeps only the
contract (`labile._protocols.LLMClient`), the ``none`` client and the usage
meter; ``labile_litellm`` is the hosted/local client built on this package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from labile.plugin import Hit, Register, hookimpl
from labile_llm.answer import LLMAnswerer
from labile_llm.context import PromptContext, render_context
from labile_llm.json_completion import JSONCompletion, extract_json
from labile_llm.scripted import ScriptedLLM, ScriptedLLMConfig

__all__ = ["JSONCompletion", "LLMAnswerer", "ScriptedLLM", "ScriptedLLMConfig", "extract_json"]


@hookimpl
def labile_register_llms(register: Register) -> None:
    """Register ``scripted``."""
    register("scripted", ScriptedLLM, config=ScriptedLLMConfig,
             summary="replays canned replies; for tests and demos")


@hookimpl
def labile_render_context(hits: Sequence[Hit], options: dict[str, Any]) -> PromptContext:
    """``RetrievalResult.context(...)``: `labile_llm.context.render_context` of the hits."""
    return render_context(hits, **options)


@hookimpl
def labile_register_answerers(register: Register) -> None:
    """Register ``llm.answerer``, what ``Memory.answer`` runs by default."""
    register("llm.answerer", LLMAnswerer,
             summary="answers from a dated evidence context with the pipeline's LLM, then "
                     "lets the memory learn from the answer")


@hookimpl
def labile_register_forget_handlers(register: Register) -> None:
    """``llm.forget_replies``: forgetting deletes cached replies that quote forgotten turns."""
    from labile_llm.forget import forget_cached_replies

    register("llm.forget_replies", forget_cached_replies,
             summary="delete the reply-cache entries quoting forgotten observations")
