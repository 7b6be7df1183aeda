"""`LabileSession`: an Agents SDK session whose conversation also becomes labile memory.

The SDK's `Session` protocol keeps one conversation's items so the next
turn can replay them. `LabileSession` keeps them in another session (by
default the SDK's in-memory `SQLiteSession`), unchanged, and in addition
adds every user and assistant *text message* to a labile namespace, where
later conversations find it with the ``search_memory`` tool. Tool calls,
tool outputs and reasoning items stay in the history only: they are not
things anyone said.

* ``pop_item`` takes the last item back: from the history, and from memory
  if it was remembered (a retracted message should not be recalled);
* ``clear_session`` clears the history only; the namespace's memory is
  long-term and shared by every session of that namespace.

A message's observation id is derived from the session and the message, so
adding the same item twice remembers it once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from agents import SQLiteSession
from agents.items import TResponseInputItem
from agents.memory import Session, SessionSettings

from labile import AsyncMemory, Memory, Observation
from labile_openai_agents.tools import as_async

__all__ = ["LabileSession", "message_text"]

#: Which roles' messages are remembered.
REMEMBERED_ROLES: Final = frozenset({"user", "assistant"})
_TEXT_PARTS: Final = frozenset({"input_text", "output_text", "text"})


def message_text(item: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(role, text)`` of a user or assistant text message, else ``None``.

    Accepts the Responses API shapes the SDK stores: ``content`` as a string,
    or a list of parts of which the text parts (``input_text``,
    ``output_text``) are joined.
    """
    role = item.get("role")
    if role not in REMEMBERED_ROLES or item.get("type", "message") != "message":
        return None
    content = item.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(str(p.get("text", "")) for p in content
                         if isinstance(p, Mapping) and p.get("type") in _TEXT_PARTS)
    else:
        return None
    return (str(role), text) if text.strip() else None


class LabileSession:
    """An Agents SDK `Session` that remembers its messages in a labile namespace."""

    session_settings: SessionSettings | None = None

    def __init__(self, session_id: str, memory: Memory | AsyncMemory, *, namespace: str,
                 history: Session | None = None) -> None:
        """A session ``session_id`` writing to ``namespace`` of ``memory``.

        Args:
            session_id: The conversation's id.
            memory: The memory (a `Memory` is wrapped in an `AsyncMemory`).
            namespace: Whose memory the messages go to.
            history: Where the items themselves are kept (default: an
                in-memory `agents.SQLiteSession`; pass a file-backed one to
                keep conversations across restarts).
        """
        self.session_id = session_id
        self.namespace = namespace
        self.memory = as_async(memory)
        self.history: Session = history or SQLiteSession(session_id)
        self.session_settings = getattr(self.history, "session_settings", None)

    def observation_id(self, item: Mapping[str, Any]) -> str:
        """The observation id a message item is remembered under."""
        key = json.dumps([self.session_id, item], sort_keys=True, ensure_ascii=False,
                         default=str)
        return f"session-{hashlib.sha256(key.encode()).hexdigest()[:24]}"

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history's items (the latest ``limit`` of them), oldest first."""
        items: list[TResponseInputItem] = await self.history.get_items(limit)
        return items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` to the history and remember their text messages."""
        await self.history.add_items(items)
        now = datetime.now(UTC)
        batch: dict[str, Observation] = {}
        for item in items:
            found = message_text(item) if isinstance(item, Mapping) else None
            if found is not None:
                role, text = found
                obs_id = self.observation_id(item)
                batch.setdefault(obs_id, Observation(id=obs_id, text=text, timestamp=now,
                                                     speaker=role, session=self.session_id))
        if batch:
            await self.memory.add(list(batch.values()), namespace=self.namespace)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the latest item from the history, and from memory if remembered."""
        item = await self.history.pop_item()
        if isinstance(item, Mapping) and message_text(item) is not None:
            await self.memory.forget(self.namespace, [self.observation_id(item)])
        return item

    async def clear_session(self) -> None:
        """Clear the history; what was remembered stays (it is long-term memory)."""
        await self.history.clear_session()
