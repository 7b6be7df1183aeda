"""The ``none`` LLM: the offline default, which refuses every call with a clear hint.

The `labile._protocols.LLMClient` protocol is the contract; the machinery that
real clients share (JSON extraction, validation and repair, retries, the reply
cache) and the ``scripted`` test client live in the `labile_llm` package.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from labile._errors import LLMError


@attrs.frozen
class NoLLMConfig:
    """``none`` takes no options."""


class NoLLM:
    """Stands in where a pipeline has no model; any call is a configuration mistake."""

    name = "none"

    def __init__(self, config: NoLLMConfig | None = None, deps: Any = None) -> None:
        pass

    def _refuse(self, operation: str) -> LLMError:
        return LLMError(
            f"operation {operation!r} needs an LLM but this pipeline has none; set "
            '[llm] type = "litellm" (pip install \'labile[llm]\') or use an offline component'
        )

    def complete_json(
        self, prompt: str, schema: Mapping[str, Any], *, operation: str,
        system: str | None = None,
    ) -> Any:
        """Always raises `LLMError`."""
        raise self._refuse(operation)

    def complete_text(
        self, prompt: str, *, operation: str, system: str | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """Always raises `LLMError`."""
        raise self._refuse(operation)
