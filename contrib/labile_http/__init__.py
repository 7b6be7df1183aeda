"""The HTTP API and web app: ``labile serve http`` and ``labile bench http`` (``labile[serve]``).

A developer looks at (and steers) a memory from a browser or any HTTP client:

* `labile_http.app` builds the Starlette app: the API under ``/api``, the
  OpenAPI document at ``/openapi.json``, the web app at ``/``;
* `labile_http.read_routes` and `labile_http.write_routes` hold the endpoints,
  registered with their OpenAPI description in `labile_http.context`;
* `labile_http.views` reads timelines, archived units and an edge's edits;
* `labile_http.errors` makes every failure a one-line JSON error and limits bodies;
* `labile_http.openapi` builds the OpenAPI document from the route table;
* `labile_http.commands` holds the command-line options and runners;
* `labile_bench.http_serve` (``labile bench http``) measures the API against in-process calls.

Security is the MCP server's, reused: bearer token, namespace binding,
loopback unless a token is set, body and text limits. Importing this package
does not import Starlette: the commands name the extra where it is missing.
"""

from __future__ import annotations

from labile.plugin import RegisterCommand, hookimpl


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """``labile serve http`` (its benchmark, ``labile bench http``, is in `labile_bench`)."""
    from labile_http import commands as c

    register("serve http", run=c.run_serve_http, configure=c.serve_http_options,
             help="serve a memory over HTTP: a JSON API and a web app to look at it")
