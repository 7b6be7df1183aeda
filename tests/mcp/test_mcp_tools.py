"""The tools in process, through the SDK's own client: results, and bad input refused.

Every refusal is an MCP error result whose message says what was wrong, and
leaves the memory exactly as it was.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_helpers import IN_MEMORY, in_process_client, tool_text

from labile import Memory
from labile_mcp.policy import ServePolicy

TALK = [
    {"content": "I adopted a cat called Pixel last Saturday", "role": "Maya",
     "time": "2024-04-20T14:00:00+00:00", "session": "s1"},
    {"content": "Pixel sounds lovely! What colour is she?", "role": "assistant",
     "time": "2024-04-20T14:01:00+00:00", "session": "s1"},
    {"content": "She is grey with white paws", "role": "Maya",
     "time": "2024-04-20T14:02:00Z", "session": "s1"},
]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_tools_are_listed_with_schemas_and_descriptions() -> None:
    async def main() -> None:
        client, amem = in_process_client(ServePolicy(namespaces=("maya",)))
        async with client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        await amem.aclose()
        assert set(tools) == {"add_memories", "search_memory", "memory_stats", "get_memories",
                              "list_memories", "forget_memories"}  # no purge unless allowed
        for tool in tools.values():
            assert tool.description and "'maya'" in tool.description
            assert tool.input_schema["type"] == "object"
        assert tools["search_memory"].input_schema["required"] == ["query"]
        assert tools["search_memory"].annotations.read_only_hint is True
        assert tools["forget_memories"].annotations.destructive_hint is True
        message = tools["add_memories"].input_schema["$defs"]["ChatMessage"]
        assert message["required"] == ["content"] and not message["additionalProperties"]

    run(main())


def test_add_search_and_stats_round_trip_with_sources_and_dates() -> None:
    async def main() -> None:
        client, amem = in_process_client(ServePolicy(namespaces=("maya",)))
        async with client:
            added = (await client.call_tool("add_memories", {"messages": TALK})).structured_content
            again = (await client.call_tool("add_memories", {"messages": TALK})).structured_content
            found = await client.call_tool("search_memory", {"query": "colour of Pixel", "k": 2})
            stats = (await client.call_tool("memory_stats", {})).structured_content
        await amem.aclose()
        assert len(added["added"]) == 3 and added["namespace"] == "maya"
        assert again["added"] == [] and sorted(again["already_stored"]) == sorted(added["added"])
        assert not found.is_error
        hits = found.structured_content["hits"]
        assert [h["rank"] for h in hits] == [1, 2]
        top = hits[0]
        assert found.structured_content["schema"] == "labile.hit/1"
        assert top["dates"]["said"][0].startswith("2024-04-20")
        assert top["reached"]["stage"] == "seed"
        assert top["sources"] and top["sources"][0]["id"] in added["added"]
        assert {s["speaker"] for h in hits for s in h["sources"]} <= {"Maya", "assistant"}
        assert stats["store"]["observations"] == 3

    run(main())


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("search_memory", {}, "query"),                                          # missing field
    ("search_memory", {"query": 42}, "valid string"),                         # wrong type
    ("search_memory", {"query": "x", "k": "many"}, "valid integer"),
    ("search_memory", {"query": "x", "k": 0}, "greater than or equal to 1"),
    ("search_memory", {"query": "x", "k": 51}, "less than or equal to 50"),  # declared max
    ("search_memory", {"query": "x", "as_of": "last week"}, "ISO 8601"),
    ("search_memory", {"query": "x" * 100_001}, "at most 100,000"),            # huge text
    ("search_memory", {"query": "x", "namespace": "eve"}, "not served here"),
    ("add_memories", {}, "exactly one of"),
    ("add_memories", {"text": "a", "messages": [{"content": "b"}]}, "exactly one of"),
    ("add_memories", {"messages": []}, "is empty"),
    ("add_memories", {"messages": [{"role": "user"}]}, "content"),          # missing field
    ("add_memories", {"messages": "hello"}, "valid list"),                   # wrong type
    ("add_memories", {"messages": [{"content": "a", "speaker": "x"}]}, "speaker"),  # unknown
    ("add_memories", {"messages": [{"content": "a", "time": "yesterday"}]}, "ISO 8601"),
    ("add_memories", {"messages": [{"content": "   "}]}, "empty"),
    ("add_memories", {"text": "y" * 100_001}, "at most 100,000"),              # huge text
    ("add_memories", {"messages": [{"content": "m"}] * 501}, "at most 500"),
    ("add_memories", {"text": "hello", "namespace": "eve"}, "not served here"),
    ("memory_stats", {"namespace": "../maya"}, "not served here"),
    ("get_memories", {}, "ids"),
    ("get_memories", {"ids": "t1"}, "valid list"),
    ("get_memories", {"ids": [""]}, "non-empty strings"),
    ("list_memories", {"limit": 101}, "less than or equal to 100"),
    ("list_memories", {"offset": -1}, "greater than or equal to 0"),
    ("forget_memories", {"ids": []}, "at least 1 item"),
    ("forget_memories", {"ids": [1, 2]}, "valid string"),
    ("forget_memories", {"ids": ["x"], "namespace": "eve"}, "not served here"),
    ("forget_memories", {"ids": ["x"] * 501}, "at most 500 items"),
]


@pytest.mark.parametrize(("tool", "args", "expected"), BAD_CALLS,
                         ids=[f"{t}-{e}" for t, _, e in BAD_CALLS])
def test_bad_input_is_an_error_result_and_changes_nothing(
    tool: str, args: dict[str, Any], expected: str,
) -> None:
    memory = Memory.open(IN_MEMORY)

    async def main() -> Any:
        client, amem = in_process_client(ServePolicy(namespaces=("maya",)), memory)
        async with client:
            await client.call_tool("add_memories", {"messages": TALK[:1]})
            before = memory.store.stats()
            result = await client.call_tool(tool, args)
            after = memory.store.stats()
        await amem.aclose()
        return result, before, after

    result, before, after = run(main())
    assert result.is_error, result
    assert expected in tool_text(result)
    assert after == before


def test_several_namespaces_require_one_to_be_named() -> None:
    async def main() -> tuple[str, Any]:
        client, amem = in_process_client(ServePolicy(namespaces=("alice", "bob")))
        async with client:
            missing = await client.call_tool("add_memories", {"text": "hi"})
            named = await client.call_tool("add_memories", {"text": "hi", "namespace": "bob"})
        await amem.aclose()
        return tool_text(missing), named.structured_content

    missing, named = run(main())
    assert "name one with 'namespace' (allowed: alice, bob)" in missing
    assert named["namespace"] == "bob" and len(named["added"]) == 1


@settings(max_examples=25, deadline=None)
@given(st.text(min_size=1, max_size=20).filter(lambda s: s not in ("alice", "bob")))
def test_no_call_reaches_a_namespace_outside_the_allow_list(namespace: str) -> None:
    """Property: whatever namespace a client names, if it is not served the call is
    refused and no namespace of the store gains anything."""
    memory = Memory.open(IN_MEMORY)

    async def main() -> list[Any]:
        client, amem = in_process_client(ServePolicy(namespaces=("alice", "bob")), memory)
        async with client:
            results = [
                await client.call_tool("add_memories", {"text": "secret", "namespace": namespace}),
                await client.call_tool("search_memory", {"query": "secret",
                                                         "namespace": namespace}),
                await client.call_tool("memory_stats", {"namespace": namespace}),
            ]
        await amem.aclose()
        return results

    assert all(r.is_error for r in run(main()))
    assert memory.store.namespaces() == []


def test_read_back_page_and_forget_a_turn() -> None:
    async def main() -> dict[str, Any]:
        client, amem = in_process_client(ServePolicy(namespaces=("maya",)))
        out: dict[str, Any] = {}
        async with client:
            ids = (await client.call_tool("add_memories", {"messages": TALK})
                   ).structured_content["added"]
            out["ids"] = ids
            out["got"] = (await client.call_tool("get_memories", {"ids": [ids[2], "nope"]})
                          ).structured_content
            out["page1"] = (await client.call_tool("list_memories", {"limit": 2})
                            ).structured_content
            out["page2"] = (await client.call_tool("list_memories", {"offset": 2})
                            ).structured_content
            out["forget"] = (await client.call_tool("forget_memories", {"ids": [ids[0]]})
                             ).structured_content
            out["search"] = (await client.call_tool("search_memory", {"query": "cat Pixel",
                                                                      "k": 10})
                             ).structured_content
            out["left"] = (await client.call_tool("list_memories", {})).structured_content
        await amem.aclose()
        return out

    out = run(main())
    ids = out["ids"]
    assert [m["text"] for m in out["got"]["memories"]] == [TALK[2]["content"]]
    assert out["got"]["unknown"] == ["nope"]
    assert [m["id"] for m in out["page1"]["memories"]] == ids[:2]
    assert out["page1"]["next_offset"] == 2 and out["page1"]["total"] == 3
    assert [m["id"] for m in out["page2"]["memories"]] == ids[2:]
    assert out["page2"]["next_offset"] is None
    assert out["forget"]["removed"]["observations"] == 1
    sources = [s["id"] for h in out["search"]["hits"] for s in h["sources"]]
    assert ids[0] not in sources and ids[1] in sources
    assert [m["id"] for m in out["left"]["memories"]] == ids[1:]


def test_purge_exists_only_when_allowed_and_asks_for_the_name() -> None:
    async def main() -> dict[str, Any]:
        client, amem = in_process_client(ServePolicy(namespaces=("alice", "bob"),
                                                     allow_purge=True))
        out: dict[str, Any] = {}
        async with client:
            out["tools"] = [t.name for t in (await client.list_tools()).tools]
            for ns in ("alice", "bob"):
                await client.call_tool("add_memories", {"text": f"{ns} note", "namespace": ns})
            out["wrong"] = await client.call_tool("purge_memories", {
                "confirm": "bob", "namespace": "alice"})
            out["right"] = await client.call_tool("purge_memories", {
                "confirm": "alice", "namespace": "alice"})
            out["alice"] = (await client.call_tool("list_memories", {"namespace": "alice"})
                            ).structured_content
            out["bob"] = (await client.call_tool("list_memories", {"namespace": "bob"})
                          ).structured_content
        await amem.aclose()
        return out

    out = run(main())
    assert "purge_memories" in out["tools"]
    assert out["wrong"].is_error and "repeat the namespace's name ('alice')" in tool_text(
        out["wrong"])
    assert out["right"].structured_content == {"namespace": "alice", "purged": True}
    assert out["alice"]["total"] == 0 and out["bob"]["total"] == 1  # the other one untouched
