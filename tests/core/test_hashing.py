"""Tests of the feature-hashing test embedder."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labile_offline.hashing import HashingConfig, HashingEmbedder

# Computed once with blake2b feature hashing; Python's salted hash() would change these in every
# process, so matching them proves the vectors are process-independent.
HELLO_WORLD_256 = {
    57: 0.213201,
    137: 0.426401,
    148: 0.213201,
    162: 0.213201,
    175: -0.213201,
    194: -0.213201,
    195: -0.213201,
    198: 0.213201,
    220: 0.213201,
    237: 0.426401,
    241: -0.213201,
    246: -0.426401,
    248: 0.213201,
}
HELLO_WORLD_16 = [
    0.0, -0.223607, 0.0, -0.223607, 0.223607, 0.0, -0.223607, 0.0,
    0.223607, 0.67082, 0.0, 0.0, 0.223607, 0.447214, 0.0, -0.223607,
]  # fmt: skip


def _emb(dim: int = 256) -> HashingEmbedder:
    return HashingEmbedder(HashingConfig(dim=dim), None)


def test_fixed_expected_values() -> None:
    vec = _emb().embed(["Hello world"])[0]
    expected = np.zeros(256)
    for idx, val in HELLO_WORLD_256.items():
        expected[idx] = val
    np.testing.assert_allclose(vec, expected, atol=1e-6)
    np.testing.assert_allclose(_emb(16).embed(["Hello world"])[0], HELLO_WORLD_16, atol=1e-6)


def test_deterministic_across_calls_and_instances() -> None:
    texts = ["the cat sat on the mat", "Zoë visited Kraków", "Hello world"]
    a = _emb().embed(texts)
    b = _emb().embed(texts)
    c = _emb().embed(texts[::-1])[::-1]
    assert np.array_equal(a, b)
    assert np.array_equal(a, c)


def test_case_punctuation_and_unicode_normalisation() -> None:
    a, b, c, d = _emb().embed(["Hello world", "hello, WORLD!", "Zo\u00eb", "Zoe\u0308"])
    np.testing.assert_allclose(a, b, atol=1e-7)
    np.testing.assert_allclose(c, d, atol=1e-7)  # composed vs decomposed diaeresis


def test_shape_dtype_norm() -> None:
    out = _emb(64).embed(["one", "two words", "a somewhat longer text with several words"])
    assert out.shape == (3, 64)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)


def test_zero_text_gives_zero_row() -> None:
    out = _emb().embed(["", "   ", "?!...", "word"])
    assert np.all(np.isfinite(out))
    assert not out[:3].any()
    assert np.linalg.norm(out[3]) == pytest.approx(1.0, abs=1e-6)


def test_empty_input() -> None:
    out = _emb(32).embed([])
    assert out.shape == (0, 32)
    assert out.dtype == np.float32


def test_similarity_reflects_overlap() -> None:
    a, b, c = _emb(1024).embed(
        ["Melanie painted a sunrise over the lake", "Melanie painted the lake", "tax forms due"]
    )
    assert a @ b > 0.5
    assert abs(float(a @ c)) < 0.2


def test_dim_config_and_name() -> None:
    emb = _emb(512)
    assert emb.dim == 512
    assert emb.name == "hashing-512"
    assert emb.embed(["x"]).shape == (1, 512)
    assert HashingConfig().dim == 256
    assert HashingEmbedder(HashingConfig(), None).name == "hashing-256"
    for bad in (15, 4097, 0):
        with pytest.raises(ValueError):
            HashingConfig(dim=bad)
    with pytest.raises(TypeError):
        HashingConfig(dim=256.0)  # type: ignore[arg-type]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        HashingConfig().dim = 8  # type: ignore[misc]


def test_rejects_bare_string_and_non_strings() -> None:
    with pytest.raises(TypeError, match="not a single str"):
        _emb().embed("hello")
    with pytest.raises(TypeError, match=r"texts\[0\]"):
        _emb().embed([None])  # type: ignore[list-item]


def _reference_row(text: str, dim: int) -> np.ndarray:
    """The embedding as first written: every feature of `_features`, added one by one."""
    from labile_offline.hashing import _feature_hash, _features

    acc = np.zeros(dim, dtype=np.float64)
    for feature, weight in _features(text):
        h = _feature_hash(feature)
        acc[h % dim] += (-1.0 if h >> 63 else 1.0) * weight
    norm = float(np.linalg.norm(acc))
    return (acc / norm if norm > 0 else acc).astype(np.float32)


# Few distinct pieces, so words, bigrams and buckets repeat within a text.
_TEXT = st.lists(st.sampled_from([*"ab cé\u0301Ｆ1_.\n", "cat", "the ", "ß"]),
                 max_size=80).map("".join)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(_TEXT, max_size=4), dim=st.sampled_from([16, 97, 256]))
def test_bucket_sums_per_word_equal_the_feature_by_feature_sum(texts: list[str], dim: int) -> None:
    """For any texts and dimension, the fast path (cached buckets per distinct word and
    bigram, one bincount) gives bit for bit the vectors of the feature-by-feature loop, so
    vectors stored before it stay comparable with new ones."""
    got = _emb(dim).embed(texts)
    for row, text in enumerate(texts):
        assert np.array_equal(got[row], _reference_row(text, dim))
