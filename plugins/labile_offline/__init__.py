"""The offline embedder bundle: sentence embedders that ship their weights in a package.

``minilm`` (all-MiniLM-L6-v2 int8, the default), ``paraphrase-l3`` (paraphrase-MiniLM-L3-v2,
optional extra ``l3``) and ``minilm+l3`` (both fused in one vector space); ``gguf``
(nomic-embed-text-v1.5 run by llama.cpp, optional extra ``nomic``; `labile_offline.gguf`,
its files `labile_offline.gguf_model`, ``labile embedder build-gguf``); plus ``hashing``
(`labile_offline.hashing`), the dependency-free embedder of fast tests. Loaded ONNX
sessions are shared per process (`labile_offline.pool`); ``labile bench cycles``
(`labile_bench.cycles`) checks that opening a Memory per request does not grow.
"""

from __future__ import annotations

from labile.plugin import Register, RegisterCommand, hookimpl


@hookimpl
def labile_register_embedders(register: Register) -> None:
    """Register ``minilm``, ``paraphrase-l3``, ``minilm+l3``, ``gguf`` and ``hashing``."""
    from labile_offline.gguf import GGUFConfig, GGUFEmbedder
    from labile_offline.hashing import HashingConfig, HashingEmbedder
    from labile_offline.minilm import MiniLMConfig, MiniLMEmbedder
    from labile_offline.paraphrase import (
        FusedEmbedder,
        FusedEmbedderConfig,
        ParaphraseL3Config,
        ParaphraseL3Embedder,
    )

    register("minilm", MiniLMEmbedder, config=MiniLMConfig,
             summary="all-MiniLM-L6-v2 int8 ONNX on onnxruntime (384-d); offline default")
    register("paraphrase-l3", ParaphraseL3Embedder, config=ParaphraseL3Config,
             summary="paraphrase-MiniLM-L3-v2 fp32 ONNX (384-d); needs labile[l3]")
    register("minilm+l3", FusedEmbedder, config=FusedEmbedderConfig,
             summary="MiniLM-L6 and paraphrase-L3 concatenated (768-d, weighted cosine); "
                     "needs labile[l3]")
    register("gguf", GGUFEmbedder, config=GGUFConfig,
             summary="GGUF encoder on llama.cpp, nomic-embed-text-v1.5 by default (768-d, "
                     "query/document prefixes); needs labile[nomic]")
    register("hashing", HashingEmbedder, config=HashingConfig,
             summary="deterministic feature hashing; for tests, not for quality")


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """``labile embedder build-gguf``: the nomic GGUF file (or a quantized copy) into the cache."""
    from labile_offline.gguf_commands import build_gguf_options, run_build_gguf

    register("embedder", help="offline embedder files (build-gguf)")
    register("embedder build-gguf", run=run_build_gguf, configure=build_gguf_options,
             help="rebuild nomic-embed-text-v1.5 from its packages, optionally quantized")
