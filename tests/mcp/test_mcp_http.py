"""``labile serve mcp --http`` on a loopback port: the bearer token, two clients on
two namespaces at once, oversize requests, and what the server logs."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import child_env, free_port, serve_argv, tool_text, wait_for_port, write_config

from labile_cli import main as labile_main

TOKEN = "test-token-9f3b2c"
SECRET_TEXT = {"alice": "Alice keeps her spare key under the blue flowerpot",
               "bob": "Bob's locker code is 4417 at the climbing gym"}


class Server:
    """A running server: its URL, and its stderr once stopped."""

    def __init__(self, url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.url, self.proc, self.log = url, proc, log


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the module: namespaces alice and bob, a token, a 64 KiB body limit."""
    root = tmp_path_factory.mktemp("mcp-http")
    port = free_port()
    log = root / "stderr.log"
    argv = serve_argv("serve", "mcp", "-c", str(write_config(root)),
                      "--allow-namespaces", "alice", "bob", "--http", f"127.0.0.1:{port}",
                      "--max-request-bytes", "65536")
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, cwd=root,
                                env=child_env(LABILE_MCP_TOKEN=TOKEN))
    try:
        wait_for_port(port, lambda: proc.poll() is None)
        yield Server(f"http://127.0.0.1:{port}/mcp", proc, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def client(token: str | None) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0))


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}
HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_requests_without_the_right_token_get_401(server: Server, token: str | None) -> None:
    async def main() -> httpx2.Response:
        async with client(token) as http:
            return await http.post(server.url, json=INIT, headers=HEADERS)

    response = asyncio.run(main())
    assert response.status_code == 401
    assert "Bearer" in response.headers["www-authenticate"]


async def _session_calls(server: Server, namespace: str) -> dict[str, Any]:
    async with client(TOKEN) as http, \
            streamable_http_client(server.url, http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        added = await session.call_tool("add_memories", {
            "text": SECRET_TEXT[namespace], "namespace": namespace})
        found = await session.call_tool("search_memory", {
            "query": "key code flowerpot locker", "k": 5, "namespace": namespace})
        stranger = await session.call_tool("search_memory", {
            "query": "key", "namespace": "carol"})
        return {"added": added, "found": found, "stranger": stranger}


def test_two_clients_at_once_each_see_only_their_namespace(server: Server) -> None:
    async def main() -> list[dict[str, Any]]:
        return list(await asyncio.gather(_session_calls(server, "alice"),
                                         _session_calls(server, "bob")))

    for namespace, out in zip(["alice", "bob"], asyncio.run(main()), strict=True):
        assert not out["added"].is_error, tool_text(out["added"])
        texts = [s["text"] for h in out["found"].structured_content["hits"]
                 for s in h["sources"]]
        assert texts == [SECRET_TEXT[namespace]]
        assert out["stranger"].is_error
        assert "'carol' is not served here (allowed: alice, bob)" in tool_text(out["stranger"])


def test_an_oversize_request_gets_413_and_changes_nothing(server: Server) -> None:
    async def main() -> tuple[int, Any, Any]:
        async with client(TOKEN) as http, \
                streamable_http_client(server.url, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            before = (await session.call_tool("memory_stats", {"namespace": "alice"}))
            raw = await http.post(server.url, headers=HEADERS, json={
                "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                    "name": "add_memories",
                    "arguments": {"text": "z" * 100_000, "namespace": "alice"}}})
            after = (await session.call_tool("memory_stats", {"namespace": "alice"}))
        return raw.status_code, before.structured_content, after.structured_content

    status, before, after = asyncio.run(main())
    assert status == 413
    assert before["store"] == after["store"]


def test_the_server_log_holds_no_token_and_no_memory_contents(server: Server) -> None:
    """At the default level (run last in this module: it reads what the others caused)."""
    text = server.log.read_text(encoding="utf-8", errors="replace")
    assert "serving MCP at http://127.0.0.1:" in text
    assert TOKEN not in text
    assert not [t for t in SECRET_TEXT.values() if t in text]


def test_a_reachable_address_without_a_token_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("LABILE_MCP_TOKEN", raising=False)
    status = labile_main(["serve", "mcp", "-c", str(write_config(tmp_path)), "-n", "a",
                          "--http", "0.0.0.0:8765"])
    assert status == 2
    err = capsys.readouterr().err
    assert "refusing to serve on 0.0.0.0" in err and "LABILE_MCP_TOKEN" in err
    assert not (tmp_path / "store").exists()  # refused before anything was opened
