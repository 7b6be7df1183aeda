"""Declared kinds: a bundle declares a kind once and registries, configs and Memory follow."""

from __future__ import annotations

from typing import Any, Protocol

import attrs
import pluggy
import pytest
from core_helpers import OFFLINE
from hypothesis import given
from hypothesis import strategies as st

from labile import Memory
from labile._config import PipelineConfig, resolve
from labile._errors import ConfigError, DuplicateComponentError, PluginLoadError
from labile._kinds import KindSpec
from labile._memory import build_registries
from labile._needs import check_needs
from labile._plugins import get_plugin_manager
from labile._registry import Component, Registry, collect
from labile._schema import CheckedStore
from labile.plugin import (
    ComponentSpec,
    CoreDeps,
    Deps,
    Hit,
    NoConfig,
    Query,
    StoreDeps,
    component_field,
    hookimpl,
)
from labile.testing import observations
from labile_io.render import components_markdown, components_text
from labile_llm import ScriptedLLM

BASE = OFFLINE


class Scorer(Protocol):
    def score(self, hit: Hit) -> float: ...


@attrs.frozen(kw_only=True)
class ScaleConfig:
    factor: float = 2.0


class Scale:
    """``acme.scorer.scale``: multiplies the score."""

    def __init__(self, config: ScaleConfig, deps: Deps, host: RescoreConfig) -> None:
        self.factor, self.host = config.factor, host

    def score(self, hit: Hit) -> float:
        return hit.score * self.factor


class ModelScorer:
    """``acme.scorer.model``: asks the LLM (needs one)."""

    def __init__(self, config: NoConfig, deps: Deps, host: RescoreConfig) -> None:
        self.llm = deps.llm

    def score(self, hit: Hit) -> float:
        return float(self.llm.complete_json("score?", {"type": "number"}, operation="score"))


@attrs.frozen(kw_only=True)
class RescoreConfig:
    scorer: ComponentSpec = component_field("acme.scorer", "acme.scorer.scale")
    keep: int = 10


class Rescore:
    """``acme.rescore``: a filter whose scoring decision is a nested component."""

    def __init__(self, config: RescoreConfig, deps: Deps) -> None:
        self.scorer: Scorer = deps.registries.build(config.scorer, deps, config)
        self.keep = config.keep

    def filter(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        rescored = [attrs.evolve(h, score=self.scorer.score(h)) for h in hits]
        return sorted(rescored, key=lambda h: -h.score)[: self.keep]


SCORER = KindSpec(name="acme.scorer", plural="acme.scorers", protocol=Scorer,
                  aliases={"plain": "acme.scorer.scale"},
                  doc="Add scorers. ``factory(config, deps, host)`` returns a Scorer.")


class Acme:
    """A bundle that declares a kind, registers two components of it, and a host."""

    def __init__(self) -> None:
        self.__name__ = "acme"  # the plugin name the manager records

    @hookimpl
    def labile_declare_kinds(self, declare: Any) -> None:
        declare(SCORER)

    @hookimpl
    def labile_register_acme_scorers(self, register: Any) -> None:
        register("acme.scorer.scale", Scale, config=ScaleConfig, summary="scale the score")
        register("acme.scorer.model", ModelScorer, needs=("llm",), summary="ask the model")

    @hookimpl
    def labile_register_filters(self, register: Any) -> None:
        register("acme.rescore", Rescore, config=RescoreConfig, summary="rescore hits")


def acme_pm(*more: object) -> pluggy.PluginManager:
    return get_plugin_manager(extra=[Acme(), *more])


def with_filter(filt: dict[str, Any]) -> dict[str, Any]:
    return {**BASE, "retrieval": {**BASE["retrieval"], "filter": [filt]}}


def test_hook_labile_declare_kinds() -> None:
    """A declared kind gets a registry and its registration hook; a host builds it from config."""
    pm = acme_pm()
    registries = build_registries(pm)
    assert registries.kinds.plugin_of("acme.scorer") == "acme"
    assert registries["acme.scorer"].names() == ["acme.scorer.model", "acme.scorer.scale"]
    assert registries["acme.scorer"].get("acme.scorer.model").needs == {"llm"}
    scores = []
    for factor in (1.0, 10.0):
        mem = Memory.open(with_filter({"type": "acme.rescore",
                                       "scorer": {"type": "acme.scorer.scale", "factor": factor}}),
                          plugin_manager=pm)
        (_, rescore), = mem.filters
        assert isinstance(rescore.scorer, Scale) and rescore.scorer.factor == factor
        assert rescore.scorer.host.keep == 10  # the host's config is the context
        mem.add(observations(["the cat sat", "a dog ran"]), namespace="n")
        scores.append({h.node.id: h.score for h in mem.search("cat", namespace="n").hits})
    assert scores[0] and scores[1] == {i: s * 10.0 for i, s in scores[0].items()}


def test_declared_kind_is_listed_with_its_components() -> None:
    registries = build_registries(acme_pm())
    kinds = list(registries.by_kind)
    assert kinds.index("acme.scorer") > kinds.index("preset")  # after the kernel's own
    text = components_text(registries, ["acme.scorer"])
    assert "acme.scorer.scale" in text and "factor: float = 2.0" in text
    markdown = components_markdown(registries, kinds)
    assert "## acme.scorer" in markdown and "### `acme.scorer.model`" in markdown
    # the host's option shows the kind it takes and the default component
    assert "| `scorer` | `acme.scorer` | `'acme.scorer.scale'` |" in markdown


def test_alias_resolves_and_the_resolved_table_uses_the_new_spelling() -> None:
    registries = build_registries(acme_pm())
    config = resolve(with_filter({"type": "acme.rescore", "scorer": "plain"}), registries)
    spec = config.filters[0].config.scorer
    assert spec == ComponentSpec(kind="acme.scorer", type="acme.scorer.scale",
                                 config=ScaleConfig())
    table = config.to_table()
    assert table["retrieval"]["filter"][0]["scorer"] == {"type": "acme.scorer.scale",
                                                         "factor": 2.0}
    assert resolve(table, registries) == config


def test_unknown_nested_name_lists_the_registered_ones_with_its_path() -> None:
    registries = build_registries(acme_pm())
    with pytest.raises(ConfigError) as info:
        resolve(with_filter({"type": "acme.rescore", "scorer": "acme.scorer.scal"}), registries)
    msg = str(info.value)
    assert "@ $.retrieval.filter[0].scorer" in msg
    assert "did you mean 'acme.scorer.scale'" in msg
    assert "available: acme.scorer.model, acme.scorer.scale" in msg


@pytest.mark.parametrize(("scorer", "expected"), [
    ({"type": "acme.scorer.scale", "factor": "big"},
     "expected a number, got str 'big' @ $.retrieval.filter[0].scorer.factor"),
    ({"type": "acme.scorer.scale", "colour": 1},
     "unknown option(s) colour @ $.retrieval.filter[0].scorer"),
    ({"factor": 1.0}, "missing 'type' (a registered acme.scorer name) @ $.retrieval.filter[0]"),
    (7, "expected a acme.scorer name or a table with a 'type' key, got 7"),
])
def test_nested_options_are_structured_strictly(scorer: Any, expected: str) -> None:
    registries = build_registries(acme_pm())
    with pytest.raises(ConfigError) as info:
        resolve(with_filter({"type": "acme.rescore", "scorer": scorer}), registries)
    assert expected in str(info.value)


def test_misspelt_hook_of_a_declared_kind_fails_at_startup() -> None:
    class Typo:
        @hookimpl
        def labile_register_acme_scorer(self, register: Any) -> None:  # missing "s"
            pass

    with pytest.raises(pluggy.PluginValidationError, match="unknown hook"):
        acme_pm(Typo())


def test_an_optional_implementation_loads_without_the_declaring_bundle() -> None:
    class Extension:
        __name__ = "extension"

        @hookimpl(optionalhook=True)
        def labile_register_acme_scorers(self, register: Any) -> None:
            register("ext.scorer", Scale, config=ScaleConfig)

    registries = build_registries(get_plugin_manager(extra=[Extension()]))
    assert "acme.scorer" not in registries.by_kind
    registries = build_registries(acme_pm(Extension()))
    assert registries["acme.scorer"].get("ext.scorer").plugin == "extension"


def test_a_plugin_registered_after_startup_can_still_declare_kinds() -> None:
    pm = get_plugin_manager(entry_points=False)
    pm.register(Acme(), name="late")
    assert "acme.scorer.scale" in collect(pm)["acme.scorer"]


def test_two_plugins_declaring_one_kind_clash_naming_both() -> None:
    class Other:
        __name__ = "other"

        @hookimpl
        def labile_declare_kinds(self, declare: Any) -> None:
            declare(SCORER)

    with pytest.raises(DuplicateComponentError) as info:
        acme_pm(Other())
    assert "component kind 'acme.scorer'" in str(info.value)
    assert "'acme'" in str(info.value) and "'other'" in str(info.value)


@pytest.mark.parametrize(("kind", "match"), [
    (KindSpec(name="acme.seeds", plural="seeders"), "labile_register_seeders"),
    (KindSpec(name="acme.more", plural="acme.more", placement="list",
              section=("retrieval",)), r"overlaps \$.retrieval.seed"),
])
def test_a_declared_kind_cannot_take_a_hook_or_section_in_use(kind: KindSpec, match: str) -> None:
    class Bad:
        @hookimpl
        def labile_declare_kinds(self, declare: Any) -> None:
            declare(kind)

    with pytest.raises(PluginLoadError, match=match):
        get_plugin_manager(entry_points=False, extra=[Bad()])


def test_declare_takes_only_kind_declarations() -> None:
    class Bad:
        @hookimpl
        def labile_declare_kinds(self, declare: Any) -> None:
            declare({"name": "acme.x"})

    with pytest.raises(TypeError, match="declare\\(\\) takes a labile.plugin.KindSpec"):
        get_plugin_manager(entry_points=False, extra=[Bad()])


@pytest.mark.parametrize(("fields", "match"), [
    ({"name": "Acme Thing", "plural": "things"}, "lowercase words joined by dots"),
    ({"name": "acme.x", "plural": "acme.xs", "placement": "single"}, "needs the config section"),
    ({"name": "acme.x", "plural": "acme.xs", "section": ("x",)}, "only single and list kinds"),
    ({"name": "acme.x", "plural": "acme.xs", "values": True}, "placement must be 'registry'"),
    ({"name": "acme.x", "plural": "acme.xs", "placement": "list", "section": ("preset",)},
     "reserved"),
    ({"name": "acme.x", "plural": "acme.xs", "placement": "everywhere"}, "placement must be one"),
    ({"name": "acme.x", "plural": "acme.xs", "placement": "list", "section": ("x",),
      "default": "acme.x.one"}, "only a single kind has a default"),
])
def test_kind_declarations_are_validated(fields: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        KindSpec(**fields)


def test_a_component_that_needs_an_llm_is_refused_without_one() -> None:
    pm = acme_pm()
    table = with_filter({"type": "acme.rescore", "scorer": "acme.scorer.model"})
    with pytest.raises(ConfigError) as info:
        Memory.open(table, plugin_manager=pm)
    msg = str(info.value)
    assert "acme.scorer 'acme.scorer.model' @ $.retrieval.filter[0].scorer needs an LLM" in msg
    assert '[llm] type = "litellm"' in msg
    assert "choose a acme.scorer that needs none: acme.scorer.scale" in msg
    mem = Memory.open(table, plugin_manager=pm, llm=ScriptedLLM(replies=["0.5"]))
    assert isinstance(mem.filters[0][1].scorer, ModelScorer)


def test_needs_can_be_checked_on_a_config_alone() -> None:
    """What ``labile check`` can do: check a resolved config against its own ``[llm]``."""
    registries = build_registries(acme_pm())
    config = resolve(with_filter({"type": "acme.rescore", "scorer": "acme.scorer.model"}),
                     registries)
    with pytest.raises(ConfigError, match=r"@ \$.retrieval.filter\[0\].scorer needs an LLM"):
        check_needs(config, registries, llm_name=config.llm.type)
    check_needs(config, registries, llm_name="litellm")  # a model: nothing to refuse


def test_register_accepts_only_known_needs() -> None:
    class Bad:
        @hookimpl
        def labile_register_filters(self, register: Any) -> None:
            register("bad.filter", Rescore, config=RescoreConfig, needs=("gpu",))

    with pytest.raises(TypeError, match=r"unknown needs \['gpu'\] \(allowed: llm\)"):
        build_registries(get_plugin_manager(entry_points=False, extra=[Bad()]))


@attrs.frozen(kw_only=True)
class ProbeConfig:
    label: str = "p"


class Probe:
    def __init__(self, config: ProbeConfig, deps: Deps) -> None:
        self.label, self.store = config.label, deps.store


class Probes:
    """A bundle whose own kind sits in a pipeline config, as a list section."""

    @hookimpl
    def labile_declare_kinds(self, declare: Any) -> None:
        declare(KindSpec(name="acme.probe", plural="acme.probes", placement="list",
                         section=("acme", "probes")))

    @hookimpl
    def labile_register_acme_probes(self, register: Any) -> None:
        register("acme.label", Probe, config=ProbeConfig)


def test_a_bundle_kind_placed_in_the_pipeline_is_resolved_and_built() -> None:
    pm = get_plugin_manager(extra=[Probes()])
    table = {**BASE, "acme": {"probes": [{"type": "acme.label", "label": "x"}, "acme.label"]}}
    mem = Memory.open(table, plugin_manager=pm)
    built = mem.components["acme.probe"]
    assert [(name, p.label) for name, p in built] == [("acme.label", "x"), ("acme.label", "p")]
    assert isinstance(built[0][1].store, CheckedStore)
    assert mem.config.to_table()["acme"] == {"probes": [{"type": "acme.label", "label": "x"},
                                                        {"type": "acme.label", "label": "p"}]}
    with pytest.raises(ConfigError, match=r"unknown option\(s\) other @ \$.acme"):
        Memory.open({**table, "acme": {"other": []}}, plugin_manager=pm)


def test_factories_get_the_deps_they_can_have() -> None:
    seen: dict[str, Any] = {}

    class Spy:
        @hookimpl
        def labile_register_stores(self, register: Any) -> None:
            def store(config: Any, deps: Any) -> Any:
                from labile._memstore import MemoryStore

                seen["store"] = deps
                return MemoryStore()

            register("spy.store", store)

        @hookimpl
        def labile_register_embedders(self, register: Any) -> None:
            def embedder(config: Any, deps: Any) -> Any:
                from labile_offline.hashing import HashingEmbedder

                seen["embedder"] = deps
                return HashingEmbedder()

            register("spy.embedder", embedder)

    mem = Memory.open({**BASE, "store": {"type": "spy.store"},
                       "embedder": {"type": "spy.embedder"}},
                      plugin_manager=get_plugin_manager(extra=[Spy()]))
    assert type(seen["embedder"]) is CoreDeps
    assert type(seen["store"]) is StoreDeps
    assert seen["store"].embedder is mem.embedder and seen["store"].llm is mem.llm
    assert isinstance(mem.deps, Deps) and isinstance(mem.deps.store, CheckedStore)


def test_pipeline_config_keeps_its_keyword_and_attribute_spelling() -> None:
    config = resolve(BASE, build_registries())
    spec = ComponentSpec(kind="store", type="memory", config=config.store.config)
    rebuilt = PipelineConfig(store=spec, embedder=config.embedder, llm=config.llm,
                             extractor=config.extractor, seeders=config.seeders)
    assert rebuilt.seeders == config.seeders and rebuilt.filters == ()
    moved = attrs.evolve(config, store=attrs.evolve(spec, type="elsewhere"))
    assert moved.store.type == "elsewhere" and moved.extractor == config.extractor
    assert config.with_component("store", spec).single("store") == spec
    # specs made in Python need not carry their kind: the pipeline knows it
    bare = attrs.evolve(rebuilt, store=ComponentSpec(type="memory", config=spec.config))
    assert Memory(bare, build_registries()).config.store.kind == ""
    with pytest.raises(TypeError, match="unexpected keyword 'stores'"):
        PipelineConfig(stores=spec)
    with pytest.raises(TypeError, match="needs the 'store' component"):
        PipelineConfig(embedder=config.embedder, llm=config.llm, extractor=config.extractor)


@given(st.dictionaries(st.text("abcdefgh.", min_size=1, max_size=8),
                       st.text("abcdefgh.", min_size=1, max_size=8), max_size=6))
def test_aliases_resolve_to_their_target_and_are_never_listed(aliases: dict[str, str]) -> None:
    """For any alias map, an alias finds exactly its target's component, and the
    registry lists only registered names."""
    targets = set(aliases.values())
    reg: Registry[object] = Registry(KindSpec(name="acme.k", plural="acme.ks",
                                              aliases=aliases))
    for name in targets:
        reg.add(Component(kind="acme.k", name=name, factory=name))
    assert reg.names() == sorted(targets)
    for alias, target in aliases.items():
        assert reg.get(alias).name == target and alias in reg


def test_a_single_kind_with_a_default_may_be_left_out_of_a_config() -> None:
    """Left out, the default is used when registered and the kind is absent when not;
    named, it is checked like any single kind."""
    tagger = KindSpec(name="acme.tagger", plural="acme.taggers", placement="single",
                      section=("tagger",), default="acme.tagger.plain")

    class Declares:
        @hookimpl
        def labile_declare_kinds(self, declare: Any) -> None:
            declare(tagger)

    class Registers:
        @hookimpl
        def labile_register_acme_taggers(self, register: Any) -> None:
            register("acme.tagger.plain", lambda config, deps: "plain")

    with_default = collect(get_plugin_manager(extra=[Declares(), Registers()]))
    assert resolve(BASE, with_default).components["acme.tagger"].type == "acme.tagger.plain"
    without = collect(get_plugin_manager(extra=[Declares()]))
    assert "acme.tagger" not in resolve(BASE, without).components
    with pytest.raises(ConfigError, match=r"unknown acme.tagger 'nope'.*\$\.tagger\.type"):
        resolve({**BASE, "tagger": "nope"}, with_default)
    with Memory.open({**BASE}, plugin_manager=get_plugin_manager(
            extra=[Declares(), Registers()])) as memory:
        assert memory.components["acme.tagger"] == "plain"
