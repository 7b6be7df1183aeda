"""labile_openai_agents: the memory tools and LabileSession in the SDK's own agent loop."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from extras import require_module

require_module("agents.testing", "pip install -e '.[openai-agents]'")


from adapters_helpers import OFFLINE, run_example
from agents import Agent, RunConfig, Runner
from agents.testing import ModelCall, ScriptedModel, assistant_message, function_call

from labile import AsyncMemory, Memory
from labile_openai_agents import LabileSession, message_text

NO_TRACES = RunConfig(tracing_disabled=True)  # the SDK would export traces to its backend

pytestmark = pytest.mark.extras


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory.open(OFFLINE) as mem:
        yield mem


def tool_outputs(call: ModelCall) -> list[str]:
    """The tool results the model was shown in this call, oldest first."""
    items = call.input if isinstance(call.input, list) else []
    return [str(i["output"]) for i in items
            if isinstance(i, dict) and i.get("type") == "function_call_output"]


def run(agent: Agent[Any], text: str, **kwargs: Any) -> Any:
    return asyncio.run(Runner.run(agent, text, run_config=NO_TRACES, **kwargs))


def documented_agent(memory: Memory, user: str, model: ScriptedModel) -> Agent[Any]:
    example = run_example("openai-agents.md", "openai-agents-memory")
    agent: Agent[Any] = example["make_agent"](AsyncMemory(memory), user, model)
    return agent


def test_remember_search_forget_through_the_agent_loop(memory: Memory) -> None:
    model = ScriptedModel([
        [function_call("remember", {"text": "The user's dog is called Rex."}, call_id="c1")],
        [assistant_message("Noted.")],
    ])
    agent = documented_agent(memory, "u1", model)
    assert run(agent, "Remember that my dog is Rex.").final_output == "Noted."
    (note,) = memory.list("u1").items
    assert note.text == "The user's dog is called Rex." and note.speaker == "assistant"
    assert tool_outputs(model.calls[1]) == [f"Remembered (source id {note.id})."]

    model.extend([
        [function_call("search_memory", {"query": "dog called"}, call_id="c2")],
        [assistant_message("Your dog is Rex.")],
        [function_call("forget_memory", {"source_ids": [note.id, "nope"]}, call_id="c3")],
        [assistant_message("Forgotten.")],
        [function_call("search_memory", {"query": "dog called"}, call_id="c4")],
        [assistant_message("I don't know.")],
    ])
    assert run(agent, "What is my dog called?").final_output == "Your dog is Rex."
    (shown,) = tool_outputs(model.calls[3])
    assert "The user's dog is called Rex." in shown and f"sources: {note.id}" in shown
    assert shown.startswith("1. (dated ")  # labelled dates, the markdown style
    run(agent, "Forget about my dog.")
    assert tool_outputs(model.calls[5]) == ["Forgot 1 source(s); 1 id(s) were not found."]
    run(agent, "What is my dog called?")
    assert tool_outputs(model.calls[7]) == ["No memories match."]
    assert memory.list("u1").total == 0
    model.assert_complete()
    assert {t.name for t in model.calls[0].tools} == {"search_memory", "remember",
                                                      "forget_memory"}


def test_bad_tool_input_reaches_the_model_and_changes_nothing(memory: Memory) -> None:
    model = ScriptedModel([
        [function_call("remember", {"text": "Keep this."}, call_id="c1")],
        [function_call("search_memory", {"query": "   "}, call_id="c2")],
        [function_call("remember", {"text": ""}, call_id="c3")],
        [assistant_message("Sorry.")],
    ])
    run(documented_agent(memory, "u1", model), "Look up nothing.")
    search_error, remember_error = tool_outputs(model.calls[3])[1:]
    assert "query must be a non-empty string" in search_error
    assert "empty text" in remember_error
    assert [o.text for o in memory.list("u1").items] == ["Keep this."]


def test_session_remembers_messages_for_later_sessions(memory: Memory) -> None:
    amem = AsyncMemory(memory)
    model = ScriptedModel([
        [assistant_message("Nice name!")],
        [function_call("search_memory", {"query": "dog called"}, call_id="c1")],
        [assistant_message("Rex.")],
    ])
    agent = documented_agent(memory, "u1", model)
    monday = LabileSession("monday", amem, namespace="u1")
    run(agent, "My dog is called Rex.", session=monday)
    remembered = memory.list("u1").items
    assert [(o.speaker, o.text, o.session) for o in remembered] == [
        ("user", "My dog is called Rex.", "monday"), ("assistant", "Nice name!", "monday")]
    friday = LabileSession("friday", amem, namespace="u1")
    assert run(agent, "What is my dog called?", session=friday).final_output == "Rex."
    assert "My dog is called Rex." in tool_outputs(model.calls[2])[0]
    # the friday history holds only friday's items; tool calls are not remembered
    friday_items = asyncio.run(friday.get_items())
    assert [message_text(i) for i in friday_items if message_text(i)] == [
        ("user", "What is my dog called?"), ("assistant", "Rex.")]
    assert memory.list("u1").total == 4


def test_pop_forgets_and_clear_keeps_memory(memory: Memory) -> None:
    session = LabileSession("s", memory, namespace="u1")

    async def run_session() -> Any:
        await session.add_items([
            {"role": "user", "content": "I live in Porto."},
            {"role": "assistant", "content": [{"type": "output_text", "text": "Lovely city."}]},
            {"type": "function_call_output", "call_id": "x", "output": "{\"raw\": 1}"},
            {"role": "system", "content": "You are terse."},
        ])
        assert memory.list("u1").total == 2  # tool output and system prompt not remembered
        await session.add_items([{"role": "user", "content": "Actually, Lisbon."}])
        popped = await session.pop_item()
        after_pop = [o.text for o in memory.list("u1").items]
        await session.clear_session()
        return popped, after_pop, await session.get_items()

    popped, after_pop, items = asyncio.run(run_session())
    assert popped == {"role": "user", "content": "Actually, Lisbon."}
    assert after_pop == ["I live in Porto.", "Lovely city."]
    assert items == [] and memory.list("u1").total == 2


@pytest.mark.parametrize(("item", "expected"), [
    ({"role": "user", "content": "hi"}, ("user", "hi")),
    ({"role": "user", "content": [{"type": "input_text", "text": "a"},
                                  {"type": "input_image", "image_url": "x"},
                                  {"type": "input_text", "text": "b"}]}, ("user", "a\nb")),
    ({"role": "assistant", "type": "message", "content": "   "}, None),
    ({"role": "tool", "content": "x"}, None),
    ({"type": "function_call", "name": "f", "arguments": json.dumps({})}, None),
    ({"role": "user", "content": 3}, None),
])
def test_message_text_reads_only_text_messages(item: dict[str, Any],
                                               expected: tuple[str, str] | None) -> None:
    assert message_text(item) == expected


def test_other_failures_reach_the_model_by_kind_only() -> None:
    from labile_openai_agents.tools import tool_error

    told = tool_error(None, RuntimeError("disk /secret/path is full"))  # type: ignore[arg-type]
    assert told == "The memory tool failed (RuntimeError); nothing was changed."
