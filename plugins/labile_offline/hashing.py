"""Feature-hashing embedder: deterministic, dependency-free (numpy only), for fast tests.

It has no notion of meaning: two texts are close only when they share words, word pairs
or character trigrams. Use it where a test needs vectors quickly and reproducibly, never as a
retrieval model.

Features of a text (after NFKC normalisation and lowercasing; words are runs of Unicode word
characters):

* word unigrams, weight 1.0;
* word bigrams (adjacent words), weight 1.0;
* character trigrams of each word padded with ``#`` on both sides (so ``"cat"`` gives
  ``#ca``, ``cat``, ``at#``), weight 0.5; they make typos and inflections overlap.

Each feature is hashed with ``hashlib.blake2b`` (8-byte digest, read little-endian) into a
bucket ``h % dim`` with sign ``+1`` or ``-1`` from the digest's top bit, so collisions cancel
out on average instead of piling up. Python's ``hash()`` is not used: it is salted per process
(PYTHONHASHSEED), and vectors must be identical across processes and machines.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

import attrs
import numpy as np

from labile_offline.inputs import checked_texts

__all__ = ["HashingConfig", "HashingEmbedder"]

_WORD_RE = re.compile(r"\w+")
_UNIGRAM_WEIGHT = 1.0
_BIGRAM_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5


@functools.lru_cache(maxsize=1 << 16)
def _feature_hash(feature: str) -> int:
    """64-bit unsigned hash of a feature string; stable across processes and platforms."""
    # Cached: the same words recur constantly, and blake2b plus the bytes round trip
    # dominates the cost of embedding.
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _features(text: str) -> list[tuple[str, float]]:
    """The weighted features of one text; empty when the text has no word characters.

    The reference definition: `HashingEmbedder.embed` computes the same sums per word
    (`_word_buckets`) and per bigram, without listing the features.
    """
    words = _words(text)
    # Prefixes keep the three feature families apart: the word "cat" and the trigram
    # "cat" must not land in the same bucket by construction.
    feats: list[tuple[str, float]] = [(f"w:{w}", _UNIGRAM_WEIGHT) for w in words]
    feats.extend((f"b:{a} {b}", _BIGRAM_WEIGHT) for a, b in itertools.pairwise(words))
    for w in words:
        feats.extend(_word_features(w)[1:])
    return feats


def _words(text: str) -> list[str]:
    # NFKC first: a decomposed "e" + combining diaeresis would otherwise split the word
    # (combining marks are not word characters), and full-width letters would not match.
    return _WORD_RE.findall(unicodedata.normalize("NFKC", text).lower())


def _word_features(word: str) -> list[tuple[str, float]]:
    """A word's own features: its unigram, then its padded character trigrams."""
    padded = f"#{word}#"
    return [(f"w:{word}", _UNIGRAM_WEIGHT)] + [
        (f"c:{padded[i : i + 3]}", _TRIGRAM_WEIGHT) for i in range(len(padded) - 2)]


@functools.lru_cache(maxsize=1 << 16)
def _word_buckets(word: str, dim: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Buckets and signed weights of a word's own features (`_word_features`) in ``dim``."""
    # Cached per word: a word's unigram and trigrams are the same wherever it occurs, and
    # building and hashing them per occurrence was most of the cost of a long text.
    buckets: list[int] = []
    values: list[float] = []
    for feature, weight in _word_features(word):
        h = _feature_hash(feature)
        buckets.append(h % dim)
        values.append(-weight if h >> 63 else weight)
    return tuple(buckets), tuple(values)


@attrs.frozen(kw_only=True)
class HashingConfig:
    """Settings of :class:`HashingEmbedder`.

    Attributes:
        dim: Number of hash buckets, i.e. the vector dimension (16 to 4096).
    """

    dim: int = attrs.field(
        default=256,
        validator=[
            attrs.validators.instance_of(int),
            attrs.validators.ge(16),
            attrs.validators.le(4096),
        ],
    )


class HashingEmbedder:
    """Signed feature hashing of word unigrams, bigrams and character trigrams.

    Deterministic: the same text and ``dim`` give the same vector in every process, on every
    platform. Thread-safe (no mutable state besides a thread-safe ``lru_cache``).

    Attributes:
        name: ``"hashing-<dim>"``; vectors of different ``dim`` are different spaces.
        dim: Vector dimension, from the config.
    """

    name: str
    dim: int

    def __init__(self, config: HashingConfig | None = None, deps: object = None) -> None:
        """Create the embedder.

        Args:
            config: The dimension.
            deps: Kernel-provided dependencies; unused, accepted so all embedders share one
                constructor signature.
        """
        self.config = config or HashingConfig()
        self._deps = deps
        self.dim = self.config.dim
        self.name = f"hashing-{self.dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts by feature hashing.

        Args:
            texts: The texts. A bare ``str`` is rejected (it would be embedded character by
                character).

        Returns:
            A float32 array of shape ``(len(texts), dim)``; row ``i`` belongs to ``texts[i]``.
            Rows have L2 norm 1, except for texts without any word character (``""``,
            ``"?!"``), whose row is all zeros rather than NaN. Empty input gives ``(0, dim)``.

        Raises:
            TypeError: ``texts`` is a ``str`` or holds a non-string.
        """
        items = checked_texts(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for row, text in enumerate(items):
            acc = self._accumulate(_words(text))
            norm = float(np.linalg.norm(acc))
            # A zero norm means no features (or, very rarely, signed collisions cancelling
            # exactly); return the zero row instead of dividing by zero.
            if norm > 0.0:
                out[row] = acc / norm
        return out

    def _accumulate(self, words: list[str]) -> np.ndarray:
        """The float64 sum of the signed, weighted feature buckets of ``words``.

        Every weight is a multiple of 0.5 and every partial sum a small one, so
        float64 adds them exactly: the sum is the same in any order (summing per word,
        then per bigram, gives the vector summing `_features` in its order gives).
        """
        # Per distinct word and bigram, times its count: counting runs in C, and a
        # passage of prose repeats a third of its words.
        buckets: list[int] = []
        values: list[float] = []
        for w, count in Counter(words).items():
            b, v = _word_buckets(w, self.dim)
            buckets.extend(b)
            values.extend(v if count == 1 else [x * count for x in v])
        for (a, b2), count in Counter(itertools.pairwise(words)).items():
            h = _feature_hash(f"b:{a} {b2}")
            buckets.append(h % self.dim)
            values.append((-_BIGRAM_WEIGHT if h >> 63 else _BIGRAM_WEIGHT) * count)
        if not buckets:
            return np.zeros(self.dim, dtype=np.float64)
        return np.bincount(np.asarray(buckets, dtype=np.intp),
                           weights=np.asarray(values, dtype=np.float64), minlength=self.dim)

