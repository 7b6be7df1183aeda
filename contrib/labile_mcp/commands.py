"""``labile serve mcp`` and ``labile bench serve``: options and runners.

The SDK is imported only when a command runs, so ``labile --help`` works (and
names the extra to install) where ``labile[mcp]`` is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import logging
import os
import sys
from typing import TYPE_CHECKING

from labile import AsyncMemory
from labile.plugin import (
    InputError,
    MissingDependencyError,
    add_limit_options,
    add_memory_options,
    open_memory,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from labile_mcp.policy import ServePolicy

DEFAULT_TOKEN_ENV = "LABILE_MCP_TOKEN"
DEFAULT_MAX_REQUEST_BYTES = 1_048_576


def require_mcp() -> None:
    """Raise `MissingDependencyError` with the install hint when the SDK is missing."""
    if importlib.util.find_spec("mcp") is None:
        # labile is not on PyPI yet: the extra installs from a checkout; the SDK's own
        # pin works however labile was installed.
        raise MissingDependencyError("the MCP server needs the official SDK: pip install -e "
                                     "'.[mcp]' in a labile checkout, or pip install mcp==2.3.0")


# -- labile serve mcp ---------------------------------------------------------------


def serve_mcp_options(p: argparse.ArgumentParser) -> None:
    """Which memory, which namespaces, which transport, and the limits."""
    add_memory_options(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--namespace", "-n", help="serve this one namespace (the default in "
                                                 "every tool call)")
    which.add_argument("--allow-namespaces", nargs="+", metavar="NS",
                       help="serve these namespaces; every tool call names one")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    p.add_argument("--token-env", default=DEFAULT_TOKEN_ENV, metavar="VAR",
                   help="environment variable holding the HTTP bearer token (default: "
                        f"{DEFAULT_TOKEN_ENV}); required to bind beyond loopback")
    p.add_argument("--allow-purge", action="store_true",
                   help="offer the tool that erases a whole namespace")
    p.add_argument("--max-request-bytes", type=int, default=DEFAULT_MAX_REQUEST_BYTES,
                   help="largest HTTP request body (default: 1 MiB); larger gets 413")
    add_limit_options(p)  # --max-text-chars, --max-batch-chars: the memory's limits too
    p.add_argument("--max-messages", type=int, default=500,
                   help="most messages in one add call (default: 500)")


def policy_from(args: argparse.Namespace) -> ServePolicy:
    """The `ServePolicy` the options describe; a bad value is an `InputError`."""
    from labile_mcp.policy import ServePolicy

    namespaces = [args.namespace] if args.namespace else args.allow_namespaces
    try:
        return ServePolicy(namespaces=tuple(namespaces), allow_purge=args.allow_purge,
                           max_text_chars=args.max_text_chars,
                           max_messages=args.max_messages)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def log_to_stderr(level: str) -> None:
    """Route the standard logging tree to stderr at ``level``, before the SDK does.

    The SDK installs its own handler only when the root logger has none, so
    this keeps every record (labile's, the SDK's, uvicorn's) on stderr and
    at the level the user chose: stdout belongs to the protocol on stdio.
    """
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper(), logging.WARNING))


def cli_level(args: argparse.Namespace) -> str:
    """The level the global options ask for (``--debug`` means debug)."""
    return "debug" if getattr(args, "debug", False) else getattr(args, "log_level", "warning")


def run_serve_mcp(args: argparse.Namespace) -> int:
    """Open the memory, build the server, and serve until the client or a signal stops it."""
    require_mcp()
    from labile_mcp.http import BearerTokenGate, check_bind, parse_bind, serve_http
    from labile_mcp.tools import build_server

    policy = policy_from(args)
    token = os.environ.get(args.token_env) or None
    bind = parse_bind(args.http) if args.http else None
    if bind is not None:
        check_bind(bind[0], token, args.token_env)
    level = cli_level(args)
    log_to_stderr(level)
    with contextlib.redirect_stdout(sys.stderr):  # nothing may reach the protocol's stdout
        memory = AsyncMemory(open_memory(args, create=True))  # add_memories writes
    server = build_server(memory, policy)
    if bind is None:
        asyncio.run(_until_done(server.run_stdio_async(), memory))
        return 0
    host, port = bind
    # Plain JSON replies instead of one SSE stream per request: no tool streams progress,
    # and the median search over MCP went from 125 to 84 ms in one pair of `labile bench
    # serve` runs (hashing embedder, 1 client, a loaded machine).
    app = server.streamable_http_app(max_request_body_size=args.max_request_bytes, host=host,
                                     json_response=True)
    gated = BearerTokenGate(app, token) if token else app
    sys.stderr.write(f"labile: serving MCP at http://{args.http}/mcp "
                     f"({'bearer token required' if token else 'no token: loopback only'})\n")
    asyncio.run(_until_done(serve_http(gated, host, port, log_level=level), memory))
    return 0


async def _until_done(serving: Awaitable[None], memory: AsyncMemory) -> None:
    """Await ``serving``, then close the memory (waiting for calls in flight)."""
    try:
        await serving
    finally:
        await memory.aclose()
