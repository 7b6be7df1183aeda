"""The no-graph ``context`` baseline: lexical context of the turn before, z-score fusion.

It is the bar the graph presets must clear. Two small ideas, no graph:

* ``baseline.context_turns`` writes one node per observation whose full-text
  index also holds the observation before it in the same namespace (kept in
  ``description``, so ``content`` stays the turn itself): a reply ("Yes, twice
  last year!") is found by the words of the question it answers.
* ``baseline.context`` scores the union of the BM25 and dense candidate lists
  by ``z(BM25) + dense_weight · z(cosine)`` (z-scores over that union; a node
  missing from the BM25 list has BM25 score 0, which is what BM25 gives a text
  sharing no query term), plus ``speaker_boost`` when the node's speaker is
  named in the question.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import attrs
from attrs.validators import ge

from labile.plugin import (
    AddReport,
    Deps,
    Hit,
    Node,
    Observation,
    Query,
    Reach,
    bounded,
    cosine,
    zscores,
)
from labile.text.tokenize import words
from labile_text.render import turn_text

__all__ = ["ContextSeeder", "ContextSeederConfig", "ContextTurnExtractor",
           "ContextTurnExtractorConfig"]


@attrs.frozen(kw_only=True)
class ContextTurnExtractorConfig:
    """Options of ``baseline.context_turns``.

    Attributes:
        dated: Prefix each turn with its date (``[<date>] <speaker>: <text>``).
        context_turns: How many preceding observations join a turn's index text.
    """

    dated: bool = True
    context_turns: int = attrs.field(default=1, validator=bounded(0, 1000))


class ContextTurnExtractor:
    """One ``baseline.turn`` node per observation; the turns before it in its description.

    The turns before are those of the same namespace added earlier through this
    extractor (in this process). Only the text to index changes; the embedding
    is the turn's own, as in ``baseline.turns``.
    """

    def __init__(self, config: ContextTurnExtractorConfig, deps: Deps) -> None:
        self._config, self._deps = config, deps
        self._recent: dict[str, list[str]] = {}
        self._before: dict[str, list[str] | None] = {}
        self._lock = threading.Lock()

    def ingest(
        self, namespace: str, observations: Sequence[Observation], report: AddReport
    ) -> None:
        """Write the nodes for ``observations`` (one embedding call per batch)."""
        with self._lock:
            before = self._recent.get(namespace)
            self._before[namespace] = list(before) if before is not None else None
        texts = [turn_text(o, dated=self._config.dated) for o in observations]
        plain = [turn_text(o, dated=False) for o in observations]
        vectors = self._deps.embedder.embed(texts)
        n = self._config.context_turns
        with self._lock:
            recent = self._recent.setdefault(namespace, [])
            contexts = []
            for line in plain:
                contexts.append(" ".join(recent[-n:]) if n else "")
                recent.append(line)
            del recent[:-max(n, 1)]
        nodes = [
            Node(
                id=obs.id, kind="baseline.turn", content=text, description=context,
                sources=(obs.id,), time_start=obs.timestamp, created_at=obs.timestamp,
                updated_at=obs.timestamp, embedding=vec,
                attrs={"speaker": obs.speaker, "session": obs.session},
            )
            for obs, text, context, vec in zip(observations, texts, contexts, vectors,
                                               strict=True)
        ]
        self._deps.store.upsert_nodes(namespace, nodes)
        report.nodes_written += len(nodes)

    def on_rollback(self, namespace: str) -> None:
        """The last batch into ``namespace`` rolled back: its turns leave the context."""
        with self._lock:
            before = self._before.pop(namespace, None)
            self._recent.pop(namespace, None)
            if before is not None:
                self._recent[namespace] = before


@attrs.frozen(kw_only=True)
class ContextSeederConfig:
    """Options of ``baseline.context``.

    Attributes:
        candidates: Hits each list (BM25, dense) contributes before fusion
            (at least the query's ``k``).
        dense_weight: Weight of the cosine z-score (BM25's is 1).
        speaker_boost: Added (in z units) to a node whose speaker the question names.
    """

    candidates: int = attrs.field(default=50, validator=bounded(1, 100_000))
    dense_weight: float = attrs.field(default=0.5, validator=ge(0.0))
    speaker_boost: float = attrs.field(default=0.3, validator=ge(0.0))


def speaker_named(node: Node, question_words: set[str]) -> bool:
    """Whether every word of the node's speaker name occurs in the question."""
    speaker = node.attrs.get("speaker")
    if not isinstance(speaker, str) or not speaker:
        return False
    name = set(words(speaker))
    return bool(name) and name <= question_words


class ContextSeeder:
    """BM25 and cosine fused by z-score, with a boost for the named speaker."""

    def __init__(self, config: ContextSeederConfig, deps: Deps) -> None:
        self._config, self._store = config, deps.store

    def seed(self, query: Query, state: dict[str, Any]) -> list[Hit]:
        """Return the fused ranking of the candidates, best first."""
        del state
        if query.vector is None:
            raise ValueError("baseline.context needs the query's embedding (no embedder?)")
        n = max(self._config.candidates, query.k)
        lexical = {node.id: (node, s) for node, s in
                   self._store.text_search(query.namespace, query.text, n)}
        nodes: dict[str, Node] = {i: node for i, (node, _) in lexical.items()}
        for node, _s in self._store.vector_search(query.namespace, query.vector, n):
            nodes.setdefault(node.id, node)
        if not nodes:
            return []
        ids = sorted(nodes)
        sims = [cosine(query.vector, nodes[i].embedding) for i in ids]
        bm25 = [lexical[i][1] if i in lexical else 0.0 for i in ids]
        asked = set(words(query.text))
        hits = []
        for i, zb, zd, sim, raw in zip(ids, zscores(bm25), zscores(sims), sims, bm25,
                                       strict=True):
            boost = self._config.speaker_boost if speaker_named(nodes[i], asked) else 0.0
            score = zb + self._config.dense_weight * zd + boost
            hits.append(Hit(node=nodes[i], score=score, via=Reach(atom="baseline.context"),
                            scores={"bm25": raw, "cosine": sim, "speaker": boost}))
        hits.sort(key=lambda h: (-h.score, h.node.id))
        return hits

