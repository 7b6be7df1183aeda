"""How hybrid seeding fuses its two signals, as an object that can score any node.

A `Fusion` is fitted on one plan's candidates (the union of the dense and the
lexical lists) and then scores a node from its raw BM25 score (0 when the
lexical list did not hold it: BM25 gives 0 to a text sharing no query term)
and its cosine with the query:

* ``"weighted"``: ``w_e·norm(cos) + w_k·norm(BM25)``, each signal normalised
  over the candidates (by the best score, or min–max);
* ``"zscore"``: ``w_k·z(BM25) + w_e·z(cos)`` with the candidates' means and
  standard deviations, squashed into (0, 1) by a logistic so that downstream
  scores (eq. 8 and 9) keep their scale.

Both add ``anchor_boost`` for a node spoken by one of the question's people.

Keeping the fitted fusion (in the search state, `STATE_RELEVANCE`) lets
expansion score a node it reaches on the same scale as the seeds, so a node
found through the graph competes with the seeds on its own relevance instead
of on an edge description's similarity to the question.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs
import numpy as np

from labile.plugin import Node, cosine
from labile.text.tokenize import words

__all__ = ["STATE_RELEVANCE", "Fusion", "anchor_words", "spoken_by"]

#: Key of the whole question's fitted `Fusion` in the search state.
STATE_RELEVANCE = "realm.relevance"


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    arr = np.asarray(values, dtype=np.float64)
    if not arr.size:
        return 0.0, 0.0
    return float(arr.mean()), float(arr.std())


@attrs.frozen(kw_only=True)
class Fusion:
    """One plan's fitted fusion of BM25 and cosine (see the module docstring).

    Attributes:
        method: ``"weighted"`` or ``"zscore"``.
        vector: The plan's query embedding (``None``: the dense signal is 0).
        lexical: Raw BM25 score per node id, for the lexical candidates.
        keyword_weight: w_k.
        embedding_weight: w_e.
        kw_range: ``(low, high)`` BM25 over the candidates (weighted mode).
        sim_range: ``(low, high)`` cosine over the candidates (weighted mode).
        normalise_embedding: ``"max"``, ``"minmax"`` or ``"none"`` (weighted mode).
        kw_stats: ``(mean, std)`` of BM25 over the candidates (z-score mode).
        sim_stats: ``(mean, std)`` of the cosine over the candidates (z-score mode).
        anchors: Word sets of the question's people.
        anchor_boost: Added for a node one of them spoke.
    """

    method: Literal["weighted", "zscore"]
    vector: np.ndarray | None
    lexical: Mapping[str, float]
    keyword_weight: float
    embedding_weight: float
    kw_range: tuple[float, float] = (0.0, 0.0)
    sim_range: tuple[float, float] = (0.0, 0.0)
    normalise_embedding: str = "max"
    kw_stats: tuple[float, float] = (0.0, 0.0)
    sim_stats: tuple[float, float] = (0.0, 0.0)
    anchors: tuple[frozenset[str], ...] = ()
    anchor_boost: float = 0.0

    @classmethod
    def fit(cls, *, method: Literal["weighted", "zscore"], vector: np.ndarray | None,
            lexical: Mapping[str, float], sims: Mapping[str, float], keyword_weight: float,
            embedding_weight: float, normalise_keywords: str, normalise_embedding: str,
            anchors: Sequence[set[str]], anchor_boost: float) -> Fusion:
        """Fit on the candidates: ``sims`` holds every candidate's cosine, ``lexical``
        the BM25 of those the lexical list held."""
        raw_kw = [lexical.get(i, 0.0) for i in sims]
        raw_sim = list(sims.values())
        top_kw = max(lexical.values(), default=0.0)
        low_kw = min(lexical.values()) if normalise_keywords == "minmax" and len(lexical) > 1 \
            else 0.0
        return cls(
            method=method, vector=vector, lexical=dict(lexical),
            keyword_weight=keyword_weight, embedding_weight=embedding_weight,
            kw_range=(low_kw, top_kw),
            sim_range=(min(raw_sim, default=0.0), max(raw_sim, default=0.0)),
            normalise_embedding=normalise_embedding,
            kw_stats=_mean_std(raw_kw), sim_stats=_mean_std(raw_sim),
            anchors=tuple(frozenset(a) for a in anchors), anchor_boost=anchor_boost,
        )

    def keyword_score(self, raw: float) -> float:
        """BM25 put on [0, 1] by the candidates' range (weighted mode's keyword signal)."""
        low, top = self.kw_range
        span = top - low
        return (raw - low) / span if span > 0 else (1.0 if raw > 0 else 0.0)

    def similarity(self, node: Node) -> float:
        """The node's cosine with the plan's query (0 without a vector)."""
        return cosine(self.vector, node.embedding) if self.vector is not None else 0.0

    def score(self, node: Node, sim: float | None = None) -> tuple[float, dict[str, float]]:
        """The node's fused score and its parts (``sim``: its cosine, if known)."""
        raw_kw = self.lexical.get(node.id, 0.0)
        if sim is None:
            sim = self.similarity(node)
        parts: dict[str, float] = {"embedding": sim}
        if self.method == "zscore":
            z = (self.keyword_weight * _z(raw_kw, self.kw_stats)
                 + self.embedding_weight * _z(sim, self.sim_stats))
            parts.update(keyword=raw_kw, z=z)
            if self.anchor_boost and spoken_by(node, self.anchors):
                z += self.anchor_boost
                parts["anchor"] = self.anchor_boost
            return 1.0 / (1.0 + math.exp(-z)), parts
        low_sim, top_sim = self.sim_range
        emb = sim
        if self.normalise_embedding == "max" and top_sim > 0:
            emb = sim / top_sim
        elif self.normalise_embedding == "minmax" and top_sim > low_sim:
            emb = (sim - low_sim) / (top_sim - low_sim)
        kw = self.keyword_score(raw_kw) if node.id in self.lexical else 0.0
        score = self.embedding_weight * max(emb, 0.0) + self.keyword_weight * kw
        parts["keyword"] = kw
        if self.anchor_boost and spoken_by(node, self.anchors):
            score += self.anchor_boost
            parts["anchor"] = self.anchor_boost
        return score, parts


def _z(value: float, stats: tuple[float, float]) -> float:
    mean, std = stats
    return 0.0 if std <= 1e-12 else (value - mean) / std


def anchor_words(names: Sequence[str]) -> list[set[str]]:
    """The word sets of the named people (empty names left out)."""
    return [w for w in (set(words(n)) for n in names) if w]


def spoken_by(node: Node, anchors: Sequence[Any]) -> bool:
    """Whether the node's speaker is one of the anchors (every word of a name matches)."""
    speaker = node.attrs.get("speaker")
    if not isinstance(speaker, str) or not speaker:
        return False
    said = _speaker_words(speaker)
    return any(a <= said for a in anchors)


@functools.lru_cache(maxsize=4096)
def _speaker_words(speaker: str) -> frozenset[str]:
    """A speaker name's words: a search asks this of hundreds of nodes, of few speakers."""
    return frozenset(words(speaker))
