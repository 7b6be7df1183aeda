"""Token counting as litellm does it, offline: what the clients' usage and budgets measure.

`count_tokens_like_litellm` counts with the tokenizer litellm uses by default
(tiktoken ``cl100k_base``), loaded from the encoding file that litellm
bundles: found without importing litellm and checked by SHA-256, so it never
touches the network. Where litellm or tiktoken is missing it falls back to
an offline estimate (`estimate_tokens`).

The litellm client counts a call's tokens with it when the provider reports
none, and the ``scripted`` client always does (unless told to estimate), so
usage figures of tests and of real runs are comparable. Both clients expose
it as their ``count_tokens`` method, which `labile_llm.answer` uses to fit the
evidence context into its token budget.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Literal

from labile.plugin import MissingDependencyError, get_logger

__all__ = [
    "TokenCounter",
    "count_tokens_like_litellm",
    "estimate_tokens",
    "litellm_tokenizer",
    "token_counter",
]

log = get_logger(__name__)
TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """An offline token estimate: about 4 characters per token, at least one per word.

    What budgets are measured with when the caller has no tokenizer of the
    model that will read the text (`labile_llm.context.render_context`'s
    default). Against cl100k on LoCoMo's dev turns it counted 1.11 times the
    real tokens of the turns, but 0.87 times those of ``"lines"`` evidence
    (dates and digits tokenize densely): leave headroom.
    """
    return max(len(text.split()), (len(text) + 3) // 4) if text else 0


#: litellm bundles tiktoken files named as tiktoken caches them (SHA-1 of the URL).
_CL100K_FILE: Final = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_CL100K_SHA256: Final = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL: Final = {
    "<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276,
}
_tok_lock = threading.Lock()
_tok_state: dict[str, Any] = {}


def _bundled_cl100k() -> Path | None:
    """litellm's bundled cl100k file, located without importing litellm."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in locations:
        path = Path(root) / "litellm_core_utils" / "tokenizers" / _CL100K_FILE
        if path.is_file():
            return path
    return None


def _load_cl100k() -> TokenCounter | None:
    path = _bundled_cl100k()
    if path is None:
        return None
    try:
        import tiktoken
    except ImportError:
        return None
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != _CL100K_SHA256:
        log.warning("tokenizer_file_mismatch", path=str(path))
        return None
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    encoding = tiktoken.Encoding(
        name="cl100k_base", pat_str=_CL100K_PATTERN, mergeable_ranks=ranks,
        special_tokens=dict(_CL100K_SPECIAL),
    )

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=())) if text else 0

    return count


def litellm_tokenizer() -> TokenCounter | None:
    """The cl100k counter litellm uses by default, or ``None`` if unavailable offline.

    Loaded once per process (about 0.5 s) on first use; never touches the
    network: the encoding comes from the file litellm ships, verified by hash.
    """
    with _tok_lock:
        if "counter" not in _tok_state:
            try:
                _tok_state["counter"] = _load_cl100k()
            except Exception as exc:  # a broken install must not break counting
                log.warning("tokenizer_load_failed", error_type=type(exc).__name__)
                _tok_state["counter"] = None
        counter: TokenCounter | None = _tok_state["counter"]
        return counter


def count_tokens_like_litellm(text: str) -> int:
    """Tokens in ``text`` by litellm's default tokenizer, else `estimate_tokens`."""
    counter = litellm_tokenizer()
    return counter(text) if counter is not None else estimate_tokens(text)


def token_counter(kind: Literal["auto", "tiktoken", "estimate"] = "auto") -> TokenCounter:
    """A token-counting function.

    Args:
        kind: ``"auto"`` (litellm's tokenizer when available offline, else
            the estimate), ``"tiktoken"`` (required), ``"estimate"``.

    Raises:
        MissingDependencyError: ``kind="tiktoken"`` and it cannot be loaded.
    """
    if kind == "estimate":
        return estimate_tokens
    if kind == "tiktoken":
        counter = litellm_tokenizer()
        if counter is None:
            raise MissingDependencyError(
                "the cl100k tokenizer needs tiktoken and litellm's bundled encoding: "
                "pip install 'labile[llm]'"
            )
        return counter
    return count_tokens_like_litellm
