"""Options that moved from REALM's and All-Mem's hosts into their decisions: configs and
stores written before the move keep working."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from labile import ConfigError, Memory
from labile._config import resolve
from labile._recorded import RECORD
from labile.plugin import build_registries

HASHING = {"embedder": {"type": "hashing"}, "store": {"type": "memory"}}


def _resolved(table: dict[str, Any]) -> Any:
    return resolve({**HASHING, **table}, build_registries())


def test_realm_keys_written_on_the_host_configure_its_decisions() -> None:
    config = _resolved({"preset": "realm", "extractor": {
        "type": "realm.construct", "thresholds": {"related_similarity": 0.5},
        "summary_words": 100, "extraction": {"max_facts": 1}}})
    construct = config.single("extractor").config
    assert construct.decisions.config.thresholds.related_similarity == 0.5
    assert construct.units.config.summary_words == 100
    assert construct.units.config.extraction.max_facts == 1


def test_realm_retrieval_keys_written_on_the_host_configure_its_decisions() -> None:
    config = _resolved({"preset": "realm", "retrieval": {
        "seed": [{"type": "realm.hybrid_match", "planning": {"split_parts": False}}],
        "expand": [{"type": "realm.subgraph_beam", "evidence_k": 7, "max_frontier": 2,
                    "planning": {"layer_filters": False}}]},
        "reconsolidate": [{"type": "realm.reconsolidate", "key_rank": 2,
                           "weak_confidence": 0.25}]})
    (seed,) = config.listed("seeder")
    assert seed.config.planner.config.planning.split_parts is False
    (expand,) = config.listed("expander")
    assert (expand.config.controller.config.evidence_k,
            expand.config.controller.config.max_frontier) == (7, 2)
    assert expand.config.policy.config.planning.layer_filters is False
    (recon,) = config.listed("reconsolidator")
    assert recon.config.decider.config.key_rank == 2
    # still the operator's option (path credit) as well as the decider's
    assert recon.config.weak_confidence == recon.config.decider.config.weak_confidence == 0.25


def test_allmem_keys_written_on_the_host_configure_its_decisions() -> None:
    config = _resolved({"preset": "allmem", "llm": {"type": "scripted"},
                        "extractor": {"type": "allmem.write", "offline": {"keywords": 3}},
                        "consolidate": [{"type": "allmem.atc", "diagnoser": "llm",
                                         "workers": 2, "offline": {"merge_cosine": 0.8},
                                         "descriptor_offline": {"keywords": 4}}]})
    assert config.single("extractor").config.descriptor.config.offline.keywords == 3
    (atc,) = config.listed("consolidator")
    assert atc.config.diagnoser.config.workers == 2
    assert atc.config.diagnoser.config.offline.merge_cosine == 0.8
    assert atc.config.planner.config.offline.merge_cosine == 0.8
    assert atc.config.descriptor.config.offline.keywords == 4


def test_a_key_the_chosen_decision_does_not_take_is_left_out_as_before() -> None:
    """``planning`` never reached the LLM expansion policy; it still does not, quietly."""
    config = _resolved({"preset": "realm", "llm": {"type": "scripted"}, "retrieval": {
        "expand": [{"type": "realm.subgraph_beam", "policy": "llm",
                    "planning": {"layer_filters": False}}]}})
    (expand,) = config.listed("expander")
    assert expand.config.policy.type == "realm.expansion_policy.llm"


def test_a_key_written_in_both_places_is_refused_naming_its_new_place() -> None:
    with pytest.raises(ConfigError) as info:
        _resolved({"preset": "realm", "extractor": {
            "type": "realm.construct", "thresholds": {"related_similarity": 0.5},
            "decisions": {"type": "realm.write_decider.offline", "thresholds": {}}}})
    msg = str(info.value)
    assert "'thresholds' is given twice" in msg and "@ $.extractor" in msg
    assert "decisions = {type = 'realm.write_decider.offline', thresholds = …}" in msg


def test_an_invalid_moved_value_names_its_new_path() -> None:
    with pytest.raises(ConfigError, match=r"\$\.retrieval\.expand\[0\]\.controller"):
        _resolved({"preset": "realm", "retrieval": {
            "expand": [{"type": "realm.subgraph_beam", "max_frontier": 9}]}})


def _as_written_before(table: dict[str, Any], moves: dict[str, dict[str, str]],
                       extra: dict[str, Any]) -> None:
    """Put the options of ``table``'s nested components back on the host, as an older
    build wrote them (``{field: {option: host key}}``), leaving the bare names."""
    for field, keys in moves.items():
        nested = table[field]
        for option, key in keys.items():
            table[key] = nested.pop(option)
        table[field] = nested["type"]
    table.update(extra)


@pytest.mark.parametrize(("preset", "section", "kind", "moves", "extra"), [
    ("realm", "extractor", "extractor",
     {"units": {"extraction": "extraction", "summary_words": "summary_words"},
      "decisions": {"thresholds": "thresholds"}}, {"context_turns": 6}),
    ("allmem", "consolidate", "consolidator",
     {"diagnoser": {"offline": "offline"}, "planner": {"offline": "offline"},
      "descriptor": {"offline": "descriptor_offline"}}, {"workers": 4}),
])
def test_a_store_recorded_before_the_options_moved_opens_with_its_preset(
    tmp_path: Path, preset: str, section: str, kind: str, moves: dict[str, dict[str, str]],
    extra: dict[str, Any],
) -> None:
    path = tmp_path / "s"
    table = {"preset": preset, "embedder": {"type": "hashing"}}
    with Memory.open(table, path=path):
        pass
    record = json.loads((path / RECORD).read_text())
    for written in (record["pipeline"][section], record["shape"][kind]):
        _as_written_before(written if isinstance(written, dict) else written[0], moves, extra)
    (path / RECORD).write_text(json.dumps(record))
    with Memory.open(table, path=path) as memory:
        assert memory.config.preset == preset
    with Memory.open(path=path) as memory:
        assert memory.config.preset == preset
    # another stored shape is still refused
    with pytest.raises(ConfigError, match="would store different things"):
        Memory.open({**table, "embedder": {"type": "hashing", "dim": 64}}, path=path)
