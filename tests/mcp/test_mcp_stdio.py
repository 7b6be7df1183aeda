"""``labile serve mcp`` over stdio, as a client starts it: a subprocess driven by
the SDK's own client session. Its stdout is copied to a file (through ``tee``)
so the test can check that every byte on it is protocol."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_helpers import child_env, serve_argv, tool_text, write_config

TURNS = [
    {"content": "My sister Lena moved to Lisbon in March", "role": "user",
     "time": "2024-05-02T09:00:00+00:00", "id": "t1"},
    {"content": "Lisbon is a great city. Does she like it?", "role": "assistant",
     "time": "2024-05-02T09:00:30+00:00", "id": "t2"},
    {"content": "She loves the trams and the pastel de nata", "role": "user",
     "time": "2024-05-02T09:01:00+00:00", "id": "t3"},
]


@pytest.mark.skipif(shutil.which("tee") is None, reason="needs tee to copy the server's stdout")
def test_stdio_session_add_search_forget_stats_and_stdout_holds_only_the_protocol(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path)
    wire = tmp_path / "stdout.jsonl"
    stderr_path = tmp_path / "stderr.log"
    # --log-level info: the server logs (to stderr) while the test watches stdout.
    argv = serve_argv("--log-level", "info", "serve", "mcp", "-c", str(config), "-n", "lena")
    params = StdioServerParameters(
        command="sh", args=["-c", f"{shlex.join(argv)} | tee {shlex.quote(str(wire))}"],
        env=child_env(), cwd=str(tmp_path),
    )

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        with stderr_path.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                out["tools"] = [t.name for t in (await session.list_tools()).tools]
                out["add"] = await session.call_tool("add_memories", {"messages": TURNS})
                out["search"] = await session.call_tool(
                    "search_memory", {"query": "Where did Lena move?", "k": 3})
                out["forget"] = await session.call_tool("forget_memories", {"ids": ["t1"]})
                out["after"] = await session.call_tool(
                    "search_memory", {"query": "Where did Lena move?", "k": 3})
                out["gone"] = await session.call_tool("get_memories", {"ids": ["t1", "t3"]})
                out["stats"] = await session.call_tool("memory_stats", {})
                out["other"] = await session.call_tool(
                    "search_memory", {"query": "Lena", "namespace": "someone-else"})
        return out

    out = asyncio.run(main())
    assert out["tools"] == ["add_memories", "search_memory", "memory_stats", "get_memories",
                            "list_memories", "forget_memories"]
    assert out["add"].structured_content["added"] == ["t1", "t2", "t3"]
    hits = out["search"].structured_content["hits"]
    assert hits[0]["sources"][0]["id"] == "t1"
    assert hits[0]["sources"][0]["text"] == TURNS[0]["content"]
    assert hits[0]["dates"]["said"][0].startswith("2024-05-02")
    assert out["forget"].structured_content["removed"]["observations"] == 1
    after = [s["id"] for h in out["after"].structured_content["hits"] for s in h["sources"]]
    assert "t1" not in after and after  # forgotten; the rest still found
    assert out["gone"].structured_content["unknown"] == ["t1"]
    assert out["stats"].structured_content["store"]["observations"] == 2
    assert out["other"].is_error and "not served here" in tool_text(out["other"])

    lines = wire.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 9  # initialize, tools/list and seven tool calls answered
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line
    stderr = stderr_path.read_text(encoding="utf-8")
    assert "mcp_add namespace=lena added=3" in stderr  # the logs went to stderr
    assert TURNS[0]["content"] not in stderr  # and hold no memory contents
