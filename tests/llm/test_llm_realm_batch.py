"""REALM's cheaper LLM write path: batched extraction and the similarity gate of node decisions.

Scripted replies of the shapes a small local model gives (issue #11): a
valid batch, a batch covering only some turns, a unit with an impossible
date, a unit naming a turn that was not shown, malformed JSON, a prompt over
the context window. Each either lands per turn or fails closed with a counted
reason; the observations always stay in the log.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labile._memory import Memory
from labile._model import Observation
from labile_llm import ScriptedLLM
from labile_llm.retry import ErrorKind, LLMRequestError
from labile_realm.construct.extract_llm import LLMUnitExtractor
from labile_realm.construct.neighbourhood import Candidate
from labile_realm.construct.units import ConversationState, Unit
from labile_realm.schema import EVENT

BATCH = r"Turn each of the NEW TURNS below into memory units"
SINGLE = r"Turn the NEW TURN below into memory units"
NODE = r"A new memory unit arrived"
EDGE = r"Link a memory node to related nodes"
T0 = datetime(2024, 3, 4, 10, 0, tzinfo=UTC)

TURNS = [
    ("Ann", "I adopted a dog named Max from the shelter yesterday."),
    ("Bob", "Thanks!"),  # small talk: never shown to the model
    ("Bob", "I am training for the Berlin marathon in May."),
    ("Ann", "My sister Lena moved to Lisbon last month."),
]


def _observations(turns: list[tuple[str, str]] = TURNS, session: str = "1") -> list[Observation]:
    return [Observation(id=f"D{session}:{i + 1}", text=text, speaker=speaker,
                        timestamp=T0 + timedelta(minutes=i), session=session)
            for i, (speaker, text) in enumerate(turns)]


def _unit(turn: int, name: str, **extra: Any) -> dict[str, Any]:
    return {"turn": turn, "type": "event", "name": name, "description": f"{name} (turn {turn})",
            "time": "none", **extra}


def _reply(*units: dict[str, Any], summary: str = "Ann and Bob catch up.") -> str:
    return json.dumps({"units": list(units), "summary": summary})


def _single(name: str) -> str:
    return json.dumps({"units": [{"type": "event", "name": name, "description": name,
                                  "time": "none"}], "summary": "Ann and Bob catch up."})


def _memory(llm: ScriptedLLM, **units: Any) -> Memory:
    return Memory.open({
        "preset": "realm-llm", "store": {"type": "memory"}, "embedder": {"type": "hashing"},
        "llm": {"type": "scripted"},
        "extractor": {"type": "realm.construct",
                      "units": {"type": "realm.unit_extractor.llm", **units},
                      "decisions": "offline"},
    }, llm=llm)


def _sources_by_name(memory: Memory) -> dict[str, tuple[str, ...]]:
    """The events the model gave, by name (not the turns kept as they were)."""
    return {str(n.attrs.get("name")): n.sources for n in memory.store.iter_nodes("u")
            if n.kind == EVENT and n.attrs.get("name") and not n.attrs.get("turn_fallback")}


def _kept_as_said(memory: Memory) -> list[str]:
    """The turns whose reply was unusable, kept as their own event (`turn_only`)."""
    return sorted(n.sources[0] for n in memory.store.iter_nodes("u")
                  if n.kind == EVENT and n.attrs.get("turn_fallback"))


def _counts(memory: Memory) -> dict[str, int]:
    return dict(memory.extractor.units.counts)  # type: ignore[attr-defined]


def test_one_call_for_the_informative_turns_of_a_session() -> None:
    llm = ScriptedLLM(rules=[(BATCH, _reply(_unit(1, "adopted Max"), _unit(2, "marathon"),
                                            _unit(3, "Lena moved")))])
    with _memory(llm) as memory:
        report = memory.add(_observations(), namespace="u")
        calls = [c for c in llm.calls if c.operation.startswith("realm.extract")]
        assert [c.operation for c in calls] == ["realm.extract_batch"]
        prompt = calls[0].prompt
        assert "[1] (2024-03-04) Ann: I adopted" in prompt
        assert "[3] (2024-03-04) Ann: My sister" in prompt
        assert "Thanks!" not in prompt.split("NEW TURNS:")[1]
        # each unit lands on the observation of the turn it named
        assert _sources_by_name(memory) == {"adopted Max": ("D1:1",), "marathon": ("D1:3",),
                                            "Lena moved": ("D1:4",)}
        assert memory.extractor.state("u").summary == "Ann and Bob catch up."
        assert report.details["realm"]["llm_failures"] == {}
        assert _counts(memory) == {"small_talk_skipped": 1}


def test_the_batch_schema_only_offers_the_turns_shown() -> None:
    llm = ScriptedLLM(rules=[(BATCH, _reply())])
    with _memory(llm) as memory:
        memory.add(_observations(), namespace="u")
        schema = llm.calls[0].json_schema
        assert schema is not None
        item = schema["properties"]["units"]["items"]
        assert item["properties"]["turn"] == {"enum": [1, 2, 3]}
        assert next(iter(item["properties"])) == "turn"  # decoded first under a grammar


def test_a_batch_reply_covering_some_turns_keeps_those_and_loses_nothing_else() -> None:
    llm = ScriptedLLM(rules=[(BATCH, _reply(_unit(2, "marathon")))])
    with _memory(llm) as memory:
        report = memory.add(_observations(), namespace="u")
        assert _sources_by_name(memory) == {"marathon": ("D1:3",)}
        assert report.details["realm"]["llm_failures"] == {}
        assert [o.id for o in memory.store.iter_observations("u")] == [
            "D1:1", "D1:2", "D1:3", "D1:4"]


def test_a_turn_whose_unit_does_not_validate_loses_only_its_own_units() -> None:
    bad_date = _unit(1, "adopted Max", time="2024-02-30")  # passes the pattern, no such day
    llm = ScriptedLLM(rules=[(BATCH, _reply(bad_date, _unit(1, "shelter visit"),
                                            _unit(3, "Lena moved")))])
    with _memory(llm) as memory:
        memory.add(_observations(), namespace="u")
        assert _sources_by_name(memory) == {"Lena moved": ("D1:4",)}
        assert _counts(memory)["batch_turn_rejected"] == 1


def test_an_invented_turn_fails_the_batch_and_the_halves_are_asked() -> None:
    llm = ScriptedLLM(rules=[
        (BATCH, _reply(_unit(7, "invented"))),  # turn 7 was never shown: invalid whole
        (SINGLE, [_single("adopted Max"), _single("marathon"), _single("Lena moved")]),
    ])
    with _memory(llm, batch_turns=4) as memory:
        report = memory.add(_observations(), namespace="u")
        ops = [c.operation for c in llm.calls if c.operation.startswith("realm.extract")]
        # the batch (plus its repair), then turn 1 alone and turns 3-4 as a batch again
        assert ops.count("realm.extract_batch") >= 2 and ops.count("realm.extract") >= 1
        assert "invented" not in _sources_by_name(memory)
        assert _counts(memory)["batch_split"] >= 1
        assert report.details["realm"]["llm_failures"] == {}


def test_malformed_replies_keep_the_turns_as_said_and_every_observation() -> None:
    llm = ScriptedLLM(rules=[(BATCH, ScriptedLLM.malformed()),
                             (SINGLE, ScriptedLLM.malformed())])
    with _memory(llm) as memory:
        memory.add(_observations(), namespace="u")
        assert _sources_by_name(memory) == {}
        assert _kept_as_said(memory) == ["D1:1", "D1:3", "D1:4"]
        counts = _counts(memory)
        assert counts["batch_turn_failed"] == 3 and counts["batch_split"] == 2
        assert len(list(memory.store.iter_observations("u"))) == 4


def test_a_batch_over_the_context_window_is_halved() -> None:
    too_long = LLMRequestError("prompt of 5000 tokens does not fit n_ctx 4096",
                               kind=ErrorKind.CONTEXT_WINDOW)
    llm = ScriptedLLM(rules=[(BATCH, [too_long, _reply(_unit(1, "marathon"), _unit(2, "Lena"))]),
                             (SINGLE, _single("adopted Max"))])
    with _memory(llm) as memory:
        memory.add(_observations(), namespace="u")
        assert _sources_by_name(memory) == {"adopted Max": ("D1:1",), "marathon": ("D1:3",),
                                            "Lena": ("D1:4",)}
        assert _counts(memory)["batch_split"] == 1


def test_a_failure_halving_cannot_help_is_counted_for_every_turn_by_the_host() -> None:
    llm = ScriptedLLM(rules=[(BATCH, ScriptedLLM.auth_error())])
    with _memory(llm) as memory:
        report = memory.add(_observations(), namespace="u")
        assert report.details["realm"]["llm_failures"] == {"extract": 4}
        assert len(list(memory.store.iter_observations("u"))) == 4


def test_turns_added_one_at_a_time_are_asked_alone() -> None:
    llm = ScriptedLLM(rules=[(SINGLE, _single("x"))])
    with _memory(llm) as memory:
        for obs in _observations():
            memory.add([obs], namespace="u")
        ops = [c.operation for c in llm.calls if c.operation.startswith("realm.extract")]
        assert ops == ["realm.extract"] * 3  # the small-talk turn is never asked


def test_batch_turns_1_keeps_one_call_per_turn() -> None:
    llm = ScriptedLLM(rules=[(SINGLE, _single("x"))])
    with _memory(llm, batch_turns=1) as memory:
        memory.add(_observations(), namespace="u")
        ops = [c.operation for c in llm.calls if c.operation.startswith("realm.extract")]
        assert ops == ["realm.extract"] * 3


def test_bad_batch_options_are_refused_naming_the_option() -> None:
    with pytest.raises(Exception, match="batch_turns"):
        _memory(ScriptedLLM(), batch_turns=0)


_turn = st.tuples(st.sampled_from(["1", "2"]), st.integers(min_value=1, max_value=900))


@settings(max_examples=60, deadline=None)
@given(turns=st.lists(_turn, max_size=20), batch_turns=st.integers(1, 6),
       batch_chars=st.integers(200, 2000))
def test_batches_are_consecutive_runs_of_one_session_within_both_limits(
    turns: list[tuple[str, int]], batch_turns: int, batch_chars: int
) -> None:
    """Property: the batches, concatenated, are the observations in order; each holds one
    session, at most ``batch_turns`` turns and at most ``batch_chars`` characters unless
    it is a single turn."""
    observations = [Observation(id=f"o{i}", text="x" * size, speaker="A",
                                timestamp=T0 + timedelta(minutes=i), session=session)
                    for i, (session, size) in enumerate(turns)]
    extractor = LLMUnitExtractor(ScriptedLLM(), batch_turns=batch_turns, batch_chars=batch_chars)
    batches = extractor.batches(observations)
    assert [o.id for b in batches for o in b] == [o.id for o in observations]
    for b in batches:
        assert b and len({o.session for o in b}) == 1 and len(b) <= batch_turns
        assert len(b) == 1 or sum(len(o.text) for o in b) <= batch_chars


# -- the similarity gate of node decisions -------------------------------------------------


def _decider(min_similarity: float) -> Any:
    from labile_realm.construct.decide_llm import LLMDecider

    llm = ScriptedLLM(rules=[(NODE, json.dumps({"operation": "add", "related": [1]}))])
    return LLMDecider(llm, min_similarity=min_similarity), llm


def _candidate(node_id: str, similarity: float) -> Candidate:
    from labile._model import Node

    node = Node(id=node_id, kind=EVENT, content=node_id, description=f"about {node_id}")
    return Candidate(node=node, similarity=similarity, source="similarity")


def _new_unit() -> Unit:
    return Unit(kind=EVENT, key="k", name="n", content="c", description="d", keywords=(),
                time_start=None, time_end=None, sources=("o1",), attrs={})


def test_no_candidate_close_enough_adds_without_asking() -> None:
    decider, llm = _decider(0.45)
    decision = decider.decide_node(_new_unit(), [_candidate("a", 0.2), _candidate("b", 0.44)],
                                   ConversationState())
    assert decision.op == "add" and decision.related == () and llm.calls == []
    assert decider.counts == {"node_decision_unasked": 1}


def test_only_close_candidates_are_shown_to_the_model() -> None:
    decider, llm = _decider(0.45)
    decision = decider.decide_node(_new_unit(), [_candidate("far", 0.1), _candidate("near", 0.8)],
                                   ConversationState())
    prompt = llm.calls[0].prompt
    assert "about near" in prompt and "about far" not in prompt
    assert decision.related == ("near",)


def test_min_similarity_0_asks_about_every_unit_as_the_paper_does() -> None:
    decider, llm = _decider(0.0)
    decider.decide_node(_new_unit(), [_candidate("far", -0.3)], ConversationState())
    assert len(llm.calls) == 1 and "about far" in llm.calls[0].prompt and not decider.counts


# -- replies cut at the token budget ------------------------------------------------------


def test_a_cut_batch_reply_keeps_its_closed_units_and_asks_the_rest_again() -> None:
    from labile_llm.replies import ReplyCutError

    whole = _reply(_unit(1, "adopted Max"), _unit(2, "marathon"), _unit(2, "Berlin"))
    cut = ReplyCutError("realm.extract_batch: cut at max_tokens", raw=whole[:whole.index(
        '"Berlin"') + 5])  # the cut goes through the third unit
    llm = ScriptedLLM(rules=[(BATCH, cut), (SINGLE, _single("Lena moved"))])
    with _memory(llm) as memory:
        before = memory.extractor.state("u").summary
        report = memory.add(_observations(), namespace="u")
        assert _sources_by_name(memory) == {"adopted Max": ("D1:1",), "marathon": ("D1:3",),
                                            "Lena moved": ("D1:4",)}
        ops = [c.operation for c in llm.calls if c.operation.startswith("realm.extract")]
        assert ops == ["realm.extract_batch", "realm.extract"]  # turn 3 asked again, alone
        assert _counts(memory)["batch_reply_cut_salvaged"] == 1
        assert report.details["realm"]["llm_failures"] == {}
        assert memory.extractor.state("u").summary != before  # from the re-asked turn


def test_a_re_asked_turn_that_fails_loses_only_its_own_units() -> None:
    """The shape of the first real run: a 3-turn batch cut after turn 2's units, then
    turn 3 asked alone and cut again. Turns 1-2 keep their units; nothing is raised."""
    from labile_llm.replies import ReplyCutError

    whole = _reply(_unit(1, "adopted Max"), _unit(2, "marathon"), _unit(3, "Lena"))
    cut = ReplyCutError("cut", raw=whole[:whole.index('"Lena"')])
    llm = ScriptedLLM(rules=[(BATCH, cut), (SINGLE, ReplyCutError("cut again", raw="{"))])
    with _memory(llm) as memory:
        report = memory.add(_observations(), namespace="u")
        assert _sources_by_name(memory) == {"adopted Max": ("D1:1",), "marathon": ("D1:3",)}
        assert report.details["realm"]["llm_failures"] == {"extract": 1}  # turn 3, in the report
        counts = _counts(memory)
        assert counts["batch_reply_cut_salvaged"] == 1 and counts["batch_turn_failed"] == 1
        assert _kept_as_said(memory) == ["D1:4"]  # turn 3 stays findable as it was said


def test_a_reply_cut_before_any_unit_closed_is_halved() -> None:
    from labile_llm.replies import ReplyCutError

    cut = ReplyCutError("cut", raw='{"units": [{"turn": 1, "type": "event", "name": "ado')
    llm = ScriptedLLM(rules=[(BATCH, [cut, _reply(_unit(1, "marathon"), _unit(2, "Lena"))]),
                             (SINGLE, _single("adopted Max"))])
    with _memory(llm) as memory:
        memory.add(_observations(), namespace="u")
        assert set(_sources_by_name(memory)) == {"adopted Max", "marathon", "Lena"}
        assert _counts(memory)["batch_split"] == 1


_raw_unit = st.fixed_dictionaries({
    "turn": st.integers(1, 4), "type": st.sampled_from(["event", "fact"]),
    "name": st.text(max_size=12), "description": st.text(max_size=30),
})


@settings(max_examples=80, deadline=None)
@given(units=st.lists(_raw_unit, max_size=5), data=st.data())
def test_salvage_returns_exactly_the_units_that_closed_before_the_cut(
    units: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Property: a reply cut anywhere gives back the leading units whose JSON closed
    before the cut, in order; an uncut reply gives back all of them."""
    from labile_realm.construct.extract_llm import salvage_units

    text = json.dumps({"units": units, "summary": "s"})
    cut = data.draw(st.integers(0, len(text)))
    salvaged = salvage_units(text[:cut])
    assert salvaged == units[:len(salvaged)]
    closed = sum(1 for i in range(len(units))
                 if len(json.dumps({"units": units[:i + 1]})) - 2 <= cut)
    assert len(salvaged) == closed


def test_salvage_refuses_what_is_not_a_units_reply() -> None:
    from labile_realm.construct.extract_llm import salvage_units

    assert salvage_units("") == [] and salvage_units('{"summary": "x", "units": [{}]}') == []
    assert salvage_units('{"units": [1, {"turn": 1}]}') == []
