"""The writing endpoints: add, feedback, consolidate, forget, purge, undo an edge's edit.

Bodies are JSON objects; unknown fields are refused (a typo is never silently
ignored), sizes are checked against the `ServePolicy` before anything is
written, and each write is one `Memory` batch, so a refused or failed request
stores nothing.
"""

from __future__ import annotations

import logging
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from labile.plugin import InputError, Observation, OperationReport
from labile_http import views
from labile_http.context import NAMESPACE, Param, context, endpoint
from labile_http.errors import ApiError, Params, body_field, check_fields, json_body
from labile_io.formats import FORMATS
from labile_io.speakers import name_with_stored_async, parse_speakers
from labile_mcp.convert import messages_to_observations

log = logging.getLogger(__name__)

_MESSAGE_FIELDS = ("content", "role", "time", "id", "session")

ADD_BODY: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "description": "Exactly one of messages, text or file.",
    "properties": {
        "messages": {"type": "array", "items": {"$ref": "#/components/schemas/ChatMessage"}},
        "text": {"type": "string", "description": "A plain note (one turn, dated now)."},
        "file": {"type": "string", "description": "The content of a chat log, as `labile "
                 "add` reads it."},
        "format": {"type": "string", "enum": list(FORMATS),
                   "description": "The chat log's format (with file)."},
        "require_timestamps": {"type": "boolean", "description": "With file: refuse a log "
                               "where some records have a time and others do not (by "
                               "default each of those takes the time of the record before, "
                               "and the response lists them in filled_times)."},
        "speakers": {"type": "object", "additionalProperties": {"type": "string"},
                     "description": "Who the roles are, e.g. {\"user\": \"Elena\"}: their "
                     "turns are stored under that name (the role is kept in metadata). "
                     "Default: a role is named by the log's 'name' field or by a "
                     "self-introduction (\"I'm Elena\") in this or an earlier add; a role "
                     "mapped to itself undoes that."},
    }}


def _reports(reports: list[OperationReport]) -> list[dict[str, Any]]:
    return [{"operator": r.operator, "counts": r.counts, "ms": round(r.ms, 3),
             "decisions": len(r.log)} for r in reports]


def _messages(body: dict[str, Any], max_chars: int) -> list[dict[str, Any]]:
    raw = body_field(body, "messages", list)
    items: list[dict[str, Any]] = []
    for i, msg in enumerate(raw):
        if not isinstance(msg, dict):
            raise ApiError(400, f"messages[{i}] must be an object with 'content'",
                           f"messages[{i}]")
        bad = sorted(set(msg) - set(_MESSAGE_FIELDS))
        if bad:
            raise ApiError(400, f"messages[{i}] has unknown field(s) {', '.join(bad)}; allowed: "
                           f"{', '.join(_MESSAGE_FIELDS)}", f"messages[{i}].{bad[0]}")
        for key in _MESSAGE_FIELDS:
            if msg.get(key) is not None and not isinstance(msg[key], str):
                raise ApiError(400, f"messages[{i}].{key} must be a string",
                               f"messages[{i}].{key}")
        if not msg.get("content"):
            raise ApiError(400, f"messages[{i}].content is required and must not be empty",
                           f"messages[{i}].content")
        if len(msg["content"]) > max_chars:
            raise ApiError(413, f"messages[{i}].content has {len(msg['content']):,} characters; "
                           f"at most {max_chars:,} are accepted (--max-text-chars)",
                           f"messages[{i}].content")
        items.append(msg)
    return items


def _file(body: dict[str, Any], speakers: dict[str, str]) -> tuple[list[Observation], list[str]]:
    """The turns of the uploaded log, and the records whose time was filled in."""
    from labile_io.formats import ReadOptions, read_file

    text = body_field(body, "file", str)
    fmt = body_field(body, "format", str, required=True,
                     allowed=f"one of {', '.join(FORMATS)} (with file)")
    if fmt not in FORMATS:
        raise ApiError(400, f"'format' must be one of {', '.join(FORMATS)}", "format")
    with tempfile.TemporaryDirectory(prefix="labile-http-add-") as tmp:
        path = Path(tmp) / f"upload.{'jsonl' if fmt == 'jsonl' else 'json'}"
        path.write_text(text, encoding="utf-8")
        options = ReadOptions(default_time=datetime.now(UTC), tz=UTC, speakers=speakers,
                              require_timestamps=bool(body_field(body, "require_timestamps",
                                                                 bool)))
        try:
            conversations = read_file(path, fmt, options)
        except InputError as exc:
            # the temporary path and the CLI flag mean nothing to an HTTP client
            message = str(exc).replace(str(path), "file").replace("--require-timestamps",
                                                                  "require_timestamps")
            raise ApiError(400, message, "file") from None
    filled = [where for c in conversations for where in c.filled_times]
    if len(conversations) == 1:
        return list(conversations[0].observations), filled
    # Several conversations into one namespace: keep their ids apart (as `labile add -n`).
    return [attrs.evolve(o, id=f"{c.namespace}:{o.id}") for c in conversations
            for o in c.observations], filled


def _speakers(body: dict[str, Any]) -> dict[str, str]:
    raw = body_field(body, "speakers", dict) or {}
    try:
        return parse_speakers(raw)
    except InputError as exc:
        raise ApiError(400, str(exc), "speakers") from None


@endpoint("POST", "/api/add", "Remember chat turns, a note, or a chat log in any format "
          "`labile add` reads.", body=ADD_BODY, response="AddResult", params=(NAMESPACE,))
async def add(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    body = await json_body(request)
    check_fields(body, ("messages", "text", "file", "format", "speakers", "require_timestamps"))
    speakers = _speakers(body)
    given = [k for k in ("messages", "text", "file") if body.get(k) is not None]
    if len(given) != 1:
        raise ApiError(400, "give exactly one of 'messages' (chat turns), 'text' (a note) or "
                       "'file' (a chat log, with 'format')", given[1] if given else "messages")
    filled: list[str] = []
    if given[0] == "file":
        batch, filled = await ctx.in_thread(_file, body, speakers)
        for obs in batch:
            ctx.check_text(obs.text, "file")
    else:
        if given[0] == "text":
            note = body_field(body, "text", str)
            items = [{"content": note}]
            ctx.check_text(note, "text")
        else:
            items = _messages(body, ctx.policy.max_text_chars)
        batch = messages_to_observations(items, now=datetime.now(UTC))
    if not batch:
        raise ApiError(400, "nothing to add: the request holds no turn", given[0])
    if len(batch) > ctx.policy.max_messages:
        raise ApiError(413, f"{len(batch)} turns in one request; this server accepts at most "
                       f"{ctx.policy.max_messages} (--max-messages): send them in parts",
                       given[0])
    batch = await name_with_stored_async(ctx.amem, ns, batch, speakers)
    report = await ctx.amem.add(batch, namespace=ns)
    log.info("http_add namespace=%s added=%d already=%d", ns, len(report.added),
             len(report.skipped_existing))
    return JSONResponse({"namespace": ns, "added": report.added,
                         "already_stored": report.skipped_existing,
                         "nodes_written": report.nodes_written,
                         "edges_written": report.edges_written,
                         "filled_times": filled})


@endpoint("POST", "/api/feedback", "Tell the reconsolidators how a recent search was used.",
          params=(NAMESPACE,), response="Reports", body={
              "type": "object", "additionalProperties": False, "required": ["result_id"],
              "properties": {"result_id": {"type": "string"},
                             "answer": {"type": "string"},
                             "cited": {"type": "array", "items": {"type": "string"}},
                             "useful": {"type": "boolean"}}})
async def feedback(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    body = await json_body(request)
    check_fields(body, ("result_id", "answer", "cited", "useful"))
    result = ctx.result(body_field(body, "result_id", str, required=True), ns)
    cited = body_field(body, "cited", list) or []
    if not all(isinstance(c, str) for c in cited):
        raise ApiError(400, "'cited' must be a list of node ids (strings)", "cited")
    reports = await ctx.amem.feedback(result, answer=body_field(body, "answer", str),
                                      cited=cited, useful=body_field(body, "useful", bool))
    return JSONResponse({"namespace": ns, "reports": _reports(reports)})


@endpoint("POST", "/api/consolidate", "Run the consolidators over the namespace.",
          params=(NAMESPACE,), response="Reports")
async def consolidate(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    reports = await ctx.amem.consolidate(namespace=ns)
    return JSONResponse({"namespace": ns, "reports": _reports(reports)})


_ERASE = {"type": "boolean", "description": "Also drop the store's earlier data versions now."}


@endpoint("POST", "/api/forget", "Forget turns by id, with everything built from them.",
          params=(NAMESPACE,), response="Any", body={
              "type": "object", "additionalProperties": False, "required": ["ids"],
              "properties": {"ids": {"type": "array", "items": {"type": "string"},
                                     "minItems": 1, "maxItems": 500}, "erase": _ERASE}})
async def forget(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    body = await json_body(request)
    check_fields(body, ("ids", "erase"))
    ids = body_field(body, "ids", list, required=True, allowed="a list of 1 to 500 turn ids")
    if not ids or len(ids) > 500 or not all(isinstance(i, str) and i for i in ids):
        raise ApiError(400, "'ids' must be a list of 1 to 500 turn ids (non-empty strings)",
                       "ids")
    counts = await ctx.amem.forget(ns, ids, erase=bool(body_field(body, "erase", bool)))
    log.info("http_forget namespace=%s counts=%s", ns, counts)
    return JSONResponse({"namespace": ns, "removed": counts})


@endpoint("POST", "/api/purge", "Erase the whole namespace (only on a server started with "
          "--allow-purge); 'confirm' repeats its name.", params=(NAMESPACE,), response="Any",
          body={"type": "object", "additionalProperties": False, "required": ["confirm"],
                "properties": {"confirm": {"type": "string"}, "erase": _ERASE}})
async def purge(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    if not ctx.policy.allow_purge:
        raise ApiError(403, "this server does not purge (start it with --allow-purge)")
    body = await json_body(request)
    check_fields(body, ("confirm", "erase"))
    if body_field(body, "confirm", str, required=True) != ns:
        raise ApiError(400, f"'confirm' must repeat the namespace's name ({ns!r})", "confirm")
    await ctx.amem.purge(ns, erase=bool(body_field(body, "erase", bool)))
    log.warning("http_purge namespace=%s", ns)
    return JSONResponse({"namespace": ns, "purged": True})


@endpoint("POST", "/api/edge/undo", "Undo the latest reconsolidation edit of an edge "
          "(recorded in its history).", response="Edge", params=(
              Param(name="id", required=True, description="The edge's id."), NAMESPACE))
async def undo_edge(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    edge_id = p.text("id", required=True, max_chars=3000)
    # Serialised with every other write by the memory's write lock, taken in the thread.
    # it rebuilds the components: alone, so that no search runs on half-swapped ones
    return JSONResponse(await ctx.amem.run_exclusive(views.undo_last_edit, ctx.memory, ns,
                                                     edge_id))
