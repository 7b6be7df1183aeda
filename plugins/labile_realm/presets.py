"""The ``realm`` (offline, the default) and ``realm-llm`` presets, shaped like config files.

Ablations of ``realm`` are registered as well, so a benchmark run can
compare them side by side: ``realm-no-expand``, ``realm-no-recon``,
``realm-untyped`` (expansion treats every edge alike), ``realm-no-supersede``
(no validity: a newer value does not replace an older one) and ``realm-no-plan``
(the offline planner reads nothing from the question beyond keywords, node
types and time range: one plan, no anchors, no layer filters, the atom's mode).
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
            # A question that names one person is almost always answered by what that
            # person said (anchor_boost: +2.8 R@5 against 0.05 on the first two dev
            # conversations); γ = 0.75 lends a reply more of its question's words.
            "seed": [{"type": "realm.hybrid_match", "planner": "realm.seed_planner.offline",
                      "max_seed_plans": 3, "anchor_boost": 0.3, "context_weight": 0.75}],
            # Edges read as the node they lead to: embedding each (nearly unique)
            # offline edge description at query time was ~90 % of a query's cost,
            # for 0.7 R@5 (3 of 231 questions, not significant; see docs/realm.md).
            "expand": [{"type": "realm.subgraph_beam",
                        "controller": "realm.sufficiency_controller.offline",
                        "policy": "realm.expansion_policy.offline",
                        "edge_meaning": "target", "own_relevance": True}],
            "filter": [{"type": "realm.aggregate"}],
        },
        "reconsolidate": [{"type": "realm.reconsolidate",
                           "decider": "realm.reconsolidation_decider.offline"}],
    }


#: The offline planner with every question-reading feature off (the ``realm-no-plan`` ablation).
_PLAIN_PLANNING: dict[str, Any] = {"split_parts": False, "anchor_people": False,
                                   "layer_filters": False, "choose_mode": False}


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


def realm_untyped() -> dict[str, Any]:
    """Ablation: ``realm`` whose expansion ignores predicate types (every edge alike)."""
    table = realm()
    table["retrieval"]["expand"][0]["typed"] = False
    return table


def realm_no_plan() -> dict[str, Any]:
    """Ablation: ``realm`` with a planner that does not read the question's cues."""
    table = realm()
    seed = table["retrieval"]["seed"][0]
    seed.update(max_seed_plans=1, anchor_boost=0.0,
                planner={"type": "realm.seed_planner.offline", "planning": dict(_PLAIN_PLANNING)})
    table["retrieval"]["expand"][0]["policy"] = {"type": "realm.expansion_policy.offline",
                                                 "planning": dict(_PLAIN_PLANNING)}
    return table


def realm_no_supersede() -> dict[str, Any]:
    """Ablation: ``realm`` that neither records nor reads supersession (no ``valid_to``,
    no now / then ordering): what knowing which value is current is worth."""
    table = realm()
    table["extractor"]["supersession"] = False
    table["retrieval"]["filter"][0]["latest_first"] = False
    return table


#: name -> (summary, table). Tables, not callables, so tools that merge a
#: preset table directly (the benchmark runner) can use them.
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "realm": ("REALM cognitive graph, offline decisions (no LLM): the default", realm()),
    "realm-llm": ("REALM cognitive graph with LLM decisions (litellm)", realm_llm()),
    "realm-no-expand": ("ablation: realm without graph expansion", realm_no_expand()),
    "realm-no-recon": ("ablation: realm without reconsolidation", realm_no_recon()),
    "realm-untyped": ("ablation: realm whose expansion ignores predicate types",
                      realm_untyped()),
    "realm-no-plan": ("ablation: realm whose planner ignores the question's cues",
                      realm_no_plan()),
    "realm-no-supersede": ("ablation: realm without supersession (no current / past order)",
                           realm_no_supersede()),
}
