"""The optional paraphrase-MiniLM-L3-v2 embedder and the fused MiniLM + L3 embedder."""

from __future__ import annotations

from importlib import metadata

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labile.plugin import runtime_only
from labile_offline import paraphrase
from labile_offline.minilm import MiniLMConfig, ModelIntegrityError
from labile_offline.paraphrase import (
    FusedEmbedder,
    FusedEmbedderConfig,
    ParaphraseL3Config,
    ParaphraseL3Embedder,
)

try:
    metadata.distribution(paraphrase.L3_DISTRIBUTION)
    HAVE_L3 = True
except metadata.PackageNotFoundError:
    HAVE_L3 = False

needs_l3 = pytest.mark.skipif(not HAVE_L3, reason="needs the optional l3 model package")


@pytest.fixture(scope="module")
def l3() -> ParaphraseL3Embedder:
    emb = ParaphraseL3Embedder(ParaphraseL3Config(), None)
    emb.load()
    return emb


@needs_l3
def test_shape_dtype_unit_norm_and_sense(l3: ParaphraseL3Embedder) -> None:
    vecs = l3.embed(["I adopted a puppy", "We got a new dog", "The stock market fell", ""])
    assert vecs.shape == (4, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs[:3], axis=1), 1.0, atol=1e-5)
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2]) + 0.2


@needs_l3
def test_mean_pooling_matches_the_graph_pooled_output(l3: ParaphraseL3Embedder) -> None:
    """Our pooling of output 2 equals the model's own pooled vector (output 3)."""
    session, tokenizer = l3._ensure_loaded()
    texts = ["a short one", "a much longer sentence about the mountains last summer"]
    enc = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    wanted = {i.name for i in session.get_inputs()}
    feeds = {k: v for k, v in {"input_ids": ids, "attention_mask": mask,
                                "token_type_ids": np.zeros_like(ids)}.items() if k in wanted}
    pooled = session.run(None, feeds)[3]
    pooled = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    assert np.allclose(l3.embed(texts), pooled, atol=1e-4)


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paraphrase, "L3_DISTRIBUTION", "no-such-distribution-xyz")
    with pytest.raises(ImportError, match=r"labile\[l3\]"):
        paraphrase.l3_model_file()


@needs_l3
def test_wrong_hash_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paraphrase, "L3_SHA256", "0" * 64)
    with pytest.raises(ModelIntegrityError):
        paraphrase.l3_model_file()


def test_configs_share_minilm_runtime_options_and_defaults() -> None:
    l3, base = ParaphraseL3Config(), MiniLMConfig()
    assert (l3.threads, l3.batch_size, l3.max_tokens) == (base.threads, base.batch_size, 128)
    for cls, runtime in ((ParaphraseL3Config, {"threads", "batch_size"}),
                         (FusedEmbedderConfig, {"threads"})):
        assert {f.name for f in attrs.fields(cls) if runtime_only(f)} == runtime, cls


def test_fused_config_rejects_zero_weights() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        FusedEmbedderConfig(minilm_weight=0.0, l3_weight=0.0)


@needs_l3
@settings(max_examples=5, deadline=None)
@given(st.floats(min_value=0.05, max_value=1.0))
def test_fused_cosine_is_the_weighted_mean(w: float) -> None:
    """The dot product of two fused vectors is the weight-averaged cosine of the members."""
    fused = FusedEmbedder(FusedEmbedderConfig(minilm_weight=w, l3_weight=1.0), None)
    a, b = "Caroline went to a support group", "She attended a meeting for LGBTQ people"
    va, vb = fused.embed([a, b])
    assert va.shape == (768,) and np.linalg.norm(va) == pytest.approx(1.0, abs=1e-5)
    parts = [float(m.embed([a])[0] @ m.embed([b])[0]) for m in fused.members]
    expected = (w * parts[0] + 1.0 * parts[1]) / (w + 1.0)
    assert float(va @ vb) == pytest.approx(expected, abs=1e-4)
