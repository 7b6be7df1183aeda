"""Benchmark data and metrics layer (SPEC §5).

Pure functions and immutable records, no memory or LLM involved:

* :mod:`labile.bench.locomo` loads the LoCoMo layout (``locomo10.json``) into
  :class:`~labile.bench.locomo.Conversation` records, cleaning the upstream
  ``evidence`` ids with explicit, counted rules.
* :mod:`labile.bench.longmemeval` loads the LongMemEval_S layout and provides
  session-level retrieval metrics.
* :mod:`labile.bench.metrics` holds the turn-level retrieval metrics
  (Recall@k, NDCG@k, Hit@k), their per-category aggregation, the local QA
  metrics (token F1, BLEU-1, ROUGE-L) and a percentile helper for latency.

The benchmark runner that drives a memory lives elsewhere and builds on these.
"""
