"""Presets ``realm`` and ``realm-llm`` end to end, and config validation."""

from __future__ import annotations

from typing import Any

import pytest
from realm_helpers import (
    CHAT_1,
    CHAT_2,
    EDGE,
    EXPANSION,
    EXTRACT,
    NODE,
    SEED,
    SUFFICIENCY,
    TOPOLOGY,
    open_memory,
    reply,
    session,
)

from labile._errors import ConfigError
from labile._memory import Memory
from labile_llm import ScriptedLLM
from labile_realm.presets import realm, realm_llm
from labile_realm.retrieve.plan import STATE_ACTIVATED, STATE_PLANS


def test_preset_tables() -> None:
    table = realm()
    assert table["store"] == {"type": "lancedb"} and table["embedder"] == {"type": "minilm"}
    assert table["llm"] == {"type": "none"}
    assert table["extractor"]["type"] == "realm.construct"
    assert [s["type"] for s in table["retrieval"]["seed"]] == ["realm.hybrid_match"]
    assert [s["type"] for s in table["retrieval"]["expand"]] == ["realm.subgraph_beam"]
    assert [s["type"] for s in table["retrieval"]["filter"]] == ["realm.aggregate"]
    assert [s["type"] for s in table["reconsolidate"]] == ["realm.reconsolidate"]
    llm = realm_llm()
    assert llm["llm"] == {"type": "litellm"}
    assert llm["extractor"]["units"] == "realm.unit_extractor.llm"
    assert llm["extractor"]["decisions"] == "realm.write_decider.llm"
    assert llm["retrieval"]["seed"][0]["planner"] == "realm.seed_planner.llm"
    assert llm["reconsolidate"][0]["decider"] == "realm.reconsolidation_decider.llm"
    assert table["retrieval"]["expand"][0]["controller"] == "realm.sufficiency_controller.offline"


def test_ablation_presets() -> None:
    from labile_realm.presets import PRESETS

    assert PRESETS["realm-no-expand"][1]["retrieval"]["expand"] == []
    assert PRESETS["realm-no-recon"][1]["reconsolidate"] == []
    assert PRESETS["realm"][1] == realm()
    mem = open_memory("realm-no-expand")
    assert mem.expanders == []


def test_realm_is_the_default_preset() -> None:
    mem = Memory.open({"store": {"type": "memory"}, "embedder": {"type": "hashing"}})
    assert mem.config.preset == "realm"
    assert mem.config.extractor.type == "realm.construct"


def test_offline_pipeline_end_to_end() -> None:
    mem = open_memory()
    mem.add(session(1, CHAT_1), namespace="u")
    mem.add(session(2, CHAT_2), namespace="u")
    result = mem.search("What is Caroline researching?", namespace="u", k=5)
    assert 0 < len(result.hits) <= 10
    assert "D1:7" in [s for h in result.hits[:3] for s in h.node.sources]
    assert result.state[STATE_PLANS] and result.state[STATE_ACTIVATED].node_ids
    assert {t.atom for t in result.trace} == {"realm.hybrid_match", "realm.subgraph_beam",
                                             "realm.aggregate"}
    for h in result.hits:
        assert h.via.atom.startswith("realm.")
        if h.via.stage == "expand":
            assert h.via.path and h.via.edges
    reports = mem.feedback(result)
    assert reports[0].operator == "realm.reconsolidate"


def test_namespaces_do_not_mix() -> None:
    mem = open_memory()
    mem.add(session(1, CHAT_1), namespace="a")
    mem.add(session(2, CHAT_2), namespace="b")
    for h in mem.search("charity race", namespace="a", k=5).hits:
        assert all(s.startswith("D1:") for s in h.node.sources)


def test_composable_atoms() -> None:
    mem = open_memory(retrieval={
        "seed": [{"type": "realm.query_match"}, {"type": "realm.keywords_match"}],
        "expand": [{"type": "realm.path_search", "path_max_depth": 2}],
        "filter": [{"type": "realm.aggregate", "top_k": 3}],
    })
    mem.add(session(1, CHAT_1), namespace="u")
    result = mem.search("support group", namespace="u", k=3)
    assert len(result.hits) == 3


@pytest.mark.parametrize("bad", [
    {"retrieval": {"seed": [{"type": "realm.hybrid_match", "top_k": 0}]}},
    {"retrieval": {"seed": [{"type": "realm.hybrid_match", "colour": "red"}]}},
    {"retrieval": {"expand": [{"type": "realm.subgraph_beam", "include": ["causal/correlates"]}]}},
    {"retrieval": {"expand": [{"type": "realm.subgraph_beam", "max_frontier": 9}]}},
    {"reconsolidate": [{"type": "realm.reconsolidate", "w_min": 2.0}]},
    {"extractor": {"type": "realm.construct", "units": "magic"}},
])
def test_invalid_options_are_config_errors(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        open_memory(**bad)


@pytest.mark.parametrize("table", [
    {"retrieval": {"seed": [{"type": "realm.hybrid_match", "planner": "llm"}]}},
    {"retrieval": {"expand": [{"type": "realm.subgraph_beam", "controller": "llm"}]}},
    {"reconsolidate": [{"type": "realm.reconsolidate", "decider": "llm"}]},
])
def test_llm_components_refuse_to_run_without_an_llm(table: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="LLM"):
        open_memory(**table)


def _scripted() -> ScriptedLLM:
    units = reply({"units": [{"type": "event", "name": "talk", "description": "Ann talks",
                              "time": "none"}], "summary": "Ann and Bob talk."})
    return ScriptedLLM(rules=[
        (EXTRACT, units),
        (NODE, reply({"operation": "add", "related": []})),
        (EDGE, reply({"edges": []})),
        (SEED, reply({"plans": [{"mode": "hybrid_match", "query": "talk", "keywords": ["talk"],
                                 "allowed_node_types": ["event"], "time_range": None}]})),
        (SUFFICIENCY, reply({"is_enough": False, "nodes_to_expand": [1]})),
        (EXPANSION, reply({"actions": []})),
        (TOPOLOGY, reply({"topic": "talk", "gold_supporting_node_ids": [1],
                          "supporting_associated_node_ids": [], "misleading_node_ids": [],
                          "unrelated_node_ids": [], "operations": []})),
    ])


def test_realm_llm_preset_end_to_end_with_a_scripted_model() -> None:
    llm = _scripted()
    # one extraction per turn and a node decision for every unit: the preset's cost cuts
    # (batches, the similarity gate) are tested in tests/llm/test_llm_realm_batch.py
    mem = open_memory("realm-llm", llm=llm, extractor={
        "type": "realm.construct",
        "units": {"type": "realm.unit_extractor.llm", "batch_turns": 1},
        "decisions": {"type": "realm.write_decider.llm", "min_similarity": 0.0}})
    # (a pure small-talk turn would never reach the model: both turns say something)
    mem.add(session(1, [("Ann", "Hello Bob, I started painting."),
                        ("Bob", "Nice! I bought a bike.")]),
            namespace="u")
    turns = 2
    construct_calls = len(llm.calls)
    assert construct_calls >= turns  # at least one extraction per turn
    result = mem.search("What did Ann talk about?", namespace="u", k=5)
    assert result.hits
    mem.feedback(result, answer="painting")
    ops = {c.operation for c in llm.calls}
    assert {"realm.extract", "realm.node_decision", "realm.seed_plan", "realm.sufficiency",
            "realm.reconsolidate"} <= ops
    usage = mem.stats("u")["llm"]
    assert usage  # every scripted call is metered


def test_offline_and_llm_spellings_stay_valid_and_resolve_to_the_new_names() -> None:
    """A config written with ``"offline"`` / ``"llm"`` builds the registered
    components, and the resolved table (what ``labile check`` prints) names them."""
    old = {"extractor": {"type": "realm.construct", "units": "llm", "decisions": "offline"},
           "retrieval": {"seed": [{"type": "realm.hybrid_match", "planner": "llm"}],
                         "expand": [{"type": "realm.subgraph_beam", "controller": "offline",
                                     "policy": "llm"}]},
           "reconsolidate": [{"type": "realm.reconsolidate", "decider": "offline"}]}
    mem = open_memory(llm=_scripted(), **old)
    written = mem.config.to_table()
    # a component with options resolves to a table naming its type
    assert written["extractor"]["units"]["type"] == "realm.unit_extractor.llm"
    assert written["extractor"]["decisions"]["type"] == "realm.write_decider.offline"
    assert written["retrieval"]["seed"][0]["planner"]["type"] == "realm.seed_planner.llm"
    expand = written["retrieval"]["expand"][0]
    assert expand["controller"]["type"] == "realm.sufficiency_controller.offline"
    assert expand["policy"] == "realm.expansion_policy.llm"  # no options: a bare name
    assert written["reconsolidate"][0]["decider"]["type"] == \
        "realm.reconsolidation_decider.offline"
    assert type(mem.extractor.units).__name__ == "LLMUnitExtractor"
    assert type(mem.extractor.decider).__name__ == "OfflineWriteDecider"


def test_decision_kinds_are_declared_with_both_implementations() -> None:
    """Every REALM decision kind lists its offline and LLM components; only the
    LLM one needs a model."""
    registries = open_memory().registries
    kinds = [k.name for k in registries.kinds.declared_by_plugins() if k.name.startswith("realm.")]
    assert kinds == ["realm.unit_extractor", "realm.write_decider", "realm.seed_planner",
                     "realm.sufficiency_controller", "realm.expansion_policy",
                     "realm.reconsolidation_decider"]
    for kind in kinds:
        assert registries[kind].names() == [f"{kind}.llm", f"{kind}.offline"]
        assert registries[kind].get("llm").needs == {"llm"}
        assert not registries[kind].get("offline").needs
