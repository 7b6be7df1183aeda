"""What every tool module shares: the error translation and the namespace argument."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ParamSpec

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from labile import LabileError

P = ParamSpec("P")

#: The optional ``namespace`` argument of every tool (checked against the `ServePolicy`).
Namespace = Annotated[str | None, Field(description="The memory's namespace (a user or agent).")]

#: How many ids one get or forget call may name.
MAX_IDS = 500


def tool_errors(
    fn: Callable[P, Awaitable[dict[str, Any]]],
) -> Callable[P, Awaitable[dict[str, Any]]]:
    """Run a tool body, turning labile's errors into MCP error results.

    The SDK sends a `ToolError`'s message to the client as an error result;
    any other exception would reach it only as "Error executing tool".
    """

    @functools.wraps(fn)
    async def run(*args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
        try:
            return await fn(*args, **kwargs)
        except LabileError as exc:
            raise ToolError(str(exc)) from None

    return run
