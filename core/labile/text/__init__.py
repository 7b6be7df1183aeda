"""Offline text toolkit shared by the REALM and All-Mem bundles.

Dependency-free (standard library, attrs and numpy only) lexical building
blocks: tokenisation and Porter2 stemming, grounded sentence spans, extractive
keyphrases and summaries, heuristic named entities and filler detection,
resolution of relative time expressions, and a small BM25 index. Every
function is deterministic.
"""

from __future__ import annotations

from labile.text.bm25 import BM25Index
from labile.text.entities import Entity, is_filler, named_entities, normalize_name
from labile.text.keywords import keyphrases, summarize
from labile.text.sentences import split_sentences
from labile.text.timeparse import TimeMention, parse_session_datetime, resolve_time_expressions
from labile.text.tokenize import STOPWORDS, content_words, is_stopword, stem, terms, words

__all__ = [
    "STOPWORDS",
    "BM25Index",
    "Entity",
    "TimeMention",
    "content_words",
    "is_filler",
    "is_stopword",
    "keyphrases",
    "named_entities",
    "normalize_name",
    "parse_session_datetime",
    "resolve_time_expressions",
    "split_sentences",
    "stem",
    "summarize",
    "terms",
    "words",
]
