"""The MCP server holds every call to its schema (#31, #27 item 9): its version, closed
schemas with declared bounds, one-line errors, every text bounded, one turn per id, and
a plain note that nobody said."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_helpers import IN_MEMORY, in_process_client, tool_text

import labile
from labile import Memory
from labile.plugin import DEFAULT_K
from labile_mcp.policy import ServePolicy

TURN = {"id": "t1", "content": "I adopted a cat called Pixel", "role": "Maya",
        "time": "2024-04-20T14:00:00+00:00", "session": "s1"}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def calls(policy: ServePolicy, *steps: tuple[str, dict[str, Any]],
          memory: Memory | None = None) -> tuple[list[Any], Stored]:
    """Each ``(tool, arguments)`` called in order on a server over ``memory`` (default: a
    fresh in-memory one), and what namespace ``maya`` holds after them."""
    memory = memory or Memory.open(IN_MEMORY)

    async def main() -> tuple[list[Any], Stored]:
        client, amem = in_process_client(policy, memory)
        async with client:
            results = [await client.call_tool(tool, args) for tool, args in steps]
        held = Stored(
            turns={o.id: (o.text, o.speaker) for o in memory.list("maya", limit=100).items},
            nodes=[f"{n.description or ''} {n.content or ''}"
                   for n in memory.list_nodes("maya", limit=100).items])
        await amem.aclose()  # closes the memory too
        return results, held

    return run(main())  # type: ignore[no-any-return]


@attrs.frozen
class Stored:
    """What a namespace holds: its turns (id -> text, speaker) and its nodes' texts."""

    turns: dict[str, tuple[str, str | None]]
    nodes: list[str]


def test_the_server_reports_labiles_version() -> None:
    async def main() -> Any:
        client, amem = in_process_client(ServePolicy(namespaces=("maya",)))
        async with client:
            info = client.server_info
        await amem.aclose()
        return info

    info = run(main())
    assert info.name == "labile" and info.version == labile.__version__ != ""


def test_every_schema_is_closed_and_declares_its_bounds() -> None:
    async def main() -> dict[str, Any]:
        client, amem = in_process_client(ServePolicy(namespaces=("maya",), max_k=30,
                                                     allow_purge=True))
        async with client:
            tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        await amem.aclose()
        return tools

    tools = run(main())
    assert len(tools) == 7
    assert all(schema["additionalProperties"] is False for schema in tools.values())
    k = tools["search_memory"]["properties"]["k"]
    assert (k["minimum"], k["maximum"], k["default"]) == (1, 30, DEFAULT_K)


@pytest.mark.parametrize(("tool", "args", "named"), [
    ("search_memory", {"query": "cat", "user_id": "bob"}, "'user_id'"),
    ("add_memories", {"text": "a note", "user_id": "bob", "metadata": {}}, "'metadata', 'user_id'"),
    ("memory_stats", {"verbose": True}, "'verbose'"),
    ("forget_memories", {"ids": ["t1"], "erase": True}, "'erase'"),
])
def test_an_argument_a_tool_does_not_take_is_refused_and_changes_nothing(
    tool: str, args: dict[str, Any], named: str,
) -> None:
    (first, result), held = calls(ServePolicy(namespaces=("maya",)),
                                    ("add_memories", {"messages": [TURN]}), (tool, args))
    assert not first.is_error and result.is_error
    assert f"{tool} takes no argument {named} (its arguments: " in tool_text(result)
    assert held.turns == {"t1": (TURN["content"], "Maya")}


@pytest.mark.parametrize(("tool", "args", "expected"), [
    ("search_memory", {"query": 42}, "invalid arguments to search_memory: query: Input should "
                                     "be a valid string"),
    ("search_memory", {"query": "x", "k": 51}, "k: Input should be less than or equal to 50"),
    ("search_memory", {}, "invalid arguments to search_memory: query: required"),
    ("add_memories", {"messages": [{"content": "a", "speaker": "x"}]},
     "messages[0].speaker: not a field of this object"),
    ("add_memories", {"messages": [{"content": 1}, {"role": "x"}]},
     "messages[0].content: Input should be a valid string; messages[1].content: required"),
    ("list_memories", {"offset": -1, "limit": 0}, "offset: Input should be greater than or "
                                                  "equal to 0; limit: Input should be"),
])
def test_schema_violations_come_back_as_one_line_naming_the_fields(
    tool: str, args: dict[str, Any], expected: str,
) -> None:
    (result,), _ = calls(ServePolicy(namespaces=("maya",)), (tool, args))
    text = tool_text(result)
    assert result.is_error and expected in text
    assert "\n" not in text and "http" not in text and "input_value" not in text


FIELDS = ("content", "role", "id", "session", "time")


@settings(max_examples=30, deadline=None)
@given(field=st.sampled_from(FIELDS), extra=st.integers(1, 500), at=st.integers(0, 2))
def test_every_text_field_is_bounded(field: str, extra: int, at: int) -> None:
    """Property: a message with any one text over --max-text-chars is refused, naming the
    field and where it is, and nothing of the call is stored."""
    limit = 64
    messages = [{"content": f"turn {i}", "role": "Maya"} for i in range(3)]
    messages[at][field] = "x" * (limit + extra)
    (result,), held = calls(ServePolicy(namespaces=("maya",), max_text_chars=limit),
                              ("add_memories", {"messages": messages}))
    assert result.is_error
    assert (f"messages[{at}].{field} has {limit + extra:,} characters; this server accepts at "
            f"most {limit} in any text (--max-text-chars)") in tool_text(result)
    assert held.turns == {}


def test_ids_and_queries_and_argument_names_are_bounded_too() -> None:
    policy = ServePolicy(namespaces=("maya",), max_text_chars=32)
    results, _ = calls(policy, ("get_memories", {"ids": ["a", "b" * 33]}),
                       ("search_memory", {"query": "q" * 40}),
                       ("memory_stats", {"n" * 50: 1}))
    texts = [tool_text(r) for r in results]
    assert all(r.is_error for r in results)
    assert "ids[1] has 33 characters" in texts[0] and "query has 40 characters" in texts[1]
    assert "the name of an argument in the call has 50 characters" in texts[2]


def test_two_turns_under_one_id_in_one_call_are_refused() -> None:
    other = {**TURN, "content": "I adopted a dog called Rex"}
    (result,), held = calls(ServePolicy(namespaces=("maya",)),
                              ("add_memories", {"messages": [TURN, other]}))
    assert result.is_error
    assert ("messages[1] has the id 't1' of messages[0] but another content: one id names one "
            "turn") in tool_text(result)
    assert held.turns == {}


def test_a_turn_under_an_id_already_stored_is_refused_and_a_repeat_is_a_no_op() -> None:
    policy = ServePolicy(namespaces=("maya",))
    moved = {**TURN, "role": "Tom", "time": "2024-04-21T09:00:00+00:00"}
    untimed = {k: v for k, v in TURN.items() if k != "time"}
    results, held = calls(
        policy,
        ("add_memories", {"messages": [TURN]}),
        ("add_memories", {"messages": [{**TURN, "content": "I adopted a dog called Rex"}]}),
        ("add_memories", {"messages": [{"content": "new", "id": "t2"}, moved]}),
        ("add_memories", {"messages": [TURN, TURN]}),  # the same turn, sent twice: no-op
        ("add_memories", {"messages": [untimed]}),      # no time: the stored one stands
    )
    first, content, role, same, untimed_result = results
    assert first.structured_content["added"] == ["t1"]
    assert content.is_error and "the id 't1' is already stored with another content" in \
        tool_text(content)
    assert role.is_error and "messages[1]: the id 't1' is already stored with another role " \
        "and time" in tool_text(role)
    assert same.structured_content["already_stored"] == ["t1"]
    assert untimed_result.structured_content["already_stored"] == ["t1"]
    assert held.turns == {"t1": (TURN["content"], "Maya")}  # t2 was refused with t1


def test_a_plain_note_is_not_said_by_someone() -> None:
    realm = {"preset": "realm", "store": {"type": "memory"}, "embedder": {"type": "hashing"}}
    (added,), held = calls(ServePolicy(namespaces=("maya",)),
                           ("add_memories", {"text": "Dentist appointment moved to Friday 3pm. "
                                                     "Bring the insurance card."}),
                           memory=Memory.open(realm))
    assert not added.is_error and held.nodes
    assert not any("someone" in t for t in held.nodes), held.nodes
    assert any("a note: Dentist appointment moved" in t for t in held.nodes), held.nodes
