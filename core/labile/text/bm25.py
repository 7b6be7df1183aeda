"""A small in-memory Okapi BM25 index over :func:`labile.text.tokenize.terms`.

Used as the lexical half of hybrid seeding (REALM ``keywords_match``) and as a
lexical signal in the offline decision rules. It is rebuilt from storage on
start-up, so it keeps no state on disk.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable

from labile.text.tokenize import terms

__all__ = ["BM25Index"]


class BM25Index:
    """Okapi BM25 with Lucene's idf, over stemmed content words.

    score(d, q) = sum over distinct query terms t present in d of
    ``idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avgdl))`` with
    ``idf(t) = log(1 + (N - df + 0.5) / (df + 0.5))`` (always positive), where
    ``len(d)`` counts the document's terms and ``avgdl`` is the mean over all
    indexed documents. A query term repeated in the query counts once.

    Storage is an inverted index ``term -> {doc_id: tf}`` plus per-document
    term counts (to support removal) and a running total of document lengths
    (so ``avgdl`` costs nothing per query). A query touches only the postings
    of its own terms.
    """

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        """Create an empty index.

        Args:
            k1: Term-frequency saturation (1.5 by default).
            b: Length normalisation strength in [0, 1] (0.75 by default).
        """
        self.k1 = k1
        self.b = b
        self._postings: dict[str, dict[str, int]] = {}
        self._doc_terms: dict[str, Counter[str]] = {}
        self._doc_len: dict[str, int] = {}
        self._total_len = 0

    def __len__(self) -> int:
        """Number of indexed documents."""
        return len(self._doc_len)

    def __contains__(self, doc_id: object) -> bool:
        """Whether ``doc_id`` is indexed."""
        return doc_id in self._doc_len

    def add(self, doc_id: str, text: str) -> None:
        """Index ``text`` under ``doc_id``, replacing any previous text for that id.

        Documents without any term are still counted (in ``len`` and ``avgdl``)
        but can never match.

        Args:
            doc_id: Caller's identifier.
            text: The document text.
        """
        if doc_id in self._doc_len:
            self.remove(doc_id)
        counts = Counter(terms(text))
        self._doc_terms[doc_id] = counts
        length = sum(counts.values())
        self._doc_len[doc_id] = length
        self._total_len += length
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[doc_id] = tf

    def remove(self, doc_id: str) -> None:
        """Drop ``doc_id`` from the index; unknown ids are ignored.

        Args:
            doc_id: Caller's identifier.
        """
        counts = self._doc_terms.pop(doc_id, None)
        if counts is None:
            return
        self._total_len -= self._doc_len.pop(doc_id)
        for term in counts:
            posting = self._postings[term]
            del posting[doc_id]
            if not posting:
                del self._postings[term]

    def search(
        self,
        query: str,
        k: int,
        *,
        allowed: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        """Return the ``k`` best documents for ``query``.

        Args:
            query: Free text; it goes through the same :func:`terms` pipeline.
            k: Maximum number of results (``k <= 0`` gives ``[]``).
            allowed: Optional predicate; documents for which it is false are
                skipped before ranking (e.g. a node-kind or visibility filter).

        Returns:
            ``(doc_id, score)`` pairs with score > 0, sorted by score
            descending, then by id.
        """
        n_docs = len(self._doc_len)
        if k <= 0 or n_docs == 0:
            return []
        avgdl = self._total_len / n_docs or 1.0
        k1, b = self.k1, self.b
        scores: dict[str, float] = {}
        rejected: set[str] = set()
        for term in dict.fromkeys(terms(query)):
            posting = self._postings.get(term)
            if not posting:
                continue
            df = len(posting)
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            for doc_id, tf in posting.items():
                if allowed is not None and doc_id not in scores:
                    if doc_id in rejected:
                        continue
                    if not allowed(doc_id):
                        rejected.add(doc_id)
                        continue
                norm = k1 * (1.0 - b + b * self._doc_len[doc_id] / avgdl)
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * (k1 + 1.0) / (tf + norm)
        best = heapq.nsmallest(k, scores.items(), key=lambda item: (-item[1], item[0]))
        return [(doc_id, score) for doc_id, score in best if score > 0.0]
