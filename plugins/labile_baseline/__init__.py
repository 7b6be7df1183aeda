"""Baseline pipelines: one node per observation, no graph (``dense``, ``bm25``, ``hybrid``,
``context``).

They are the floor every method bundle must beat, and they exercise the
preset and config machinery end to end.
"""

from __future__ import annotations

from labile.plugin import NodeKind, Register, hookimpl


@hookimpl
def labile_register_node_kinds(register: Register) -> None:
    """``baseline.turn``: one observation, verbatim, with its date and speaker."""
    register("baseline.turn", NodeKind(name="baseline.turn", fields=("speaker", "session")),
             summary="one observation as a dated line of text")


@hookimpl
def labile_register_extractors(register: Register) -> None:
    """``baseline.turns``: one node per observation; ``baseline.context_turns``: the same,
    indexed with the turn before it."""
    from labile_baseline.context import ContextTurnExtractor, ContextTurnExtractorConfig
    from labile_baseline.turns import TurnExtractor, TurnExtractorConfig

    register("baseline.turns", TurnExtractor, config=TurnExtractorConfig,
             summary="one node per observation: '[date] speaker: text', embedded as is")
    register("baseline.context_turns", ContextTurnExtractor, config=ContextTurnExtractorConfig,
             summary="one node per observation, full-text indexed with the turn before it")


@hookimpl
def labile_register_seeders(register: Register) -> None:
    """Dense, BM25, RRF-hybrid and z-score ``context`` seeders over any store."""
    from labile_baseline import seeders as s
    from labile_baseline.context import ContextSeeder, ContextSeederConfig

    register("baseline.dense", s.DenseSeeder, config=s.DenseSeederConfig,
             summary="cosine similarity of the query embedding")
    register("baseline.bm25", s.BM25Seeder, config=s.BM25SeederConfig,
             summary="the store's BM25 full-text search")
    register("baseline.hybrid", s.HybridSeeder, config=s.HybridSeederConfig,
             summary="reciprocal-rank fusion of dense and BM25 (k = 60)")
    register("baseline.context", ContextSeeder, config=ContextSeederConfig,
             summary="z-score fusion of BM25 and 0.5 x cosine, boost for the named speaker")


@hookimpl
def labile_register_presets(register: Register) -> None:
    """``dense``, ``bm25``, ``hybrid`` and ``context`` on the embedded default store."""
    from labile_baseline.presets import PRESETS

    for name, (summary, table) in PRESETS.items():
        register(name, table, summary=summary)


@hookimpl
def labile_register_forget_handlers(register: Register) -> None:
    """``baseline.forget``: turns that quoted a forgotten turn as context are rewritten."""
    from labile_baseline.forget import forget_baseline

    register("baseline.forget", forget_baseline,
             summary="rewrite the context of turns that quoted a forgotten turn")
