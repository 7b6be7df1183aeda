"""labile_llamaindex: LabileMemoryBlock inside LlamaIndex's Memory and SimpleChatEngine."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from typing import Any

import pytest

from extras import require_module

require_module("llama_index.core.memory", "pip install -e '.[llamaindex]'")


from adapters_helpers import OFFLINE, run_example
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import MockLLM
from pydantic import ValidationError

from labile import Memory
from labile_llamaindex import LabileMemoryBlock

#: Small limits so the short-term queue flushes after a turn or two; whitespace
#: tokens, so nothing loads a tokenizer file.
SMALL: dict[str, Any] = {"token_limit": 40, "token_flush_size": 10, "tokenizer_fn": str.split}


# LlamaIndex's chat Memory keeps its history in an in-memory SQLite database through
# aiosqlite, and never closes that connection: it warns when garbage-collected. That is
# LlamaIndex's to fix; here it is collected (and its warning ignored) before each test
# of this module ends, so it cannot surface in another test.
pytestmark = [pytest.mark.extras, pytest.mark.filterwarnings("ignore::ResourceWarning"),
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory.open(OFFLINE) as mem:
        yield mem
    gc.collect()


def test_documented_memory_carries_facts_to_a_later_session(memory: Memory) -> None:
    chat_memory = run_example("llamaindex.md", "llamaindex-memory")["chat_memory"]
    monday = SimpleChatEngine.from_defaults(llm=MockLLM(),
                                            memory=chat_memory(memory, "u1", "monday", **SMALL))
    monday.chat("My dog is called Rex and he loves the beach.")
    monday.chat("I also play the cello on weekends.")
    remembered = memory.list("u1").items
    assert remembered, "the short-term queue flushed nothing into labile"
    assert remembered[0].text == "My dog is called Rex and he loves the beach."
    assert remembered[0].speaker == "user" and remembered[0].session == "monday"

    friday = SimpleChatEngine.from_defaults(llm=MockLLM(),
                                            memory=chat_memory(memory, "u1", "friday", **SMALL))
    reply = friday.chat("What is my dog called?")  # MockLLM answers with its whole prompt
    assert "My dog is called Rex and he loves the beach." in str(reply)
    stranger = SimpleChatEngine.from_defaults(
        llm=MockLLM(), memory=chat_memory(memory, "u2", "friday", **SMALL))
    assert "Rex" not in str(stranger.chat("What is my dog called?"))


def test_block_puts_text_messages_once_and_gets_context(memory: Memory) -> None:
    block = LabileMemoryBlock(memory=memory, namespace="u1", style="markdown")
    said = ChatMessage(role="user", blocks=[TextBlock(text="I live in Porto."),
                                            ImageBlock(url="http://example.invalid/x.png")])
    messages = [said, ChatMessage(role="assistant", content="Lovely city."),
                ChatMessage(role="system", content="Be terse."),
                ChatMessage(role="tool", content="{\"raw\": 1}"),
                ChatMessage(role="user", content="   ")]

    async def run() -> tuple[str, str]:
        await block.aput(messages, session_id="s1")
        await block.aput(messages[:1], session_id="s1")  # flushed again: stored once
        got = await block.aget([ChatMessage(role="user", content="Where do I live?")])
        empty = await block.aget([])
        return got, empty

    got, empty = asyncio.run(run())
    assert [(o.speaker, o.text, o.session) for o in memory.list("u1").items] == [
        ("user", "I live in Porto.", "s1"), ("assistant", "Lovely city.", "s1")]
    assert "I live in Porto." in got and got.startswith("1. (dated ")
    assert empty == ""


def test_truncate_renders_the_same_evidence_smaller(memory: Memory) -> None:
    block = LabileMemoryBlock(memory=memory, namespace="u1")
    facts = ["Ana plays the cello in an orchestra.", "Ana's cello is from 1890.",
             "Ana practises the cello every morning before work."]

    async def run() -> tuple[str, str | None, str | None]:
        await block.aput([ChatMessage(role="user", content=f) for f in facts])
        full = await block.aget([ChatMessage(role="user", content="cello")])
        return (full, await block.atruncate(full, 15),
                await block.atruncate(full, 10_000))

    full, smaller, gone = asyncio.run(run())
    assert len(full.splitlines()) == 3
    assert smaller is not None and 0 < len(smaller.splitlines()) < 3
    assert all(line.split(") ", 1)[1] in full for line in smaller.splitlines())
    assert gone is None


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"memory": object(), "namespace": "u1"}, "memory must be a labile Memory"),
    ({"namespace": "  "}, "namespace must be a non-empty string"),
    ({"namespace": "u1", "budget_tokens": 0}, "budget_tokens"),
])
def test_bad_settings_are_refused_by_name(memory: Memory, kwargs: dict[str, Any],
                                          message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        LabileMemoryBlock(**{"memory": memory, **kwargs})
