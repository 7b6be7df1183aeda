"""The ``litellm`` llm: hosted and local chat models through litellm (``labile[llm]``).

Registration needs nothing but this package, so ``labile components`` lists
the client even where litellm is not installed; building it imports litellm
(lazily, offline-safe) or fails with ``pip install 'labile[llm]'``.
"""

from __future__ import annotations

from labile.plugin import Register, hookimpl
from labile_litellm.client import build
from labile_litellm.config import LiteLLMConfig

__all__ = ["LiteLLMConfig"]


@hookimpl
def labile_register_llms(register: Register) -> None:
    """Register ``litellm``."""
    register("litellm", build, config=LiteLLMConfig,
             summary="any hosted or local model via litellm (pip install 'labile[llm]')")
