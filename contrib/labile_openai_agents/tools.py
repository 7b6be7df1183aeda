"""Memory as function tools for the OpenAI Agents SDK: search, remember, forget.

``memory_tools(memory, namespace="u1")`` gives three `agents.FunctionTool`
objects to put in ``Agent(tools=[...])``:

* ``search_memory(query)``: labile's retrieval, returned as dated evidence
  (`labile_llm.context.render_context`, ``"markdown"`` style by default: dates
  labelled, each memory's source ids listed);
* ``remember(text)``: stores one note the agent wants to keep, said by
  ``speaker`` (default ``"assistant"``), now;
* ``forget_memory(source_ids)``: forgets observations by the source ids
  that ``search_memory`` showed, and everything built from them.

The tools run on a `labile.AsyncMemory`, so the agent's event loop never
waits on the store. A tool that fails with bad input (an empty query, an
over-long text) answers the model with labile's message (`tool_error`),
through the SDK's own tool-error path, and nothing is changed.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any, Final

from agents import FunctionTool, RunContextWrapper, function_tool

from labile import AsyncMemory, InputError, Memory, Observation
from labile_llm.context import render_context

__all__ = ["NOTE_ID_PREFIX", "as_async", "memory_tools", "tool_error"]

#: The id prefix of notes stored by ``remember``.
NOTE_ID_PREFIX: Final = "agent-note-"


def tool_error(_ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model is told when a memory tool fails.

    labile's input errors say what was wrong and what is allowed, without
    secrets, so the model gets them and can correct its call; any other
    failure is named by its kind only (its message may hold internals).
    """
    if isinstance(error, InputError):
        return f"Invalid input: {error}"
    return f"The memory tool failed ({type(error).__name__}); nothing was changed."


def as_async(memory: Memory | AsyncMemory) -> AsyncMemory:
    """``memory`` as an `AsyncMemory` (an open `Memory` is wrapped once)."""
    return memory if isinstance(memory, AsyncMemory) else AsyncMemory(memory)


def _note_id(text: str, when: datetime) -> str:
    digest = hashlib.sha256(f"{when.isoformat()}\x1f{text}".encode()).hexdigest()[:20]
    return NOTE_ID_PREFIX + digest


def memory_tools(
    memory: Memory | AsyncMemory,
    *,
    namespace: str,
    k: int = 8,
    budget_tokens: int = 800,
    style: str = "markdown",
    speaker: str = "assistant",
) -> list[FunctionTool]:
    """The search, remember and forget tools over ``namespace`` of ``memory``.

    Args:
        memory: The memory (a `Memory` is wrapped in an `AsyncMemory`).
        namespace: Whose memory the tools read and write.
        k: Hits per search.
        budget_tokens: Token budget of a search's answer (see
            `labile_llm.context.render_context` for how tokens are estimated).
        style: The context style shown to the model.
        speaker: Who the notes stored by ``remember`` are attributed to.
    """
    amem = as_async(memory)

    async def search_memory(query: str) -> str:
        """Search the long-term memory of past conversations and notes.

        Args:
            query: What to look for, in plain words (a question works).
        """
        result = await amem.search(query, namespace=namespace, k=k)
        context = render_context(result.hits, budget_tokens=budget_tokens, style=style)
        return context.text or "No memories match."

    async def remember(text: str) -> str:
        """Store a fact or note in long-term memory, to be found by later searches.

        Args:
            text: The note, as a self-contained sentence.
        """
        now = datetime.now(UTC)
        obs = Observation(id=_note_id(text, now), text=text, timestamp=now, speaker=speaker)
        report = await amem.add([obs], namespace=namespace)
        return f"Remembered (source id {obs.id})." if report.added else "Already remembered."

    async def forget_memory(source_ids: list[str]) -> str:
        """Forget memories by the source ids that search_memory listed.

        Args:
            source_ids: The source ids to forget.
        """
        counts: dict[str, Any] = await amem.forget(namespace, source_ids)
        forgotten = int(counts.get("observations", 0))
        unknown = int(counts.get("unknown", 0))
        return f"Forgot {forgotten} source(s); {unknown} id(s) were not found."

    return [function_tool(fn, failure_error_function=tool_error)
            for fn in (search_memory, remember, forget_memory)]
