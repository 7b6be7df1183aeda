"""One-line JSON errors, request parameters that name what is allowed, and the body limit.

Every error the API sends is ``{"error": "<one line>", "field": <name or null>}``
with a 4xx status, or a 500 whose message names no internals (the traceback
goes to the server's log, without local variables). Parameters are read with
`Params`, whose checks name the parameter and the allowed values.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from labile import LabileError
from labile.plugin import InputError
from labile_mcp.convert import parse_time
from labile_mcp.http import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)


class ApiError(Exception):
    """A request the API refuses: ``status``, the ``field`` at fault, a one-line message."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        """``message`` names what was wrong and what is allowed."""
        super().__init__(message)
        self.status = status
        self.field = field


def error_response(status: int, message: str, field: str | None = None) -> JSONResponse:
    """The JSON error body every failure uses (one line: newlines are flattened)."""
    return JSONResponse({"error": " ".join(message.split()), "field": field}, status_code=status)


def to_response(exc: Exception) -> JSONResponse:
    """The response for an exception raised by a handler."""
    if isinstance(exc, ApiError):
        return error_response(exc.status, str(exc), exc.field)
    if isinstance(exc, InputError):
        return error_response(400, str(exc))
    if isinstance(exc, LabileError):
        return error_response(409, str(exc))
    log.error("http_handler_failed error=%s", type(exc).__name__, exc_info=exc)
    return error_response(500, "internal error: the server's log has the details")


class Params:
    """The query string of one request, read with checks that name the parameter."""

    def __init__(self, query: Mapping[str, str]) -> None:
        """Wrap a request's ``query_params``."""
        self._query = query

    def text(self, name: str, *, required: bool = False, max_chars: int = 20_000) -> str | None:
        """A string parameter (``None`` when absent and not required)."""
        value = self._query.get(name)
        if value is None or not value.strip():
            if required:
                raise ApiError(400, f"'{name}' is required (and not blank)", name)
            return None
        if len(value) > max_chars:
            raise ApiError(413, f"'{name}' has {len(value):,} characters; at most "
                           f"{max_chars:,} are accepted", name)
        return value

    def integer(self, name: str, default: int, *, low: int, high: int) -> int:
        """An integer parameter within ``[low, high]``."""
        raw = self._query.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ApiError(400, f"'{name}' must be an integer from {low} to {high}",
                           name) from None
        if not low <= value <= high:
            raise ApiError(400, f"'{name}' is {value}; allowed: {low} to {high}", name)
        return value

    def choice(self, name: str, default: str, allowed: tuple[str, ...]) -> str:
        """One of ``allowed``."""
        value = self._query.get(name) or default
        if value not in allowed:
            raise ApiError(400, f"'{name}' must be one of {', '.join(allowed)}", name)
        return value

    def flag(self, name: str) -> bool | None:
        """``true``/``false`` (``None`` when absent)."""
        raw = self._query.get(name)
        if raw is None or raw == "":
            return None
        if raw.lower() not in ("true", "false", "1", "0"):
            raise ApiError(400, f"'{name}' must be true or false", name)
        return raw.lower() in ("true", "1")

    def time(self, name: str) -> datetime | None:
        """An ISO 8601 date-time (no zone: UTC)."""
        raw = self._query.get(name)
        if not raw:
            return None
        try:
            return parse_time(raw, f"'{name}'")
        except InputError as exc:
            raise ApiError(400, str(exc), name) from None


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object body (an empty body is ``{}``)."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ApiError(400, "the body is not JSON: send a JSON object", "body") from None
    if not isinstance(body, dict):
        raise ApiError(400, f"the body is a JSON {type(body).__name__}; send a JSON object",
                       "body")
    return body


def body_field(body: Mapping[str, Any], name: str, kind: type | tuple[type, ...], *,
               required: bool = False, allowed: str = "") -> Any:
    """``body[name]`` if it has type ``kind`` (``None`` when absent and not required)."""
    value = body.get(name)
    if value is None:
        if required:
            raise ApiError(400, f"'{name}' is required" + (f": {allowed}" if allowed else ""),
                           name)
        return None
    # A JSON true is a Python bool, which is also an int: accept it only where a bool is asked.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ApiError(400, f"'{name}' has the wrong type" + (f": {allowed}" if allowed else ""),
                       name)
    return value


def check_fields(body: Mapping[str, Any], known: tuple[str, ...]) -> None:
    """Refuse fields the endpoint does not know (a typo is not silently ignored)."""
    unknown = sorted(set(body) - set(known))
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(unknown)}; allowed: "
                       f"{', '.join(known)}", unknown[0])


class BodyLimit:
    """ASGI middleware: a request body over ``max_bytes`` gets 413 before a handler reads it."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        """Guard ``app``."""
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope.get("headers", []) if k == b"content-length"), None)
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        seen = 0

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"error": f"the request body is over {self.max_bytes:,} bytes "
                           "(--max-request-bytes)", "field": "body"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass
