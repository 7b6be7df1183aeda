"""The reading endpoints: namespaces, search, records, graphs, timeline, export, stats.

Every handler resolves its namespace through the `ServePolicy` first, so no
request can read a namespace the server was not started for.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from labile_http import views
from labile_http.context import NAMESPACE, Param, context, endpoint
from labile_http.errors import ApiError, Params
from labile_io.graphs import GRAPH_FORMATS, edge_dict, neighbourhood, node_dict, subgraph_of
from labile_io.hits import result_to_dict, source_ids

_COUNTS = ("observations", "nodes", "visible_nodes", "edges")
OFFSET = Param(name="offset", type="integer", minimum=0, description="Skip this many.")
LIMIT = Param(name="limit", type="integer", minimum=1, maximum=500,
              description="At most this many (default 50).")
ID = Param(name="id", required=True, description="The record's id.")


def _page(p: Params) -> tuple[int, int]:
    return p.integer("offset", 0, low=0, high=10**9), p.integer("limit", 50, low=1, high=500)


@endpoint("GET", "/api/namespaces", "The served namespaces with their counts.",
          response="Namespaces")
async def namespaces(request: Request) -> Response:
    ctx = context(request)
    store = ctx.memory.store

    def counts() -> list[dict[str, Any]]:
        out = []
        for ns in ctx.policy.namespaces:
            stats = store.stats(ns)
            out.append({"name": ns, **{k: int(stats.get(k) or 0) for k in _COUNTS}})
        return out

    return JSONResponse({"namespaces": await ctx.in_thread(counts),
                         "default": ctx.policy.namespaces[0]
                         if len(ctx.policy.namespaces) == 1 else None,
                         "allow_purge": ctx.policy.allow_purge})


@endpoint("GET", "/api/search", "Search: hits in the labile.hit/1 schema, and a result_id "
          "for its subgraph and feedback.", response="SearchResult", params=(
              Param(name="q", required=True, description="The query."),
              Param(name="k", type="integer", minimum=1, maximum=50,
                    description="How many hits (default 5; the server's --max-k caps it)."),
              Param(name="as_of", description="ISO 8601 moment the query is asked at "
                    "(default now); no zone means UTC."), NAMESPACE))
async def search(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    query = p.text("q", required=True, max_chars=ctx.policy.max_text_chars)
    assert query is not None
    k = p.integer("k", 5, low=1, high=ctx.policy.max_k)
    result = await ctx.amem.search(query, namespace=ns, k=k, as_of=p.time("as_of"))
    found = {o.id: o for o in await ctx.amem.get(ns, source_ids(result))} if result.hits else {}
    return JSONResponse({**result_to_dict(result, found), "result_id": ctx.keep(result)})


@endpoint("GET", "/api/results/{result_id}/subgraph", "The activated subgraph of a recent "
          "search: its hits, the nodes on the paths that reached them, the edges among them.",
          response="Graph", params=(NAMESPACE,))
async def result_subgraph(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    result = ctx.result(request.path_params["result_id"], ns)
    ids = list(dict.fromkeys(itertools.chain.from_iterable(
        (*h.via.path, h.node.id) for h in result.hits)))
    view = (await ctx.in_thread(subgraph_of, ctx.memory.store, ns, ids)).to_json()
    ranks = {h.node.id: i for i, h in enumerate(result.hits, 1)}
    for node in view["nodes"]:
        node["hit_rank"] = ranks.get(node["id"])
    return JSONResponse({"namespace": ns, "query": result.query.text, **view})


@endpoint("GET", "/api/observations", "Observations (turns): by ids, or one page in the order "
          "they were added.", response="Observations", params=(
              Param(name="ids", description="Comma-separated ids (instead of a page)."),
              OFFSET, LIMIT, NAMESPACE))
async def observations(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    ids = p.text("ids")
    if ids:
        wanted = [i for i in ids.split(",") if i]
        found = await ctx.amem.get(ns, wanted)
        known = {o.id for o in found}
        return JSONResponse({"namespace": ns, "items": [_obs(o) for o in found],
                             "unknown": [i for i in wanted if i not in known]})
    offset, limit = _page(p)
    page = await ctx.amem.list(ns, offset=offset, limit=limit)
    return JSONResponse({"namespace": ns, "items": [_obs(o) for o in page.items],
                         "total": page.total, "next_offset": page.next_offset})


def _obs(o: Any) -> dict[str, Any]:
    return {"id": o.id, "text": o.text, "time": o.timestamp.isoformat(), "speaker": o.speaker,
            "session": o.session, "metadata": o.metadata}


@endpoint("GET", "/api/nodes", "Memory nodes, one page in insertion order.",
          response="Nodes", params=(
              Param(name="visible", type="boolean", description="Only visible (true) or only "
                    "archived (false) nodes."), OFFSET, LIMIT, NAMESPACE))
async def nodes(request: Request) -> Response:
    from labile.plugin import NodeFilter

    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    offset, limit = _page(p)
    visible = p.flag("visible")
    where = NodeFilter(visible=visible) if visible is not None else None
    page = await ctx.amem.list_nodes(ns, offset=offset, limit=limit, where=where)
    return JSONResponse({"namespace": ns, "items": [node_dict(n) for n in page.items],
                         "total": page.total, "next_offset": page.next_offset})


@endpoint("GET", "/api/node", "One node with its source turns and its edges (in and out).",
          response="NodeDetail", params=(ID, NAMESPACE))
async def node(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    node_id = p.text("id", required=True, max_chars=1000)
    assert node_id is not None
    found = await ctx.amem.get_nodes(ns, [node_id])
    if not found:
        raise ApiError(404, f"no node {node_id!r} in namespace {ns!r}", "id")
    record = found[0]
    sources = await ctx.amem.get(ns, list(record.sources)) if record.sources else []
    edges = await ctx.in_thread(ctx.memory.store.edges_of, ns, [node_id], direction="both")
    return JSONResponse({"namespace": ns, "node": node_dict(record),
                         "sources": [_obs(o) for o in sources],
                         "edges": [edge_dict(e) for e in edges]})


@endpoint("GET", "/api/node/neighbourhood", "A node and the nodes within a few edges of it "
          "(either direction), with the edges among them.", response="Graph", params=(
              ID, Param(name="hops", type="integer", minimum=1, maximum=3,
                        description="How far (default 1)."),
              Param(name="limit", type="integer", minimum=1, maximum=500,
                    description="Most nodes (default 200), nearest first."), NAMESPACE))
async def node_neighbourhood(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    node_id = p.text("id", required=True, max_chars=1000)
    assert node_id is not None
    hops = p.integer("hops", 1, low=1, high=3)
    limit = p.integer("limit", 200, low=1, high=500)
    view = await ctx.in_thread(neighbourhood, ctx.memory.store, ns, node_id, hops=hops,
                               limit=limit)
    if not any(n["id"] == node_id for n in view.nodes):
        raise ApiError(404, f"no node {node_id!r} in namespace {ns!r}", "id")
    return JSONResponse({"namespace": ns, "center": node_id, **view.to_json()})


@endpoint("GET", "/api/edges", "Edges, one page in insertion order.", response="Edges",
          params=(OFFSET, LIMIT, NAMESPACE))
async def edges(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    offset, limit = _page(p)

    def page() -> list[dict[str, Any]]:
        rows = itertools.islice(ctx.memory.store.iter_edges(ns), offset, offset + limit)
        return [edge_dict(e) for e in rows]

    return JSONResponse({"namespace": ns, "items": await ctx.in_thread(page),
                         "total": await ctx.in_thread(ctx.memory.store.count_edges, ns)})


@endpoint("GET", "/api/edge", "One edge with its reconsolidation edits (the audit).",
          response="Edge", params=(ID, NAMESPACE))
async def edge(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    edge_id = p.text("id", required=True, max_chars=3000)
    return JSONResponse(await ctx.in_thread(views.edge_audit, ctx.memory, ns, edge_id))


@endpoint("GET", "/api/timeline", "Sessions, and dated memories by day.", response="Timeline",
          params=(Param(name="limit", type="integer", minimum=1, maximum=5000,
                        description="Most dated memories (default 1000)."), NAMESPACE))
async def timeline(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    limit = p.integer("limit", 1000, low=1, high=5000)
    return JSONResponse(await ctx.in_thread(views.timeline, ctx.memory, ns, limit=limit))


@endpoint("GET", "/api/archived", "Archived (invisible) nodes and what replaced them: "
          "All-Mem's lineage and version links.", response="Archived", params=(
              Param(name="limit", type="integer", minimum=1, maximum=500,
                    description="Most units (default 100)."), NAMESPACE))
async def archived(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    limit = p.integer("limit", 100, low=1, high=500)
    return JSONResponse(await ctx.in_thread(views.archived, ctx.memory, ns, limit=limit))


@endpoint("GET", "/api/stats", "The namespace's counts and the pipeline that built it.",
          response="Any", params=(NAMESPACE,))
async def stats(request: Request) -> Response:
    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    found = await ctx.amem.stats(ns)
    # Only this namespace's figures: the store-wide ones describe other namespaces too.
    return JSONResponse({"namespace": ns, "pipeline": found["pipeline"],
                         "store": {k: found["store"][k] for k in _COUNTS if k in found["store"]},
                         "pending": found["pending"]})


_MEDIA = {"jsonl": "application/x-ndjson", "graphml": "application/xml",
          "dot": "text/vnd.graphviz", "json-graph": "application/json"}


@endpoint("GET", "/api/export", "The namespace as the versioned JSON lines of `labile export`, "
          "or its graph (GraphML, DOT, JSON Graph).", media="application/octet-stream",
          response="Any", params=(Param(name="format", enum=("jsonl", *GRAPH_FORMATS),
                                        description="Default jsonl."), NAMESPACE))
async def export(request: Request) -> Response:
    from labile_io.graphs import whole
    from labile_io.transfer import export_records

    ctx, p = context(request), Params(request.query_params)
    ns = ctx.namespace(p.text("namespace"))
    fmt = p.choice("format", "jsonl", ("jsonl", *GRAPH_FORMATS))

    def render() -> str:
        if fmt == "jsonl":
            return "".join(json.dumps(r, ensure_ascii=False) + "\n"
                           for r in export_records(ctx.memory, ns))
        view = whole(ctx.memory.store, ns)
        if fmt == "json-graph":
            return json.dumps(view.to_json_graph(ns), ensure_ascii=False)
        return view.write(fmt)

    suffix = {"jsonl": "jsonl", "graphml": "graphml", "dot": "dot", "json-graph": "json"}[fmt]
    return Response(await ctx.in_thread(render), media_type=_MEDIA[fmt], headers={
        "content-disposition": f'attachment; filename="{ns}.{suffix}"'})
