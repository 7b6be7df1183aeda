"""The OpenAPI 3.1 document of the API, built from the route table (`ENDPOINTS`).

Served at ``/openapi.json`` and checked into ``docs/openapi.json`` (a test fails
when that copy is stale: regenerate it with ``labile serve http --print-openapi``).
"""

from __future__ import annotations

from typing import Any

from labile_http.context import ENDPOINTS, Endpoint, Param
from labile_io.hits import HIT_SCHEMA

_STR = {"type": "string"}
_NSTR = {"type": ["string", "null"]}
_INT = {"type": "integer"}
_STRS = {"type": "array", "items": _STR}


def _obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **extra}


_SOURCE = _obj({"id": _STR, "speaker": _NSTR, "role": _NSTR,
                "time": {**_STR, "description": "When the turn was said (ISO 8601)."},
                "session": _NSTR, "text": _STR,
                "truncated": {"type": "boolean", "description": "text was cut"}})

_HIT = _obj({
    "rank": {**_INT, "description": "1 for the best hit."},
    "score": {"type": "number", "description": "The pipeline's own score: its scale depends "
              "on the preset; compare within one result only."},
    "relative_score": {"type": ["number", "null"], "description": "score / the best score "
                       "of this result (1.0 for the top hit): 0-1 within one result, not "
                       "comparable across queries."},
    "id": _STR, "kind": _STR,
    "text": {**_STR, "description": "description, else content."},
    "content": _STR, "description": _STR, "visible": {"type": "boolean"},
    "dates": _obj({"said": {**_STRS, "description": "When the source turns were said."},
                   "about": {"type": ["object", "null"], "description": "The time span the "
                             "memory is about (start, end).",
                             "properties": {"start": _STR, "end": _NSTR}}}),
    "sources": {"type": "array", "items": _SOURCE},
    "missing_sources": {**_STRS, "description": "Source ids no longer stored."},
    "reached": _obj({"stage": {"enum": ["seed", "expand", "filter"]}, "atom": _STR,
                     "hop": _INT, "seed": _STR, "path": _STRS, "edges": _STRS,
                     "predicates": {"type": "array", "items": _NSTR},
                     "why": {**_STR, "description": "The same, in one sentence."}}),
    "validity": _obj({"current": {"type": "boolean"}, "valid_to": _NSTR,
                      "superseded_by": _STRS}),
})

_NODE = _obj({"id": _STR, "kind": _STR, "label": _STR, "text": _STR, "content": _STR,
              "visible": {"type": "boolean"}, "time_start": _NSTR, "time_end": _NSTR,
              "sources": _STRS, "current": {"type": "boolean"}, "valid_to": _NSTR,
              "superseded_by": _STRS, "lineage": _STRS,
              "hit_rank": {"type": ["integer", "null"]}})
_EDGE = _obj({"id": _STR, "src": _STR, "dst": _STR, "predicate": _STR,
              "weight": {"type": "number"}, "origin": _STR, "description": _STR,
              "active": {"type": "boolean"},
              "history": {"type": "array", "items": {"type": "object"},
                          "description": "Reconsolidation edits, oldest first."},
              "undoable": {"type": "boolean"}})
_OBS = _obj({"id": _STR, "text": _STR, "time": _STR, "speaker": _NSTR, "session": _NSTR,
             "metadata": {"type": "object"}})


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _page(item: str) -> dict[str, Any]:
    return _obj({"namespace": _STR, "items": {"type": "array", "items": _ref(item)},
                 "total": _INT, "next_offset": {"type": ["integer", "null"]},
                 "unknown": _STRS})


SCHEMAS: dict[str, Any] = {
    "Any": {"type": "object"},
    "Error": _obj({"error": {**_STR, "description": "One line: what was wrong and what is "
                             "allowed."}, "field": _NSTR}, required=["error"]),
    "ChatMessage": _obj({"content": _STR, "role": _STR, "time": _STR, "id": _STR,
                         "session": _STR}, required=["content"], additionalProperties=False),
    "Hit": _HIT,
    "SearchResult": _obj({"schema": {"const": HIT_SCHEMA}, "query": _STR, "namespace": _STR,
                          "k": _INT, "as_of": _STR, "ms": {"type": "object"},
                          "hits": {"type": "array", "items": _ref("Hit")},
                          "result_id": _STR}),
    "Namespaces": _obj({"namespaces": {"type": "array", "items": _obj({
        "name": _STR, "observations": _INT, "nodes": _INT, "visible_nodes": _INT,
        "edges": _INT})}, "default": _NSTR, "allow_purge": {"type": "boolean"}}),
    "Node": _NODE, "Edge": _EDGE, "Observation": _OBS,
    "Graph": _obj({"nodes": {"type": "array", "items": _ref("Node")},
                   "edges": {"type": "array", "items": _ref("Edge")}}),
    "Observations": _page("Observation"), "Nodes": _page("Node"), "Edges": _page("Edge"),
    "NodeDetail": _obj({"node": _ref("Node"), "sources": {"type": "array",
                        "items": _ref("Observation")},
                        "edges": {"type": "array", "items": _ref("Edge")}}),
    "Timeline": _obj({"sessions": {"type": "array", "items": {"type": "object"}},
                      "days": {"type": "array", "items": {"type": "object"}}}),
    "Archived": _obj({"total": _INT, "units": {"type": "array", "items": _ref("Node")}}),
    "AddResult": _obj({"namespace": _STR, "added": _STRS, "already_stored": _STRS,
                       "nodes_written": _INT, "edges_written": _INT,
                       "filled_times": _STRS}),
    "Reports": _obj({"namespace": _STR, "reports": {"type": "array", "items": _obj({
        "operator": _STR, "counts": {"type": "object"}, "ms": {"type": "number"},
        "decisions": _INT})}}),
}


def _param(p: Param, where: str = "query") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": p.type}
    if p.minimum is not None:
        schema["minimum"] = p.minimum
    if p.maximum is not None:
        schema["maximum"] = p.maximum
    if p.enum:
        schema["enum"] = list(p.enum)
    return {"name": p.name, "in": where, "required": p.required,
            "description": p.description, "schema": schema}


def _operation(e: Endpoint) -> dict[str, Any]:
    params = [_param(p) for p in e.params]
    params += [_param(Param(name=n, required=True), "path")
               for n in (s.strip("{}") for s in e.path.split("/") if s.startswith("{"))]
    error = {"content": {"application/json": {"schema": _ref("Error")}}}
    op: dict[str, Any] = {
        "summary": e.summary, "tags": [e.tag], "operationId": e.handler.__name__,
        "parameters": params,
        "responses": {"200": {"description": "OK", "content": {
            e.media: {"schema": {"$ref": e.response}}}},
            "400": {"description": "A bad parameter or body (the field is named)", **error},
            "401": {"description": "Missing or wrong bearer token", **error},
            "403": {"description": "A namespace this server does not serve", **error},
            "413": {"description": "Too large (body, text or batch)", **error}},
    }
    if e.body is not None:
        op["requestBody"] = {"required": True,
                             "content": {"application/json": {"schema": e.body}}}
    return op


#: The API's version: its paths and bodies (the hits carry their own schema name).
API_VERSION = "1.0"


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of the API."""
    import labile_http.read_routes
    import labile_http.write_routes  # noqa: F401  (fill ENDPOINTS)

    paths: dict[str, dict[str, Any]] = {}
    for e in ENDPOINTS:
        paths.setdefault(e.path, {})[e.method.lower()] = _operation(e)
    return {
        "openapi": "3.1.0",
        "info": {"title": "labile HTTP API", "version": API_VERSION, "description": (
            "A labile memory over HTTP (`labile serve http`). Every request may carry "
            "'Authorization: Bearer <token>' and must when the server has a token. Errors "
            "are one-line JSON objects {error, field}. Search hits use the "
            f"{HIT_SCHEMA} schema, shared with the CLI's `search --json` and MCP.")},
        "components": {"schemas": SCHEMAS, "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": paths,
    }
