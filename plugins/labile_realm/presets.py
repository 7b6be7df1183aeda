"""The ``realm`` (offline, the default) and ``realm-llm`` presets, shaped like config files.

Two ablations of ``realm`` are registered as well, so a benchmark run can
compare them side by side: ``realm-no-expand`` and ``realm-no-recon``.
"""

from __future__ import annotations

from typing import Any


def realm() -> dict[str, Any]:
    """REALM with every decision made offline (rules, embeddings, lexical signals)."""
    return {
        "store": {"type": "lancedb"},
        "embedder": {"type": "minilm"},
        "llm": {"type": "none"},
        "extractor": {"type": "realm.construct", "units": "realm.unit_extractor.offline",
                      "decisions": "realm.write_decider.offline"},
        "retrieval": {
            "seed": [{"type": "realm.hybrid_match", "planner": "realm.seed_planner.offline"}],
            "expand": [{"type": "realm.subgraph_beam",
                        "controller": "realm.sufficiency_controller.offline",
                        "policy": "realm.expansion_policy.offline"}],
            "filter": [{"type": "realm.aggregate"}],
        },
        "reconsolidate": [{"type": "realm.reconsolidate",
                           "decider": "realm.reconsolidation_decider.offline"}],
    }


def realm_llm() -> dict[str, Any]:
    """REALM with every agentic decision made by the LLM (litellm), as in the paper."""
    return {
        "store": {"type": "lancedb"},
        "embedder": {"type": "minilm"},
        "llm": {"type": "litellm"},
        "extractor": {"type": "realm.construct", "units": "realm.unit_extractor.llm",
                      "decisions": "realm.write_decider.llm"},
        "retrieval": {
            "seed": [{"type": "realm.hybrid_match", "planner": "realm.seed_planner.llm",
                      "mode": "plan"}],
            "expand": [{"type": "realm.subgraph_beam",
                        "controller": "realm.sufficiency_controller.llm",
                        "policy": "realm.expansion_policy.llm"}],
            "filter": [{"type": "realm.aggregate"}],
        },
        "reconsolidate": [{"type": "realm.reconsolidate",
                           "decider": "realm.reconsolidation_decider.llm"}],
    }


def realm_no_expand() -> dict[str, Any]:
    """Ablation: ``realm`` without graph expansion (seeding + aggregation only)."""
    table = realm()
    table["retrieval"]["expand"] = []
    return table


def realm_no_recon() -> dict[str, Any]:
    """Ablation: ``realm`` without reconsolidation."""
    table = realm()
    table["reconsolidate"] = []
    return table


#: name -> (summary, table). Tables, not callables, so tools that merge a
#: preset table directly (the benchmark runner) can use them.
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "realm": ("REALM cognitive graph, offline decisions (no LLM): the default", realm()),
    "realm-llm": ("REALM cognitive graph with LLM decisions (litellm)", realm_llm()),
    "realm-no-expand": ("ablation: realm without graph expansion", realm_no_expand()),
    "realm-no-recon": ("ablation: realm without reconsolidation", realm_no_recon()),
}
