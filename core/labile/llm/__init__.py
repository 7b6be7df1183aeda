"""The kernel's LLM plumbing: JSON extraction, validation, repair, and two clients.

`JSONCompletion` implements ``complete_json`` once for every client on top of
a raw text call, so hosted, local and scripted models share the same parsing,
schema validation and fail-closed repair loop.
"""

from __future__ import annotations

from labile.llm.base import JSONCompletion, extract_json
from labile.llm.none import NoLLM, NoLLMConfig
from labile.llm.scripted import ScriptedLLM, ScriptedLLMConfig

__all__ = ["JSONCompletion", "NoLLM", "NoLLMConfig", "ScriptedLLM", "ScriptedLLMConfig",
           "extract_json"]
