"""One loaded model per process, shared by every client that asks for the same one.

Loading SmolLM2-135M takes about a second and 100 MB; a larger model takes
more of both. A `Memory` builds one client, but a process may hold several
Memories (a benchmark runs one per conversation), so clients ask
`shared_model` instead of loading: the first call loads, later calls with
the same file and context settings get the same `LoadedModel`. Its lock
serialises generations, because a llama.cpp context (its KV cache) is not
safe to use from two threads at once. `release_models` drops the pool.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs

from labile.plugin import get_logger

log = get_logger(__name__)

__all__ = ["LoadedModel", "ModelKey", "loaded_models", "release_models", "shared_model"]


@attrs.frozen
class ModelKey:
    """What makes two loaded models interchangeable."""

    path: str
    n_ctx: int
    n_threads: int | None
    n_batch: int


@attrs.define(eq=False)
class LoadedModel:
    """A loaded ``llama_cpp.Llama`` with what a client needs around it.

    Attributes:
        key: The `ModelKey` it was loaded for.
        llama: The ``llama_cpp.Llama`` instance.
        formatter: The chat formatter built from the GGUF's chat template.
        n_ctx: The context window actually allocated.
        n_ctx_train: The context the model was trained for (0 if unknown).
        grammar_check: Whether llama.cpp's parser accepts a GBNF text
            (``None``: not checked).
        lock: Held for the whole of one generation.
    """

    key: ModelKey
    llama: Any
    formatter: Any
    n_ctx: int
    n_ctx_train: int
    grammar_check: Callable[[str], bool] | None = None
    lock: threading.Lock = attrs.field(factory=threading.Lock)

    def tokenize(self, text: str) -> list[int]:
        """Tokens of already-formatted chat text (special tokens parsed, no extra BOS)."""
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))


_POOL: dict[ModelKey, LoadedModel] = {}
_POOL_LOCK = threading.Lock()
_AT_EXIT = False


def shared_model(llama_cpp: ModuleType, key: ModelKey) -> LoadedModel:
    """The process's model for ``key``, loading it on first use.

    Args:
        llama_cpp: The imported ``llama_cpp`` module.
        key: File and context settings.

    Raises:
        ValueError: the GGUF has no chat template (a base model).
    """
    global _AT_EXIT
    with _POOL_LOCK:
        model = _POOL.get(key)
        if model is None:
            model = _load(llama_cpp, key)
            _POOL[key] = model
            if not _AT_EXIT:
                # Free pooled models while the interpreter is still whole: left to
                # Llama.__del__ at shutdown, llama-cpp-python's cleanup runs after its
                # own module globals are gone and prints a TypeError traceback.
                atexit.register(_close_all)
                _AT_EXIT = True
        return model


def loaded_models() -> list[ModelKey]:
    """The keys of the models currently loaded (for tests and diagnostics)."""
    with _POOL_LOCK:
        return list(_POOL)


def release_models() -> int:
    """Forget every pooled model (clients holding one keep it alive); returns the count."""
    with _POOL_LOCK:
        n = len(_POOL)
        _POOL.clear()
        return n


def _close_all() -> None:
    with _POOL_LOCK:
        models = list(_POOL.values())
        _POOL.clear()
    for model in models:
        close = getattr(model.llama, "close", None)
        if close is not None:
            close()


def _load(llama_cpp: ModuleType, key: ModelKey) -> LoadedModel:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    threads = key.n_threads or max((os.cpu_count() or 2) // 2, 1)
    llama = llama_cpp.Llama(
        model_path=key.path, n_ctx=key.n_ctx, n_threads=threads, n_threads_batch=threads,
        n_batch=min(key.n_batch, key.n_ctx), verbose=False,
    )
    metadata: dict[str, str] = dict(getattr(llama, "metadata", {}) or {})
    template = metadata.get("tokenizer.chat_template")
    if not template:
        raise ValueError(
            f"{Path(key.path).name} has no chat template in its GGUF metadata: the llamacpp "
            "llm needs an instruction-tuned model"
        )
    eos_id, bos_id = llama.token_eos(), llama.token_bos()
    vocab = llama._model  # token texts for the template's eos/bos variables
    formatter = Jinja2ChatFormatter(
        template=template,
        eos_token=vocab.token_get_text(eos_id) if eos_id != -1 else "",
        bos_token=vocab.token_get_text(bos_id) if bos_id != -1 else "",
        stop_token_ids=[eos_id],
    )
    train = 0
    for name, value in metadata.items():
        if name.endswith(".context_length"):
            try:
                train = int(value)
            except ValueError:
                train = 0
    n_ctx = int(llama.n_ctx())
    if train and n_ctx > train:
        log.warning("llamacpp_context_beyond_training", model=Path(key.path).name,
                    n_ctx=n_ctx, n_ctx_train=train)
    log.info("llamacpp_model_loaded", model=Path(key.path).name, n_ctx=n_ctx,
             n_ctx_train=train, n_threads=threads)
    return LoadedModel(key=key, llama=llama, formatter=formatter, n_ctx=n_ctx, n_ctx_train=train,
                       grammar_check=_grammar_check(llama_cpp, vocab.vocab))


def _grammar_check(llama_cpp: ModuleType, vocab: Any) -> Callable[[str], bool]:
    """A check that parses GBNF with llama.cpp itself.

    llama-cpp-python hands the sampler chain whatever
    ``llama_sampler_init_grammar`` returns, and a NULL there (a grammar the
    parser refuses) crashes the process; so each grammar is parsed once here
    first, and the throwaway sampler freed.
    """

    def check(gbnf: str) -> bool:
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
        if not sampler:
            return False
        llama_cpp.llama_sampler_free(sampler)
        return True

    return check
