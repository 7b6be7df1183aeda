"""The tools that read memory back and remove it: get, list, forget, and (opt-in) purge.

They wrap #12's lifecycle API (`Memory.get` / `list` / `forget` / `purge`)
through `AsyncMemory`, where ``forget`` and ``purge`` run alone (no search
sees a namespace half-forgotten). The purge tool exists only on a server
started with ``--allow-purge``, and asks for the namespace's name as
confirmation.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from labile import AsyncMemory
from labile_mcp.convert import observation_to_dict
from labile_mcp.policy import ServePolicy
from labile_mcp.toolkit import MAX_IDS, Namespace, tool_errors

log = logging.getLogger(__name__)

Ids = Annotated[list[str], Field(min_length=1, max_length=MAX_IDS, description=(
    "Ids of remembered turns, as returned by add_memories, list_memories or a search "
    "hit's sources."))]
EraseHistory = Annotated[bool, Field(description=(
    "Also drop the store's earlier data versions now, so nothing lingers on disk "
    "(slower: the tables are rewritten). Otherwise old versions expire on their own."))]


def add_lifecycle_tools(server: MCPServer, memory: AsyncMemory, policy: ServePolicy) -> None:
    """Register get_memories, list_memories, forget_memories and, when allowed, purge."""
    ns_help = policy.describe_namespaces()

    @tool_errors
    async def get_memories(ids: Ids, namespace: Namespace = None) -> dict[str, Any]:
        ns = policy.namespace(namespace)
        found = await memory.get(ns, ids)
        known = {o.id for o in found}
        return {"namespace": ns, "memories": [observation_to_dict(o) for o in found],
                "unknown": [i for i in ids if i not in known]}

    @tool_errors
    async def list_memories(
        offset: Annotated[int, Field(ge=0, description="Skip this many (paging).")] = 0,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many.")] = 20,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        ns = policy.namespace(namespace)
        page = await memory.list(ns, offset=offset, limit=limit)
        return {"namespace": ns, "memories": [observation_to_dict(o) for o in page.items],
                "total": page.total, "next_offset": page.next_offset}

    @tool_errors
    async def forget_memories(ids: Ids, erase_history: EraseHistory = False,
                              namespace: Namespace = None) -> dict[str, Any]:
        ns = policy.namespace(namespace)
        counts = await memory.forget(ns, ids, erase=erase_history)
        log.info("mcp_forget namespace=%s counts=%s", ns, counts)
        return {"namespace": ns, "removed": counts}

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    removes = ToolAnnotations(read_only_hint=False, destructive_hint=True,
                              idempotent_hint=True, open_world_hint=False)
    server.add_tool(get_memories, description=(
        f"Read remembered turns back by id (unknown ids are listed apart). {ns_help}"),
        annotations=read_only)
    server.add_tool(list_memories, description=(
        "List remembered turns in the order they were added, a page at a time; "
        f"next_offset is null on the last page. {ns_help}"), annotations=read_only)
    server.add_tool(forget_memories, description=(
        "Permanently forget turns by id, with everything built from them: a memory that "
        "other turns also feed is rebuilt without them. Returns what was removed. "
        f"{ns_help}"), annotations=removes)
    if not policy.allow_purge:
        return

    @tool_errors
    async def purge_memories(
        confirm: Annotated[str, Field(description="The namespace's name, typed again.")],
        erase_history: EraseHistory = False, namespace: Namespace = None,
    ) -> dict[str, Any]:
        ns = policy.namespace(namespace)
        if confirm != ns:
            raise ToolError(f"confirm must repeat the namespace's name ({ns!r}) to erase it")
        await memory.purge(ns, erase=erase_history)
        log.warning("mcp_purge namespace=%s", ns)
        return {"namespace": ns, "purged": True}

    server.add_tool(purge_memories, description=(
        "Erase everything remembered in the namespace. Cannot be undone; 'confirm' must "
        f"repeat the namespace's name. {ns_help}"), annotations=removes)
