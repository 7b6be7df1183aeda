"""Reading a litellm reply: its text, token counts and cost, and what an error is about."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from labile_llm.cache import CachedReply
from labile_llm.tokens import count_tokens_like_litellm

__all__ = ["as_int", "mentions_format", "read_response", "response_cost"]


def read_response(response: Any, messages: list[dict[str, Any]], litellm: Any) -> CachedReply:
    """Text, tokens and cost of a litellm ``ModelResponse`` (or a look-alike).

    Tokens as the provider reports them, counted locally where it does not;
    cost as ``litellm`` prices it (0 where it cannot: local servers).
    """
    choices = _get(response, "choices") or []
    message = _get(choices[0], "message") if choices else None
    text = _get(message, "content")
    if not text:
        calls = _get(message, "tool_calls") or []
        if calls:
            text = _get(_get(calls[0], "function"), "arguments")
    text = text if isinstance(text, str) else ""
    usage = _get(response, "usage")
    prompt_tokens = as_int(_get(usage, "prompt_tokens"))
    completion_tokens = as_int(_get(usage, "completion_tokens"))
    if prompt_tokens is None:
        prompt_tokens = sum(count_tokens_like_litellm(str(m.get("content") or ""))
                            for m in messages)
    if completion_tokens is None:
        completion_tokens = count_tokens_like_litellm(text)
    return CachedReply(text=text, prompt_tokens=prompt_tokens,
                       completion_tokens=completion_tokens,
                       cost_usd=response_cost(response, litellm))


def response_cost(response: Any, litellm: Any) -> float:
    """The reply's cost in USD: litellm's own figure, else its price table, else 0."""
    hidden = getattr(response, "_hidden_params", None)
    cost = hidden.get("response_cost") if isinstance(hidden, Mapping) else None
    if cost is None:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # litellm has no price for this model (local servers)
            cost = 0.0
    try:
        return max(float(cost or 0.0), 0.0)
    except (TypeError, ValueError):
        return 0.0


def mentions_format(text: str) -> bool:
    """Whether an error message is about the request's ``response_format``."""
    lowered = text.lower()
    return any(word in lowered for word in ("response_format", "json_schema", "json_object"))


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def as_int(value: Any) -> int | None:
    """``value`` as an int, or ``None`` when it is missing, a bool or not a number."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
