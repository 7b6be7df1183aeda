"""Shared pieces of the MCP server tests: a config, the server's command line, ports."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from mcp.client.client import Client

from labile import AsyncMemory, Memory
from labile_mcp.policy import ServePolicy
from labile_mcp.tools import build_server

#: Fast and real: the embedded LanceDB store, the hybrid preset, the hashing embedder.
CONFIG = """\
preset = "hybrid"

[store]
type = "lancedb"
path = "{path}"

[embedder]
type = "hashing"
"""
IN_MEMORY: dict[str, Any] = {"preset": "hybrid", "store": {"type": "memory"},
                             "embedder": {"type": "hashing"}}
START_S = 180.0  # a loaded machine imports LanceDB slowly; only reached when failing


def write_config(directory: Path) -> Path:
    """A ``memory.toml`` whose store lives under ``directory``."""
    path = directory / "memory.toml"
    path.write_text(CONFIG.format(path=directory / "store"), encoding="utf-8")
    return path


def serve_argv(*args: str) -> list[str]:
    """The command line of ``labile serve mcp`` with ``args``."""
    return [sys.executable, "-m", "labile_cli", *args]


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a server process: offline, unbuffered, no inherited token."""
    env = {k: v for k, v in os.environ.items() if k != "LABILE_MCP_TOKEN"}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true",
               PYTHONUNBUFFERED="1", **extra)
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, alive: Any) -> None:
    """Wait until ``127.0.0.1:port`` accepts connections; ``alive()`` False means it died."""
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError("the server exited before listening")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listened on port {port} within {START_S:.0f} s")


def in_process_client(policy: ServePolicy, memory: Memory | None = None,
                      ) -> tuple[Client, AsyncMemory]:
    """The SDK's client connected in memory to a server over ``memory`` (default: fresh)."""
    amem = AsyncMemory(memory or Memory.open(IN_MEMORY))
    return Client(build_server(amem, policy)), amem


def tool_text(result: Any) -> str:
    """The text of a tool result's first content block."""
    return str(result.content[0].text) if result.content else ""
