"""The REALM schema: node kinds, predicates, layers, symmetry, registration."""

from __future__ import annotations

import pytest

from labile._errors import SchemaError
from labile._model import Edge, Layer, Node, edge_id
from labile.testing import make_deps, make_registries
from labile_realm import schema

SYMMETRIC = {"realm.contradicts", "realm.correlates", "realm.analogous_to"}
LAYERS = {
    "logical": {"contradicts", "implies", "constrains", "verifies"},
    "causal": {"precedes", "enables", "triggers", "results_in"},
    "taxonomic": {"comprises", "instantiates", "summarizes"},
    "associative": {"correlates", "supersedes", "analogous_to", "contextualizes"},
}


def test_four_node_kinds_with_their_fields() -> None:
    kinds = {k.name: k.fields for k in schema.NODE_KINDS}
    assert kinds == {
        "realm.entity": ("name", "aliases", "category", "role"),
        "realm.event": ("name", "participants", "description", "time"),
        "realm.episode": ("name", "description", "keywords", "time_range"),
        "realm.fact": ("statement", "keywords"),
    }


def test_fifteen_predicates_in_four_layers() -> None:
    assert len(schema.PREDICATES) == 15
    for layer, names in LAYERS.items():
        got = {p.name.removeprefix("realm.") for p in schema.PREDICATES if p.layer == Layer(layer)}
        assert got == names
    assert {p.name for p in schema.PREDICATES if p.symmetric} == SYMMETRIC


def test_registered_through_the_plugin() -> None:
    reg = make_registries()
    for kind in ("realm.entity", "realm.event", "realm.episode", "realm.fact"):
        assert kind in reg["node_kind"]
    assert sum(1 for c in reg["predicate"] if c.name.startswith("realm.")) == 15
    for name in ("realm.query_match", "realm.keywords_match", "realm.hybrid_match"):
        assert name in reg["seeder"]
    assert "realm.subgraph_beam" in reg["expander"] and "realm.path_search" in reg["expander"]
    assert "realm.aggregate" in reg["filter"]
    assert "realm.reconsolidate" in reg["reconsolidator"]
    assert "realm.topology_update" in reg["reconsolidator"]
    assert "realm.construct" in reg["extractor"]
    assert "realm" in reg["preset"] and "realm-llm" in reg["preset"]


def test_symmetric_predicates_get_the_reverse_edge() -> None:
    deps = make_deps()
    store = deps.store
    store.upsert_nodes("ns", [Node(id="a", kind="realm.event"), Node(id="b", kind="realm.event")])
    store.upsert_edges("ns", [
        Edge(id=edge_id("a", "realm.correlates", "b"), src="a", dst="b",
             predicate="realm.correlates", weight=0.7),
        Edge(id=edge_id("a", "realm.precedes", "b"), src="a", dst="b",
             predicate="realm.precedes"),
    ])
    ids = {e.id for e in store.iter_edges("ns")}
    assert edge_id("b", "realm.correlates", "a") in ids
    assert edge_id("b", "realm.precedes", "a") not in ids


def test_unknown_predicate_is_rejected() -> None:
    deps = make_deps()
    deps.store.upsert_nodes("ns", [Node(id="a", kind="realm.event"),
                                   Node(id="b", kind="realm.fact")])
    with pytest.raises(SchemaError):
        deps.store.upsert_edges("ns", [Edge(id="x", src="a", dst="b", predicate="realm.loves")])


@pytest.mark.parametrize(("raw", "full"), [
    ("precedes", "realm.precedes"), ("realm.correlates", "realm.correlates"),
    ("Results In", "realm.results_in"), ("analogous-to", "realm.analogous_to"), ("loves", None),
])
def test_predicate_name_normalises(raw: str, full: str | None) -> None:
    assert schema.predicate_name(raw) == full


def test_layer_and_symmetry_helpers() -> None:
    assert schema.layer_of("realm.supersedes") == "associative"
    assert schema.is_symmetric("realm.contradicts")
    assert not schema.is_symmetric("realm.implies")
    assert schema.kind_name("fact") == "realm.fact"
    assert "causal/precedes" in schema.predicate_table()
