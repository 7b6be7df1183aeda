"""`StrictServer`: the SDK's `MCPServer`, with every tool's arguments held to their schema.

The SDK, left alone, ignores arguments a tool does not declare (a client
that sends ``user_id`` believes it scoped its call), reports a schema
violation as several lines of pydantic text ending in a URL, and bounds no
text but what each tool checks itself. Here, before a tool runs:

* any text in the arguments (a field, a list item, a nested message's role)
  longer than the policy's ``max_text_chars`` is refused, naming where it is;
* an argument the tool does not declare is refused, naming those it does;
  every listed input schema says so (``additionalProperties: false``);
* a schema violation comes back as one line: each bad field's path and what
  it must be, never the value sent (error messages reach logs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult
from mcp_types import Tool as MCPTool
from pydantic import ValidationError

from labile.plugin import InputError
from labile_mcp.policy import ServePolicy

__all__ = ["StrictServer", "one_line"]


def _path(loc: tuple[int | str, ...]) -> str:
    """``("messages", 0, "role")`` as ``messages[0].role``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"


def one_line(tool: str, exc: ValidationError) -> str:
    """A validation failure as one line: each bad field's path and what it must be."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False):
        if err["type"] == "extra_forbidden":
            what = "not a field of this object"
        elif err["type"] == "missing":
            what = "required"
        else:
            what = " ".join(str(err["msg"]).split())
        parts.append(f"{_path(tuple(err['loc']))}: {what}")
    return f"invalid arguments to {tool}: {'; '.join(parts)}"


def _longest_text(value: Any, where: str) -> tuple[str, int]:
    """The path and length of the longest text in ``value`` (keys count as texts too)."""
    if isinstance(value, str):
        return where, len(value)
    found = (where, 0)
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = str(key)
            inner = f"{where}.{name}" if where else name
            for candidate in ((f"the name of an argument in {where or 'the call'}", len(name)),
                              _longest_text(item, inner)):
                found = max(found, candidate, key=lambda pair: pair[1])
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = max(found, _longest_text(item, f"{where}[{i}]"), key=lambda pair: pair[1])
    return found


class StrictServer(MCPServer):
    """An `MCPServer` that refuses over-long texts, unknown arguments and schema
    violations with one-line messages, for every tool it holds (see the module)."""

    def __init__(self, *args: Any, policy: ServePolicy, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.policy = policy
        # Each tool's argument names, read once from the schemas (listing the tools on
        # every call cost about 0.2 ms); adding or removing a tool forgets them.
        self._arguments: dict[str, set[str]] | None = None

    def add_tool(self, *args: Any, **kwargs: Any) -> None:
        """`MCPServer.add_tool`, forgetting the argument names read so far."""
        super().add_tool(*args, **kwargs)
        self._arguments = None

    def remove_tool(self, name: str) -> None:
        """`MCPServer.remove_tool`, forgetting the argument names read so far."""
        super().remove_tool(name)
        self._arguments = None

    async def list_tools(self) -> list[MCPTool]:
        """The tools, each input schema closed to undeclared arguments."""
        return [tool.model_copy(update={"input_schema": {**tool.input_schema,
                                                         "additionalProperties": False}})
                for tool in await super().list_tools()]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        """Check ``arguments`` (sizes, names), then run the tool; schema violations
        come back as one line."""
        where, length = _longest_text(arguments, "")
        try:
            self.policy.check_length(length, where)
        except InputError as exc:
            raise ToolError(str(exc)) from None
        declared = await self._declared(name)
        unknown = sorted(set(arguments) - declared) if declared is not None else []
        if unknown:
            raise ToolError(f"{name} takes no argument {', '.join(map(repr, unknown))} "
                            f"(its arguments: {', '.join(sorted(declared or ()))})")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(one_line(name, cause)) from cause

    async def _declared(self, name: str) -> set[str] | None:
        """The argument names tool ``name`` declares (``None``: no such tool)."""
        if self._arguments is None:
            self._arguments = {tool.name: set(tool.input_schema.get("properties", {}))
                               for tool in await super().list_tools()}
        return self._arguments.get(name)

