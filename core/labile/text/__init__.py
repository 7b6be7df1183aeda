"""The kernel's lexical core: tokens, stems and BM25, what the in-memory store needs.

`labile.text.tokenize` (word tokens, the stop list, the Porter2 stemmer) and
`labile.text.bm25` (a small BM25 index) stay in the kernel because the
reference store (`labile._memstore`) searches text with them, and because
every bundle must tokenise exactly as the store does. The rest of the offline
NLP toolkit (sentences, entities, keyphrases, time expressions) is the
library package `labile_text`, which builds on this one.
"""
