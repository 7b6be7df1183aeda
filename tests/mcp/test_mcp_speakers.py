"""The MCP add tool (#28 items 3 and 7): ``speakers``, introductions remembered across
calls, ids from role and content when no time is given."""

from __future__ import annotations

from mcp_helpers import tool_text
from test_mcp_strict import calls

from labile_mcp.convert import messages_to_observations
from labile_mcp.policy import ServePolicy

POLICY = ServePolicy(namespaces=("maya",))


def test_a_note_sent_twice_without_a_time_is_one_memory() -> None:
    note = {"text": "The spare key is under the blue pot."}
    results, held = calls(POLICY, ("add_memories", note), ("add_memories", note))
    first, again = (r.structured_content for r in results)
    assert len(first["added"]) == 1
    assert again["added"] == [] and again["already_stored"] == first["added"]
    assert len(held.turns) == 1


def test_repeats_within_one_call_are_turns_and_resending_the_call_adds_nothing() -> None:
    turns = {"messages": [{"role": "user", "content": "ok"},
                          {"role": "assistant", "content": "Shall I book it?"},
                          {"role": "user", "content": "ok"}]}
    results, held = calls(POLICY, ("add_memories", turns), ("add_memories", turns))
    assert len(results[0].structured_content["added"]) == 3
    assert results[1].structured_content["added"] == []
    assert len(held.turns) == 3


def test_derived_ids_ignore_a_defaulted_time_but_not_a_given_one() -> None:
    from datetime import UTC, datetime

    msg = {"role": "user", "content": "hello"}
    monday = messages_to_observations([msg], now=datetime(2025, 1, 6, tzinfo=UTC))
    tuesday = messages_to_observations([msg], now=datetime(2025, 1, 7, tzinfo=UTC))
    dated = messages_to_observations([{**msg, "time": "2025-01-06T00:00:00Z"}],
                                     now=datetime(2025, 1, 7, tzinfo=UTC))
    assert monday[0].id == tuesday[0].id != dated[0].id


def test_speakers_and_introductions_name_roles_across_calls() -> None:
    results, held = calls(
        POLICY,
        ("add_memories", {"messages": [{"role": "user", "content": "Hi, I'm Maya!"}]}),
        ("add_memories", {"messages": [{"role": "user", "content": "I adopted a cat."}]}),
        ("add_memories", {"messages": [{"role": "assistant", "content": "Lovely."}],
                          "speakers": {"assistant": "Kit"}}),
        ("add_memories", {"text": "hi", "speakers": {"user": ""}}),
    )
    assert not any(r.is_error for r in results[:3])
    assert set(held.turns.values()) == {("Hi, I'm Maya!", "Maya"), ("I adopted a cat.", "Maya"),
                                        ("Lovely.", "Kit")}
    assert results[3].is_error and "needs a role and a name" in tool_text(results[3])


def test_resending_an_explicit_id_of_a_named_turn_is_still_a_no_op() -> None:
    turn = {"id": "m1", "role": "user", "content": "Hi, I'm Maya!",
            "time": "2024-04-20T14:00:00+00:00"}
    results, held = calls(POLICY, ("add_memories", {"messages": [turn]}),
                          ("add_memories", {"messages": [turn]}))
    assert not results[1].is_error, tool_text(results[1])
    assert results[1].structured_content["already_stored"] == ["m1"]
    assert held.turns == {"m1": ("Hi, I'm Maya!", "Maya")}
