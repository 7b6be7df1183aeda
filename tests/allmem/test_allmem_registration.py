"""Registration, presets and configs of the All-Mem bundle."""

from __future__ import annotations

import attrs
import pytest
from allmem_helpers import open_memory

import labile_allmem
import labile_llm
import labile_offline
from labile._config import CONVERTER, resolve
from labile._errors import ConfigError
from labile._memory import Memory, build_registries
from labile.testing import make_registries
from labile_allmem.presets import PRESETS, preset_table

KINDS = ("extractor", "seeder", "expander", "filter", "consolidator", "node_kind", "predicate")


@pytest.fixture(scope="module")
def registries():
    return make_registries(labile_allmem, labile_llm, labile_offline, entry_points=False)


def test_every_component_is_registered_under_the_bundle_prefix(registries):
    """All components of the bundle are named ``allmem.*`` (presets: ``allmem``…)."""
    names = {
        kind: [c.name for c in registries[kind] if c.plugin == "labile_allmem"] for kind in KINDS
    }
    assert names["extractor"] == ["allmem.write"]
    assert names["seeder"] == ["allmem.visible_anchor"]
    assert names["expander"] == ["allmem.typed_expand"]
    assert names["filter"] == ["allmem.rerank"]
    assert names["consolidator"] == ["allmem.atc"]
    assert names["node_kind"] == ["allmem.run", "allmem.unit"]
    assert sorted(names["predicate"]) == [
        "allmem.lineage", "allmem.semantic", "allmem.sibling", "allmem.temporal",
        "allmem.version",
    ]
    for kind in ("allmem.descriptor", "allmem.diagnoser", "allmem.repair_planner"):
        assert registries.kinds.plugin_of(kind) == "labile_allmem"
        assert registries[kind].names() == [f"{kind}.llm", f"{kind}.offline"]
        assert registries[kind].get(f"{kind}.llm").needs == {"llm"}
        assert not registries[kind].get(f"{kind}.offline").needs
    presets = [c.name for c in registries["preset"] if c.plugin == "labile_allmem"]
    assert sorted(presets) == ["allmem", "allmem-llm", "allmem-no-consolidation",
                               "allmem-no-expand", "allmem-paper"]


@pytest.mark.parametrize("kind", ["extractor", "seeder", "expander", "filter", "consolidator"])
def test_configs_structure_from_an_empty_table_and_round_trip(registries, kind):
    """``type = "<name>"`` alone is valid; unstructure/structure round-trips."""
    for comp in registries[kind]:
        if comp.plugin != "labile_allmem":
            continue
        config = CONVERTER.structure({}, comp.config)
        assert config == comp.config()
        assert CONVERTER.structure(CONVERTER.unstructure(config), comp.config) == config


def test_config_validators_reject_bad_values(registries):
    """Out-of-range thresholds and unknown link types are config errors with a path."""
    base = preset_table("allmem")
    base["store"], base["embedder"] = {"type": "memory"}, {"type": "hashing"}
    bad = dict(base, consolidate=[{"type": "allmem.atc", "merge_threshold": 1.5}])
    with pytest.raises(ConfigError, match="consolidate"):
        resolve(bad, registries)
    bad = dict(base, retrieval={"expand": [{"type": "allmem.typed_expand",
                                            "priority": ["version", "telepathy"]}]})
    with pytest.raises(ConfigError, match="telepathy"):
        resolve(bad, registries)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_resolve_with_test_overrides(name):
    """Each preset resolves (store/embedder/llm swapped for test ones) and builds."""
    table = {"preset": name, "store": {"type": "memory"}, "embedder": {"type": "hashing"}}
    if name == "allmem-llm":
        table["llm"] = {"type": "scripted"}
    registries = build_registries()
    config = resolve(table, registries)
    assert config.extractor.type == "allmem.write"
    assert [s.type for s in config.seeders] == ["allmem.visible_anchor"]
    expected_atc = [] if name == "allmem-no-consolidation" else ["allmem.atc"]
    assert [s.type for s in config.consolidators] == expected_atc
    expected_expand = [] if name == "allmem-no-expand" else ["allmem.typed_expand"]
    assert [s.type for s in config.expanders] == expected_expand


def test_preset_tables_name_the_embedded_defaults():
    """The offline preset uses the embedded store and embedder and no LLM."""
    table = preset_table("allmem")
    assert table["store"] == {"type": "lancedb"}
    assert table["embedder"] == {"type": "minilm"}
    assert table["llm"] == {"type": "none"}
    llm = preset_table("allmem-llm")
    assert llm["extractor"]["descriptor"] == "allmem.descriptor.llm"
    assert llm["consolidate"][0]["diagnoser"] == "allmem.diagnoser.llm"
    assert llm["consolidate"][0]["planner"] == "allmem.repair_planner.llm"
    assert table["retrieval"]["seed"][0]["mode"] == "hybrid"
    assert table["retrieval"]["filter"][0]["mode"] == "hybrid"
    paper = preset_table("allmem-paper")
    assert paper["retrieval"]["seed"] == [{"type": "allmem.visible_anchor"}]
    assert paper["retrieval"]["filter"] == [{"type": "allmem.rerank"}]


def test_offline_pipeline_needs_no_llm():
    """The offline preset writes, consolidates and searches with the ``none`` LLM."""
    from allmem_helpers import session

    mem = open_memory()
    mem.add(session(1, [("Ann", "I adopted a beagle named Rex."), ("Bob", "Cute!")]),
            namespace="n")
    assert mem.consolidate(namespace="n")[0].counts["buffered"] == 2
    assert mem.search("beagle", namespace="n").hits
    assert mem.usage.snapshot()["total"]["calls"] == 0


def test_config_classes_are_frozen_with_defaults(registries):
    """Every config field has a default (the kernel contract)."""
    for comp in registries.all():
        if comp.plugin == "labile_allmem" and attrs.has(comp.config):
            for field in attrs.fields(comp.config):
                assert field.default is not attrs.NOTHING, (comp.name, field.name)


def test_offline_and_llm_spellings_stay_valid_and_resolve_to_the_new_names(registries):
    """A config written with ``"offline"`` / ``"llm"`` resolves to the registered
    components, and the resolved table (what ``labile check`` prints) uses their names."""
    table = {"preset": "allmem", "store": {"type": "memory"}, "embedder": {"type": "hashing"},
             "llm": {"type": "scripted"},
             "extractor": {"type": "allmem.write", "descriptor": "llm"},
             "consolidate": [{"type": "allmem.atc", "diagnoser": "llm", "planner": "offline",
                              "descriptor": "offline"}]}
    written = resolve(table, registries).to_table()
    assert written["extractor"]["descriptor"]["type"] == "allmem.descriptor.llm"
    atc = written["consolidate"][0]
    # the LLM diagnoser has options (its pre-gate), so it is written as a table
    assert (atc["diagnoser"]["type"], atc["planner"]["type"], atc["descriptor"]["type"]) == (
        "allmem.diagnoser.llm", "allmem.repair_planner.offline", "allmem.descriptor.offline")
    assert resolve(written, registries).to_table() == written


def test_llm_decisions_refuse_a_pipeline_without_a_model():
    """Each LLM decision names itself and its config path when there is no LLM."""
    with pytest.raises(ConfigError) as info:
        Memory.open({"preset": "allmem-llm", "store": {"type": "memory"},
                     "embedder": {"type": "hashing"}, "llm": {"type": "none"}})
    msg = str(info.value)
    for path in ("$.extractor.descriptor", "$.consolidate[0].diagnoser",
                 "$.consolidate[0].planner", "$.consolidate[0].descriptor"):
        assert f"@ {path} needs an LLM" in msg
