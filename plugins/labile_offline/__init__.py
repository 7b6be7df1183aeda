"""The offline embedder bundle: all-MiniLM-L6-v2 as int8 ONNX (the default embedder)."""

from __future__ import annotations

from labile.plugin import Register, hookimpl


@hookimpl
def labile_register_embedders(register: Register) -> None:
    """Register ``minilm`` (all-MiniLM-L6-v2, int8 ONNX, 384-d)."""
    from labile_offline.minilm import MiniLMConfig, MiniLMEmbedder

    register("minilm", MiniLMEmbedder, config=MiniLMConfig,
             summary="all-MiniLM-L6-v2 int8 ONNX on onnxruntime (384-d); offline default")
