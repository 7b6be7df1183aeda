"""``labile serve http`` and ``labile bench http``: options and runners.

Starlette and uvicorn are imported only when a command runs, so ``labile
--help`` works (and names the extra to install) where ``labile[serve]`` is
missing.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import sys

from labile import AsyncMemory
from labile.plugin import InputError, MissingDependencyError, add_memory_options, echo, open_memory

DEFAULT_TOKEN_ENV = "LABILE_HTTP_TOKEN"
DEFAULT_BIND = "127.0.0.1:8765"
DEFAULT_MAX_REQUEST_BYTES = 1_048_576


def require_serve() -> None:
    """Raise `MissingDependencyError` with the install hint when Starlette or uvicorn is missing."""
    if importlib.util.find_spec("starlette") is None or importlib.util.find_spec("uvicorn") is None:
        raise MissingDependencyError("the HTTP server needs Starlette and uvicorn: "
                                     "pip install -e '.[serve]'")


def serve_http_options(p: argparse.ArgumentParser) -> None:
    """Which memory, which namespaces, where to listen, and the limits."""
    add_memory_options(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--namespace", "-n", help="serve this one namespace")
    which.add_argument("--allow-namespaces", nargs="+", metavar="NS",
                       help="serve these namespaces")
    which.add_argument("--all-namespaces", action="store_true",
                       help="serve every namespace the store holds when the server starts")
    p.add_argument("--http", default=DEFAULT_BIND, metavar="HOST:PORT",
                   help=f"where to listen (default: {DEFAULT_BIND}; loopback unless a token "
                        "is set)")
    p.add_argument("--token-env", default=DEFAULT_TOKEN_ENV, metavar="VAR",
                   help=f"environment variable holding the bearer token (default: "
                        f"{DEFAULT_TOKEN_ENV}); required to bind beyond loopback")
    p.add_argument("--allow-purge", action="store_true",
                   help="offer the endpoint that erases a whole namespace")
    p.add_argument("--max-request-bytes", type=int, default=DEFAULT_MAX_REQUEST_BYTES,
                   help="largest request body (default: 1 MiB); larger gets 413")
    p.add_argument("--max-text-chars", type=int, default=20_000,
                   help="longest turn or query accepted (default: 20000)")
    p.add_argument("--max-messages", type=int, default=500,
                   help="most turns in one add request (default: 500)")
    p.add_argument("--print-openapi", action="store_true",
                   help="print the OpenAPI document and exit (docs/openapi.json is this)")


def run_serve_http(args: argparse.Namespace) -> int:
    """Open the memory and serve the API and the web app until interrupted."""
    require_serve()
    from labile_http.openapi import openapi_document

    if args.print_openapi:
        echo(json.dumps(openapi_document(), indent=1, ensure_ascii=False))
        return 0
    from labile_http.app import build_app
    from labile_mcp.commands import cli_level, log_to_stderr, policy_from
    from labile_mcp.http import check_bind, parse_bind, serve_http

    host, port = parse_bind(args.http)
    token = os.environ.get(args.token_env) or None
    check_bind(host, token, args.token_env)
    if args.max_request_bytes < 1:
        raise InputError(f"--max-request-bytes must be >= 1, got {args.max_request_bytes}")
    if not (args.namespace or args.allow_namespaces or args.all_namespaces):
        raise InputError("name what to serve: -n NS, --allow-namespaces NS..., or "
                         "--all-namespaces (see `labile namespaces`)")
    if not args.all_namespaces:
        policy = policy_from(args)  # a bad name is refused before the store is opened
    level = cli_level(args)
    log_to_stderr(level)
    memory = open_memory(args, create=True)
    if args.all_namespaces:
        args.allow_namespaces = list(memory.namespaces())
        try:
            if not args.allow_namespaces:
                raise InputError("--all-namespaces: the store holds no namespace yet; name "
                                 "one with -n to start filling it")
            policy = policy_from(args)
        except BaseException:
            memory.close()
            raise
    amem = AsyncMemory(memory)
    app = build_app(amem, policy, token=token, max_request_bytes=args.max_request_bytes)
    sys.stderr.write(f"labile: serving {', '.join(policy.namespaces)} at http://{args.http}/ "
                     f"({'bearer token required' if token else 'no token: loopback only'})\n")

    async def serve() -> None:
        try:
            await serve_http(app, host, port, log_level=level)
        finally:
            await amem.aclose()

    asyncio.run(serve())
    return 0
