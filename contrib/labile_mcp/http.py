"""Streamable HTTP: where to bind, the bearer-token gate, and the uvicorn run.

The gate is a plain ASGI wrapper in front of the SDK's app: every HTTP
request must carry ``Authorization: Bearer <token>`` or gets 401, compared in
constant time. The SDK's own OAuth machinery is for servers that issue tokens;
a memory server only needs to check one shared secret. The SDK rejects a body
over ``max_request_body_size`` with 413.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from labile.plugin import InputError

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def parse_bind(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8000`` for IPv6) as a pair.

    Raises:
        InputError: not ``HOST:PORT`` with a port from 1 to 65535.
    """
    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--http {value!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) only reaches this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError:
            return False
        return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


class BearerTokenGate:
    """ASGI middleware: HTTP requests without the right bearer token get 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        """Guard ``app`` with ``token`` (never logged)."""
        if not token:
            raise InputError("the bearer token is empty")
        self.app = app
        self._expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            log.warning("mcp_http_unauthorised path=%s", scope.get("path"))
            body = json.dumps({"error": "unauthorised: send 'Authorization: Bearer <token>'"})
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="labile"')]})
            await send({"type": "http.response.body", "body": body.encode()})
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        given = next((v for k, v in scope.get("headers", []) if k.lower() == b"authorization"),
                     b"")
        # RFC 7235: the scheme is case-insensitive ("bearer" is "Bearer"), then one or
        # more spaces before the credentials
        scheme, _, credentials = given.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.lstrip(b" "),
                                                                   self._expected)


def check_bind(host: str, token: str | None, token_env: str) -> None:
    """Refuse a non-loopback address without a token.

    Raises:
        InputError: ``host`` is reachable from other machines and ``token`` is unset.
    """
    if not token and not is_loopback(host):
        raise InputError(
            f"refusing to serve on {host}, which other machines can reach, without a token: "
            f"set {token_env} (or bind to 127.0.0.1)"
        )


async def serve_http(app: ASGIApp, host: str, port: int, *, log_level: str) -> None:
    """Run ``app`` on ``host:port`` with uvicorn until interrupted.

    uvicorn's own logging setup is skipped (``log_config=None``): its loggers
    go wherever the process's logging goes (stderr), and access logs are off.
    """
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False,
                            log_level=log_level, lifespan="on")
    await uvicorn.Server(config).serve()
