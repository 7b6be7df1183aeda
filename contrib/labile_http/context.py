"""What every route shares: the served memory and policy, recent results, and the route table.

`endpoint` registers a handler with the facts the OpenAPI document needs
(method, path, summary, parameters, body, response), so the served routes
and `labile_http.openapi` never disagree.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import attrs
from starlette.requests import Request
from starlette.responses import Response

from labile import AsyncMemory, Memory
from labile.plugin import InputError, RetrievalResult
from labile_http.errors import ApiError, to_response
from labile_mcp.policy import ServePolicy

T = TypeVar("T")
Handler = Callable[[Request], Awaitable[Response]]

#: Search results kept for ``/api/results/{id}/subgraph`` and ``/api/feedback``.
RESULTS_KEPT = 64


@attrs.frozen(kw_only=True)
class Param:
    """A query parameter as the OpenAPI document describes it."""

    name: str
    type: str = "string"
    description: str = ""
    required: bool = False
    minimum: int | None = None
    maximum: int | None = None
    enum: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Endpoint:
    """One route: its handler and its description."""

    method: str
    path: str
    summary: str
    handler: Handler
    params: tuple[Param, ...] = ()
    body: dict[str, Any] | None = None
    response: str = "#/components/schemas/Any"
    media: str = "application/json"
    tag: str = "memory"


#: Every endpoint, in registration order (the routes modules fill it on import).
ENDPOINTS: list[Endpoint] = []

#: The ``namespace`` parameter of every namespaced endpoint.
NAMESPACE = Param(name="namespace", description="One of the served namespaces; optional "
                  "when the server serves only one.")


def endpoint(method: str, path: str, summary: str, *, params: tuple[Param, ...] = (),
             body: dict[str, Any] | None = None, response: str = "Any",
             media: str = "application/json",
             tag: str = "memory") -> Callable[[Handler], Handler]:
    """Register the decorated handler (errors become one-line JSON, see `to_response`)."""

    def register(fn: Handler) -> Handler:
        @functools.wraps(fn)
        async def run(request: Request) -> Response:
            try:
                return await fn(request)
            except Exception as exc:  # every failure leaves as one JSON line
                return to_response(exc)

        ENDPOINTS.append(Endpoint(method=method, path=path, summary=summary, handler=run,
                                  params=params, body=body,
                                  response=f"#/components/schemas/{response}", media=media,
                                  tag=tag))
        return run

    return register


class ServerContext:
    """The memory one server exposes, within its `ServePolicy`."""

    def __init__(self, memory: AsyncMemory, policy: ServePolicy) -> None:
        """Serve ``memory`` within ``policy``."""
        self.amem = memory
        self.policy = policy
        self._results: OrderedDict[str, RetrievalResult] = OrderedDict()

    @property
    def memory(self) -> Memory:
        """The blocking `Memory` (for store reads run in a worker thread)."""
        return self.amem.memory

    def namespace(self, requested: str | None) -> str:
        """The namespace a request may use (`ServePolicy.namespace`), or a 403/400."""
        try:
            return self.policy.namespace(requested)
        except InputError as exc:
            raise ApiError(403 if requested else 400, str(exc), "namespace") from None

    def check_text(self, text: str, field: str) -> None:
        """Refuse a text over the policy's ``max_text_chars`` with 413, naming ``field``."""
        try:
            self.policy.check_text(text, field)
        except InputError as exc:
            raise ApiError(413, str(exc), field) from None

    async def in_thread(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking store read off the event loop."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    def keep(self, result: RetrievalResult) -> str:
        """Remember ``result`` (the newest `RESULTS_KEPT`) and return its id."""
        rid = secrets.token_urlsafe(9)
        self._results[rid] = result
        while len(self._results) > RESULTS_KEPT:
            self._results.popitem(last=False)
        return rid

    def result(self, rid: str | None, namespace: str) -> RetrievalResult:
        """A kept result of ``namespace``, or a 404 naming why."""
        found = self._results.get(rid or "")
        if found is None or found.query.namespace != namespace:
            raise ApiError(404, f"no recent search result {rid!r} in this namespace (the "
                           f"server keeps the last {RESULTS_KEPT}): search again",
                           "result_id")
        return found


def context(request: Request) -> ServerContext:
    """The `ServerContext` of the app serving ``request``."""
    ctx: ServerContext = request.app.state.ctx
    return ctx
