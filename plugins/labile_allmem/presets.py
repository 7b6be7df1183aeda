"""The All-Mem presets, shaped like config files.

* ``allmem``: the offline default. The paper's pipeline (visible-surface
  anchors, typed expansion, rerank, ATC) with every decision offline, plus our
  retrieval improvement: Stage 1 and Stage 3 fuse BM25 with cosine by
  reciprocal rank (BM25 weighted 2:1). Not in the paper; see ``docs/allmem.md``.
* ``allmem-paper``: the same pipeline with the paper's retrieval exactly:
  cosine anchors over the visible surface and cosine rerank.
* ``allmem-llm``: ``allmem`` where every LLM decision asks the model
  (descriptors, diagnosis, planning); needs an LLM client
  (``[llm] type = "litellm"``).
* ``allmem-no-consolidation`` and ``allmem-no-expand``: ablations of ``allmem``
  for the benchmark (no ATC; no stage 2).
"""

from __future__ import annotations

import copy
from typing import Any, Final

#: Weight of the BM25 ranking against the cosine ranking in the hybrid stages.
LEXICAL_WEIGHT: Final = 2.0
#: Neighbours per buffered unit for the offline diagnoser (the paper's k is 10).
OFFLINE_NEIGHBOURHOOD: Final = 20


def _paper() -> dict[str, Any]:
    return {
        "store": {"type": "lancedb"},
        "embedder": {"type": "minilm"},
        "llm": {"type": "none"},
        "extractor": {"type": "allmem.write"},
        "retrieval": {
            "seed": [{"type": "allmem.visible_anchor"}],
            "expand": [{"type": "allmem.typed_expand"}],
            "filter": [{"type": "allmem.rerank"}],
        },
        # The offline rules are arithmetic on stored vectors and word sets, so
        # they can afford twice the paper's neighbourhood (an LLM pays per unit).
        "consolidate": [{"type": "allmem.atc", "neighbourhood_k": OFFLINE_NEIGHBOURHOOD}],
    }


def _hybrid() -> dict[str, Any]:
    table = _paper()
    table["retrieval"]["seed"] = [
        {"type": "allmem.visible_anchor", "mode": "hybrid", "lexical_weight": LEXICAL_WEIGHT}
    ]
    table["retrieval"]["filter"] = [
        {"type": "allmem.rerank", "mode": "hybrid", "lexical_weight": LEXICAL_WEIGHT}
    ]
    return table


def _llm() -> dict[str, Any]:
    table = _hybrid()
    table["llm"] = {"type": "litellm"}
    table["extractor"] = {"type": "allmem.write", "descriptor": "allmem.descriptor.llm"}
    table["consolidate"] = [
        {"type": "allmem.atc", "diagnoser": "allmem.diagnoser.llm",
         "planner": "allmem.repair_planner.llm", "descriptor": "allmem.descriptor.llm"}
    ]
    return table


#: name -> (summary, zero-argument factory of the table)
def _no_consolidation() -> dict[str, Any]:
    table = _hybrid()
    table["consolidate"] = []
    return table


def _no_expansion() -> dict[str, Any]:
    table = _hybrid()
    table["retrieval"]["expand"] = []
    return table


PRESETS: Final[dict[str, tuple[str, Any]]] = {
    "allmem": ("All-Mem, offline: visible surface + typed expansion + ATC, BM25/cosine "
               "hybrid anchors and rerank", _hybrid),
    "allmem-paper": ("All-Mem, offline, the paper's cosine-only anchors and rerank", _paper),
    "allmem-llm": ("All-Mem with LLM descriptors, diagnosis and planning", _llm),
    "allmem-no-consolidation": ("ablation: allmem without ATC consolidation",
                                _no_consolidation),
    "allmem-no-expand": ("ablation: allmem without stage 2 (typed-link expansion)",
                         _no_expansion),
}


def preset_table(name: str) -> dict[str, Any]:
    """A fresh copy of preset ``name``'s table."""
    return copy.deepcopy(PRESETS[name][1]())
