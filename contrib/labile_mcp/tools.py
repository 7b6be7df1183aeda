"""The MCP tools, built on the SDK's high-level `MCPServer` over one `AsyncMemory`.

Each tool checks its namespace and sizes against the `ServePolicy` before it
touches the memory, and turns labile's errors into MCP error results (the
message names what was wrong and what is allowed). The server
(`labile_mcp.strict.StrictServer`) first bounds every text of a call,
refuses undeclared arguments and validates the rest against each tool's JSON
schema. Logs name the tool, the namespace and counts, never memory contents.
"""

# No `from __future__ import annotations`: the tools' annotations use this server's
# limits (``k``'s maximum), so they must be evaluated where the tools are defined.

import logging
from datetime import UTC, datetime
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

import labile
from labile import AsyncMemory
from labile.plugin import DEFAULT_K, Observation
from labile_io.hits import result_to_dict, source_ids
from labile_io.speakers import name_with_stored_async
from labile_mcp.convert import conflicts_with_stored, messages_to_observations, parse_time
from labile_mcp.lifecycle import add_lifecycle_tools
from labile_mcp.policy import ServePolicy
from labile_mcp.strict import StrictServer
from labile_mcp.toolkit import Namespace, tool_errors

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Long-term memory. Save what is worth remembering with add_memories (chat turns with "
    "their role and time, or a plain text), and call search_memory before answering "
    "anything that may depend on earlier conversations. Each hit carries its date and the "
    "exact turns it came from: quote those, and prefer the most recent when hits disagree."
)


class ChatMessage(BaseModel):
    """One chat turn to remember."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(description="The message text, stored verbatim.")
    role: str | None = Field(None, description="Who said it: 'user', 'assistant' or a name.")
    time: str | None = Field(None, description="When it was said, ISO 8601 "
                             "(2024-05-01T14:30:00+02:00); no zone means UTC; default now.")
    id: str | None = Field(None, description="Your stable id: re-sending the same turn with "
                           "it adds nothing; another turn under an id already used is "
                           "refused. Default: derived from role, session, content and the time "
                           "if given (so re-sending an undated turn adds nothing).")
    session: str | None = Field(None, description="A conversation or session key.")


_COUNTS = ("observations", "nodes", "visible_nodes", "edges")


def build_server(memory: AsyncMemory, policy: ServePolicy) -> MCPServer:
    """An `MCPServer` whose tools read and write ``memory`` within ``policy``."""
    server: MCPServer = StrictServer("labile", instructions=INSTRUCTIONS, log_level="WARNING",
                                     version=str(labile.__version__), policy=policy)
    ns_help = policy.describe_namespaces()

    @tool_errors
    async def add_memories(
        messages: Annotated[list[ChatMessage] | None, Field(
            description="Chat turns, oldest first. Give this or 'text'.")] = None,
        text: Annotated[str | None, Field(
            description="A plain note to remember (one turn). Give this or 'messages'.")] = None,
        speakers: Annotated[dict[str, str] | None, Field(
            description="Who the roles are, e.g. {\"user\": \"Elena\"}: their turns are "
                        "stored under that name (the role is kept). Default: a role is "
                        "named by a self-introduction (\"I'm Elena\") in this or an earlier "
                        "call; a role mapped to itself undoes that.")] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        ns = policy.namespace(namespace)
        if (messages is None) == (text is None):
            raise ToolError("give exactly one of 'messages' (a list of chat turns) or 'text'")
        items = [m.model_dump() for m in messages] if messages is not None else [
            {"content": text}]
        if not items:
            raise ToolError("'messages' is empty: send at least one chat turn")
        if len(items) > policy.max_messages:
            raise ToolError(f"{len(items)} messages in one call; this server accepts at most "
                            f"{policy.max_messages} (--max-messages): send them in parts")
        batch = messages_to_observations(items, now=datetime.now(UTC))
        batch = await name_with_stored_async(memory, ns, batch, speakers)
        # An id already stored with other content would be skipped as "already stored":
        # refuse it instead, so a caller never believes a turn was kept that was not.
        # (A concurrent call can still store the id between this read and the add.)
        explicit = [str(m["id"]) for m in items if m.get("id")]
        clash = conflicts_with_stored(items, await _observations(memory, ns, explicit))
        if clash:
            raise ToolError(clash)
        report = await memory.add(batch, namespace=ns)
        log.info("mcp_add namespace=%s added=%d already=%d", ns, len(report.added),
                 len(report.skipped_existing))
        return {"namespace": ns, "added": report.added,
                "already_stored": report.skipped_existing,
                "nodes_written": report.nodes_written, "edges_written": report.edges_written}

    @tool_errors
    async def search_memory(
        query: Annotated[str, Field(description="What to look for, in natural language.")],
        k: Annotated[int, Field(description="How many memories to return.", ge=1,
                                le=policy.max_k)] = min(DEFAULT_K, policy.max_k),
        as_of: Annotated[str | None, Field(description=(
            "When the question is asked, ISO 8601 (default: now): phrases such as 'last "
            "week' in the query are read from this moment, and the memory is searched as "
            "it was known then (later statements left out, later replacements not "
            "applied)."))] = None,
        namespace: Namespace = None,
    ) -> dict[str, Any]:
        ns = policy.namespace(namespace)
        when = parse_time(as_of, "as_of") if as_of else None
        result = await memory.search(query, namespace=ns, k=k, as_of=when)
        sources = await _observations(memory, ns, source_ids(result))
        log.info("mcp_search namespace=%s k=%d hits=%d", ns, k, len(result.hits))
        return result_to_dict(result, sources)  # the labile.hit/1 schema

    @tool_errors
    async def memory_stats(namespace: Namespace = None) -> dict[str, Any]:
        ns = policy.namespace(namespace)
        stats = await memory.stats(ns)
        # Only this namespace's counts: the store-wide figures (files, bytes, its path)
        # and the process-wide LLM usage describe other namespaces too.
        counts = {k: stats["store"][k] for k in _COUNTS if k in stats["store"]}
        return {"namespace": ns, "pipeline": stats["pipeline"], "store": counts}

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    server.add_tool(add_memories, description=(
        "Remember chat turns (with optional role, ISO time and id) or a plain text. "
        "Re-sending a turn with the same id (or the same role, content and time, if "
        "given) adds nothing; 'speakers' names who the roles are. Returns the ids added. "
        f"{ns_help}"),
        # Idempotent: a turn's id never depends on when it arrives (a defaulted time is
        # not part of a derived id), so the same call again adds nothing.
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                    idempotent_hint=True, open_world_hint=False))
    server.add_tool(search_memory, description=(
        "Search the memory. Returns up to k hits, best first: the remembered text, when "
        "it was said and what time it is about, whether it is still current, how it was "
        "reached, and the source turns (id, speaker, time, text) it came from. "
        f"{ns_help}"), annotations=read_only)
    server.add_tool(memory_stats, description=(
        "How many observations, memory nodes and edges the namespace holds, and the "
        f"pipeline that built them. {ns_help}"),
        annotations=read_only)
    add_lifecycle_tools(server, memory, policy)
    return server


async def _observations(memory: AsyncMemory, namespace: str,
                        ids: list[str]) -> dict[str, Observation]:
    return {o.id: o for o in await memory.get(namespace, ids)} if ids else {}
