"""The kernel's own LLM client: ``none``, the offline default that refuses every call.

The `labile._protocols.LLMClient` protocol is the contract; the machinery that
real clients share (JSON extraction, validation and repair, retries, the reply
cache) and the ``scripted`` test client live in the `labile_llm` package, on
which ``labile_litellm`` and third-party clients build.
"""

from __future__ import annotations

from labile._llm.none import NoLLM, NoLLMConfig

__all__ = ["NoLLM", "NoLLMConfig"]
