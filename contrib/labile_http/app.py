"""The Starlette app: the API under ``/api``, the OpenAPI document, the web app at ``/``.

Security is the MCP server's (`labile_mcp.http`, `labile_mcp.policy`): with a
token, every ``/api`` request and ``/openapi.json`` needs ``Authorization:
Bearer <token>``; the web app's files (no data in them) are served without
it, and the page asks for the token. The `ServePolicy` binds every request to
the served namespaces; `BodyLimit` refuses bodies over the limit with 413.
"""

from __future__ import annotations

from importlib import resources

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.staticfiles import StaticFiles

from labile import AsyncMemory
from labile_http.commands import DEFAULT_MAX_REQUEST_BYTES
from labile_http.context import ENDPOINTS, ServerContext
from labile_http.errors import BodyLimit, error_response
from labile_http.openapi import openapi_document
from labile_mcp.http import ASGIApp, BearerTokenGate, Receive, Scope, Send
from labile_mcp.policy import ServePolicy

#: Paths served without the token: the web app's own files, which hold no memory data.
PUBLIC_PATHS = ("/", "/favicon.ico")
PUBLIC_PREFIX = "/static/"


def _static_dir() -> str:
    return str(resources.files("labile_http") / "static")


async def _index(_request: Request) -> Response:
    html = (resources.files("labile_http") / "static" / "index.html").read_text("utf-8")
    return Response(html, media_type="text/html; charset=utf-8",
                    headers={"cache-control": "no-store"})


async def _openapi(_request: Request) -> Response:
    return JSONResponse(openapi_document())


async def _http_error(_request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    what = {404: "no such endpoint (see /openapi.json)",
            405: "method not allowed here (see /openapi.json)"}.get(status, str(exc))
    return error_response(status, what, None)


class _TokenForApi:
    """The bearer-token gate in front of everything but the web app's files."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.gated = BearerTokenGate(app, token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        public = path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIX)
        await (self.app if public else self.gated)(scope, receive, send)


def build_app(memory: AsyncMemory, policy: ServePolicy, *, token: str | None = None,
              max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> ASGIApp:
    """The ASGI app serving ``memory`` within ``policy`` (behind ``token`` when given)."""
    import labile_http.read_routes
    import labile_http.write_routes  # noqa: F401  (fill ENDPOINTS)

    routes = [Route(e.path, e.handler, methods=[e.method]) for e in ENDPOINTS]
    routes += [Route("/", _index, methods=["GET"]),
               Route("/openapi.json", _openapi, methods=["GET"])]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error})
    app.mount("/static", StaticFiles(directory=_static_dir()), name="static")
    app.state.ctx = ServerContext(memory, policy)
    limited: ASGIApp = BodyLimit(app, max_request_bytes)
    return _TokenForApi(limited, token) if token else limited
