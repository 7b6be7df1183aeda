"""The offline NLP toolkit that the bundles share.

A library, not a plugin: it registers nothing. The REALM, All-Mem and
benchmark bundles import it the way a third-party bundle would depend on a
helper package. It builds on the kernel's lexical core
(`labile.text.tokenize`: tokens, stop words, stems), and is dependency-free
(standard library, attrs) and deterministic:

* `labile_text.sentences`: grounded sentence spans;
* `labile_text.entities`: heuristic named entities and small-talk detection;
* `labile_text.names`: whether a word is an acronym, or a name addresses someone;
* `labile_text.keywords`: extractive keyphrases and summaries;
* `labile_text.dates` / `labile_text.timeparse`: calendar words, session
  stamps, and relative time expressions resolved to intervals;
* `labile_text.render`: how an observation reads as one line of text.
"""

from __future__ import annotations

from labile_text.dates import parse_session_datetime
from labile_text.entities import Entity, is_filler, named_entities, normalize_name
from labile_text.keywords import keyphrases, summarize
from labile_text.sentences import split_sentences
from labile_text.timeparse import TimeMention, resolve_time_expressions

__all__ = [
    "Entity",
    "TimeMention",
    "is_filler",
    "keyphrases",
    "named_entities",
    "normalize_name",
    "parse_session_datetime",
    "resolve_time_expressions",
    "split_sentences",
    "summarize",
]
