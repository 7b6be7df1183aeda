"""`LabileMemoryBlock`: a labile namespace as a long-term block of LlamaIndex's `Memory`.

Why a memory block and not a retriever: LlamaIndex's `Memory` (the
``memory=`` of its chat engines and agents) keeps the recent chat in a
short-term queue and, when that queue outgrows its token limit, hands the
oldest messages to its memory blocks, which then add what they hold to the
prompt on every turn. That is both directions a long-term memory needs:
writes of what was said, and reads for the current turn. A retriever would
only read, and would need the application to store turns itself.

* ``aput`` (messages flushed from the short-term queue): every user and
  assistant text message becomes an observation in ``namespace``, with the
  chat's session id;
* ``aget`` (each turn): labile searches with the latest message's text and
  returns the prompt context of the hits (`labile_llm.context.render_context`)
  within ``budget_tokens``; the `Memory` puts it in the system prompt (or
  wherever its template says);
* ``atruncate``: when the `Memory` needs room, the same evidence is
  rendered again in fewer tokens (the least relevant entries go first),
  instead of the whole block being dropped.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import Field, PrivateAttr, field_validator  # what LlamaIndex's bridge re-exports

from labile import AsyncMemory, Memory, Observation, RetrievalResult
from labile_llm.context import render_context
from labile_llm.tokens import estimate_tokens

__all__ = ["LabileMemoryBlock", "message_text"]

#: Which roles' messages become memory.
REMEMBERED_ROLES: Final = frozenset({"user", "assistant"})


def message_text(message: ChatMessage) -> str:
    """The text blocks of ``message`` joined by newlines (images and audio left out)."""
    return "\n".join(b.text for b in message.blocks if isinstance(b, TextBlock)).strip()


# The ignore is for type-checking without llama-index-core installed (its base is then Any).
class LabileMemoryBlock(BaseMemoryBlock[str]):  # type: ignore[misc,unused-ignore]
    """Long-term memory for a LlamaIndex `Memory`, backed by a labile namespace."""

    name: str = Field(default="labile_memory", description="The block's name in the prompt.")
    description: str | None = Field(
        default="Dated memories of earlier conversations, newest first.",
        description="What the block holds.")
    priority: int = Field(default=1, description="Truncation priority (0: never truncate).")
    memory: Any = Field(description="The labile Memory or AsyncMemory.", exclude=True)
    namespace: str = Field(description="Whose memory the block reads and writes.")
    k: int = Field(default=8, ge=1, description="Hits per search.")
    budget_tokens: int = Field(default=800, ge=1, description="Token budget of the evidence.")
    style: str = Field(default="lines", description="The context style (see labile docs).")
    _async: AsyncMemory = PrivateAttr()
    _last: RetrievalResult | None = PrivateAttr(default=None)

    @field_validator("memory")
    @classmethod
    def _is_memory(cls, value: Any) -> Any:
        if not isinstance(value, Memory | AsyncMemory):
            raise ValueError(f"memory must be a labile Memory or AsyncMemory, got "
                             f"{type(value).__name__}")
        return value

    @field_validator("namespace")
    @classmethod
    def _nonempty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("namespace must be a non-empty string")
        return value

    def model_post_init(self, context: Any, /) -> None:
        """Wrap a plain `Memory` once, so every call runs off the event loop."""
        super().model_post_init(context)
        memory = self.memory
        self._async = memory if isinstance(memory, AsyncMemory) else AsyncMemory(memory)

    def observation_id(self, message: ChatMessage, text: str) -> str:
        """The id a flushed message is remembered under: its session, role and text."""
        key = "\x1f".join((str(message.additional_kwargs.get("session_id", "")),
                           str(message.role.value), text))
        return f"llamaindex-{hashlib.sha256(key.encode()).hexdigest()[:24]}"

    async def _aput(self, messages: list[ChatMessage]) -> None:
        now = datetime.now(UTC)
        batch: dict[str, Observation] = {}
        for i, message in enumerate(messages):
            text = message_text(message)
            if message.role.value not in REMEMBERED_ROLES or not text:
                continue
            obs_id = self.observation_id(message, text)
            session = message.additional_kwargs.get("session_id")
            # one microsecond apart, so the messages keep their order
            batch.setdefault(obs_id, Observation(
                id=obs_id, text=text, timestamp=now + timedelta(microseconds=i),
                speaker=message.role.value, session=str(session) if session else None))
        if batch:
            await self._async.add(list(batch.values()), namespace=self.namespace)

    async def _aget(self, messages: list[ChatMessage] | None = None,
                    **block_kwargs: Any) -> str:
        query = next((t for t in (message_text(m) for m in reversed(messages or [])) if t), "")
        if not query:
            return ""
        self._last = await self._async.search(query, namespace=self.namespace, k=self.k)
        return render_context(self._last.hits, budget_tokens=self.budget_tokens,
                              style=self.style).text

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """The last evidence again, ``tokens_to_truncate`` (estimated) tokens smaller."""
        budget = estimate_tokens(content) - tokens_to_truncate
        if self._last is None or budget < 1:
            return None
        return render_context(self._last.hits, budget_tokens=budget, style=self.style).text or None
