"""LLM construction: extraction, node and edge decisions with scripted replies.

Every invalid reply (malformed JSON, unknown ids, unknown predicates, weights
outside [0, 1]) is rejected whole: the observation stays in the log, nothing
from the reply is written, the failure is counted in the add report.
"""

from __future__ import annotations

from typing import Any

import pytest
from realm_helpers import EDGE, EXTRACT, NODE, open_memory, reply, session

from labile._errors import ConfigError
from labile._model import NodeFilter
from labile_llm import ScriptedLLM
from labile_realm.construct.extract_offline import unit_id_of_turn
from labile_realm.schema import ENTITY, EVENT, FACT

# every unit is asked about (min_similarity 0): these tests script the decisions themselves
LLM_CONSTRUCT = {"type": "realm.construct", "units": "llm",
                 "decisions": {"type": "realm.write_decider.llm", "min_similarity": 0.0}}


def _units(*units: dict[str, Any], summary: str = "Ann talks about her dog.") -> str:
    return reply({"units": list(units), "summary": summary})


EVENT_UNIT = {"type": "event", "name": "adopted a dog",
              "description": "Ann adopted a dog named Max from the shelter",
              "participants": ["Ann", "Max"], "time": "2024-03-03"}
FACT_UNIT = {"type": "fact", "name": "Ann owns a dog", "statement": "Ann owns a dog named Max",
             "description": "Ann is a dog owner", "keywords": ["dog", "Max"]}
ENTITY_UNIT = {"type": "entity", "name": "Max", "aliases": ["Maxie"], "category": "animal",
               "role": "Ann's dog", "description": "Max, Ann's dog"}
ADD = reply({"operation": "add", "related": []})
NO_EDGES = reply({"edges": []})


def _memory(llm: ScriptedLLM) -> Any:
    return open_memory(llm=llm, extractor=LLM_CONSTRUCT)


def _turn(text: str = "I adopted Max yesterday!", n: int = 1) -> list:
    return session(n, [("Ann", text)])


def test_llm_units_become_nodes_with_sources_and_summary() -> None:
    llm = ScriptedLLM(rules=[(EXTRACT, _units(EVENT_UNIT, FACT_UNIT, ENTITY_UNIT)),
                             (NODE, ADD), (EDGE, NO_EDGES)])
    mem = _memory(llm)
    report = mem.add(_turn(), namespace="u")
    assert report.details["realm"]["llm_failures"] == {}
    kinds = {n.kind for n in mem.store.iter_nodes("u")}
    assert {EVENT, FACT, ENTITY} <= kinds
    ev = next(iter(mem.store.iter_nodes("u", NodeFilter(kinds={EVENT}))))
    assert ev.sources == ("D1:1",)
    assert ev.content == "I adopted Max yesterday!"
    assert ev.time_start is not None and ev.time_start.date().isoformat() == "2024-03-03"
    ent = next(iter(mem.store.iter_nodes("u", NodeFilter(kinds={ENTITY}))))
    assert ent.attrs["aliases"] == ["Maxie"]
    assert mem.extractor.state("u").summary == "Ann talks about her dog."
    ops = [c.operation for c in llm.calls]
    assert ops.count("realm.extract") == 1 and "realm.node_decision" in ops


@pytest.mark.parametrize("bad", [
    "this is not json at all",
    _units({"type": "event", "name": "x", "description": "y", "time": "last week"}),
    _units({"type": "memory", "name": "x", "description": "y"}),
    reply({"units": [EVENT_UNIT]}),  # no summary
])
def test_bad_extraction_is_rejected_and_counted(bad: str) -> None:
    """Nothing the model said is kept; the turn itself is, as its event (findable, and
    read by the offline rules), so an unusable reply loses no evidence."""
    llm = ScriptedLLM(rules=[(EXTRACT, bad), (NODE, ADD), (EDGE, NO_EDGES)])
    mem = _memory(llm)
    turn = _turn()
    report = mem.add(turn, namespace="u")
    assert report.details["realm"]["llm_failures"] == {"extract": 1}
    nodes = list(mem.store.iter_nodes("u"))
    events = [n for n in nodes if n.kind == EVENT]
    assert len(events) == 1 and events[0].attrs["turn_fallback"] is True
    assert events[0].content == turn[0].text and events[0].sources == ("D1:1",)
    assert events[0].id == unit_id_of_turn("D1:1")  # the id an offline build gives the turn
    assert not [n for n in nodes if n.kind in (FACT, ENTITY)]
    assert [o.id for o in mem.store.iter_observations("u")] == ["D1:1"]
    assert [h.node.id for h in mem.search("dog", namespace="u", k=3).hits][:1] == [events[0].id]


def test_node_decision_with_unknown_target_is_rejected() -> None:
    llm = ScriptedLLM(rules=[
        (EXTRACT, [_units(EVENT_UNIT), _units(FACT_UNIT)]),
        (NODE, [ADD, reply({"operation": "modify", "target": 99, "related": []})]),
        (EDGE, NO_EDGES),
    ])
    mem = _memory(llm)
    mem.add(_turn(), namespace="u")
    report = mem.add(_turn("I love my dog.", 2), namespace="u")
    assert report.details["realm"]["llm_failures"] == {"node_decision": 1}
    assert not list(mem.store.iter_nodes("u", NodeFilter(kinds={FACT})))


@pytest.mark.parametrize("op", ["modify", "skip"])
def test_node_decision_without_target_adds_the_unit_and_counts_it(op: str) -> None:
    llm = ScriptedLLM(rules=[(EXTRACT, _units(EVENT_UNIT)),
                             (NODE, reply({"operation": op, "related": []})),
                             (EDGE, NO_EDGES)])
    mem = _memory(llm)
    report = mem.add(_turn(), namespace="u")
    assert report.details["realm"]["llm_failures"] == {}
    assert [n.sources for n in mem.store.iter_nodes("u", NodeFilter(kinds={EVENT}))] == [
        ("D1:1",)]
    assert mem.extractor.decider.counts["node_decision_untargeted_added"] == 1


def test_node_merge_keeps_content_and_adds_sources() -> None:
    llm = ScriptedLLM(rules=[
        (EXTRACT, _units(FACT_UNIT)),
        (NODE, [ADD, reply({"operation": "modify", "target": 1, "related": [1],
                            "description": "Ann owns a dog named Max (a retriever)"})]),
        (EDGE, NO_EDGES),
    ])
    mem = _memory(llm)
    mem.add(_turn(), namespace="u")
    (before,) = mem.store.iter_nodes("u", NodeFilter(kinds={FACT}))
    mem.add(_turn("Max is my dog.", 2), namespace="u")
    (after,) = mem.store.iter_nodes("u", NodeFilter(kinds={FACT}))
    assert after.id == before.id and after.content == before.content
    assert after.sources == ("D1:1", "D2:1")
    assert after.description == "Ann owns a dog named Max (a retriever)"


def _two_facts(edge_reply: str | list[str]) -> tuple[Any, Any]:
    llm = ScriptedLLM(rules=[
        (EXTRACT, [_units(FACT_UNIT), _units({**FACT_UNIT, "statement": "Ann walks Max daily"})]),
        (NODE, [ADD, reply({"operation": "add", "related": [1]})]),
        (EDGE, edge_reply),
    ])
    mem = _memory(llm)
    mem.add(_turn(), namespace="u")
    report = mem.add(_turn("I walk Max every day.", 2), namespace="u")
    return mem, report


def _llm_edges(mem: Any) -> list:
    return [e for e in mem.store.iter_edges("u")
            if e.predicate not in ("realm.comprises", "realm.precedes", "realm.verifies",
                                   "realm.contextualizes")]


def test_valid_edge_decision_is_applied() -> None:
    mem, report = _two_facts(reply({"edges": [
        {"candidate": 1, "operation": "add", "predicate": "implies", "direction": "to_target",
         "description": "owning the dog implies walking it", "weight": 0.7}]}))
    assert report.details["realm"]["llm_failures"] == {}
    (edge,) = _llm_edges(mem)
    assert edge.predicate == "realm.implies" and edge.weight == 0.7
    assert edge.description == "owning the dog implies walking it"


def test_symmetric_llm_edge_gets_reverse() -> None:
    mem, _ = _two_facts(reply({"edges": [
        {"candidate": 1, "operation": "add", "predicate": "correlates", "direction": "from_target",
         "description": "same dog", "weight": 0.9}]}))
    edges = _llm_edges(mem)
    assert len(edges) == 2 and {e.predicate for e in edges} == {"realm.correlates"}


@pytest.mark.parametrize("edge", [
    {"candidate": 7, "operation": "add", "predicate": "implies", "direction": "to_target",
     "weight": 0.5},
    {"candidate": 1, "operation": "add", "predicate": "loves", "direction": "to_target",
     "weight": 0.5},
    {"candidate": 1, "operation": "add", "predicate": "implies", "direction": "to_target",
     "weight": 1.5},
    {"candidate": 1, "operation": "add", "predicate": "implies", "direction": "to_target",
     "weight": -0.1},
    {"candidate": 1, "operation": "modify", "predicate": "implies", "direction": "to_target",
     "weight": 0.4},
])
def test_bad_edge_decisions_are_rejected_whole(edge: dict[str, Any]) -> None:
    good = {"candidate": 1, "operation": "add", "predicate": "verifies",
            "direction": "to_target", "weight": 0.6}
    mem, report = _two_facts(reply({"edges": [good, edge]}))
    assert report.details["realm"]["llm_failures"] == {"edge_decision": 1}
    assert _llm_edges(mem) == []
    assert len(list(mem.store.iter_nodes("u", NodeFilter(kinds={FACT})))) == 2


def test_malformed_edge_json_is_rejected() -> None:
    mem, report = _two_facts("{edges: [oops")
    assert report.details["realm"]["llm_failures"] == {"edge_decision": 1}
    assert _llm_edges(mem) == []


def test_delete_retires_an_existing_edge() -> None:
    add = reply({"edges": [{"candidate": 1, "operation": "add", "predicate": "implies",
                            "direction": "to_target", "weight": 0.7}]})
    delete = reply({"edges": [{"candidate": 1, "operation": "delete", "predicate": "implies",
                               "direction": "to_target", "weight": 0.0}]})
    llm = ScriptedLLM(rules=[
        (EXTRACT, [_units(FACT_UNIT), _units({**FACT_UNIT, "statement": "Ann walks Max"}),
                   _units({**FACT_UNIT, "statement": "Ann feeds Max"})]),
        (NODE, [ADD,
                reply({"operation": "add", "related": [1]}),
                reply({"operation": "modify", "target": 1, "related": [2]})]),
        (EDGE, [add, delete]),
    ])
    mem = _memory(llm)
    mem.add(_turn(), namespace="u")
    mem.add(_turn("I walk Max.", 2), namespace="u")
    (edge,) = _llm_edges(mem)
    assert edge.weight == 0.7
    mem.add(_turn("I feed Max.", 3), namespace="u")
    (edge,) = _llm_edges(mem)
    assert edge.attrs.get("retired") is True and edge.weight == 0.0


def test_prompts_use_short_ids_only() -> None:
    mem, _ = _two_facts(NO_EDGES)
    del mem
    # every node/edge prompt shows numbers, never the stored ids
    llm = ScriptedLLM(rules=[(EXTRACT, _units(FACT_UNIT)), (NODE, ADD), (EDGE, NO_EDGES)])
    mem = _memory(llm)
    mem.add(_turn(), namespace="u")
    mem.add(_turn("Max again", 2), namespace="u")
    ids = [n.id for n in mem.store.iter_nodes("u")]
    for call in llm.calls:
        assert not any(i in call.prompt for i in ids)
    assert any("[1]" in c.prompt for c in llm.calls if c.operation == "realm.node_decision")


def test_llm_mode_needs_an_llm() -> None:
    with pytest.raises(ConfigError):
        open_memory(extractor=LLM_CONSTRUCT)


def test_llm_call_failure_is_counted() -> None:
    from labile._errors import LLMError

    llm = ScriptedLLM(rules=[(EXTRACT, LLMError("rate limited"))])
    mem = _memory(llm)
    report = mem.add(_turn(), namespace="u")
    assert report.details["realm"]["llm_failures"] == {"extract": 1}
