"""The HTTP API in process: results, the namespace binding, the token, and bad input refused.

Every refusal is a one-line JSON error naming the field, and leaves the memory
exactly as it was.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from labile import AsyncMemory, Memory
from labile_http.app import build_app
from labile_mcp.policy import ServePolicy


def counts(client: TestClient) -> dict[str, Any]:
    return client.get("/api/namespaces").json()["namespaces"][0]


def assert_error(response: Any, status: int, field: str | None) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "field"} and body["field"] == field
    assert "\n" not in body["error"] and "Traceback" not in body["error"]
    return str(body["error"])


def test_namespaces_lists_only_the_served_ones_with_counts(client: TestClient) -> None:
    data = client.get("/api/namespaces").json()
    assert [n["name"] for n in data["namespaces"]] == ["maya"]
    maya = data["namespaces"][0]
    assert maya["observations"] == 6 and maya["nodes"] > 0 and maya["edges"] > 0
    assert data["default"] == "maya" and data["allow_purge"] is True


def test_search_returns_the_hit_schema_and_its_subgraph(client: TestClient) -> None:
    res = client.get("/api/search", params={"q": "Where did Maya move?", "k": 4})
    data = res.json()
    assert res.status_code == 200 and data["schema"] == "labile.hit/1"
    assert [h["rank"] for h in data["hits"]] == list(range(1, len(data["hits"]) + 1))
    assert data["hits"] and data["hits"][0]["relative_score"] == 1.0
    sourced = [s for h in data["hits"] for s in h["sources"]]
    assert sourced and all(s["speaker"] in ("Maya", "Tom") and s["time"] for s in sourced)
    assert any("Lisbon" in s["text"] for s in sourced)
    graph = client.get(f"/api/results/{data['result_id']}/subgraph").json()
    ids = {n["id"] for n in graph["nodes"]}
    assert {h["id"] for h in data["hits"]} <= ids
    assert {n["hit_rank"] for n in graph["nodes"] if n["hit_rank"]} == set(
        range(1, len(data["hits"]) + 1))
    assert all(e["src"] in ids and e["dst"] in ids for e in graph["edges"])


SECRET_READS = ["/api/search?q=vault", "/api/observations", "/api/nodes", "/api/edges",
                "/api/timeline", "/api/archived", "/api/stats", "/api/export",
                "/api/node?id=x1", "/api/node/neighbourhood?id=x1", "/api/edge?id=a"]


@pytest.mark.parametrize("path", SECRET_READS)
def test_no_endpoint_reaches_a_namespace_not_served(client: TestClient, path: str) -> None:
    sep = "&" if "?" in path else "?"
    res = client.get(f"{path}{sep}namespace=secret")
    assert_error(res, 403, "namespace")
    assert "4411" not in res.text


@pytest.mark.parametrize(("path", "body"), [
    ("/api/add", {"text": "the vault code changed"}), ("/api/forget", {"ids": ["x1"]}),
    ("/api/purge", {"confirm": "secret"}), ("/api/consolidate", None)])
def test_no_write_reaches_a_namespace_not_served(client: TestClient, memory: Memory,
                                                 path: str, body: Any) -> None:
    assert_error(client.post(f"{path}?namespace=secret", json=body), 403, "namespace")
    assert [o.id for o in memory.get("secret", ["x1"])] == ["x1"]


@pytest.mark.parametrize(("params", "field", "allowed"), [
    ({"q": "cat", "k": "0"}, "k", "1 to 50"), ({"q": "cat", "k": "many"}, "k", "integer"),
    ({"q": "cat", "k": "51"}, "k", "1 to 50"), ({}, "q", "required"),
    ({"q": "cat", "as_of": "yesterday"}, "as_of", "ISO 8601")])
def test_bad_search_parameters_name_the_field(client: TestClient, params: dict[str, str],
                                              field: str, allowed: str) -> None:
    assert allowed in assert_error(client.get("/api/search", params=params), 400, field)


@pytest.mark.parametrize(("body", "status", "field"), [
    ({"txt": "typo"}, 400, "txt"),
    ({"text": "a", "messages": []}, 400, "text"),
    ({"messages": [{"content": 3}]}, 400, "messages[0].content"),
    ({"messages": [{"content": "hi", "user_id": "u"}]}, 400, "messages[0].user_id"),
    ({"messages": [{"content": "hi", "time": "not a time"}]}, 400, None),
    ({"text": "x" * 100_001}, 413, "text"),
    ({"file": "[]"}, 400, "format"),
    ({"file": "{not json", "format": "messages"}, 400, "file"),
    ([1, 2], 400, "body"),
])
def test_bad_adds_are_refused_and_store_nothing(client: TestClient, body: Any, status: int,
                                                field: str | None) -> None:
    before = counts(client)
    assert_error(client.post("/api/add", json=body), status, field)
    assert counts(client) == before


def test_add_takes_notes_messages_and_chat_logs_once(client: TestClient) -> None:
    note = client.post("/api/add", json={"text": "Maya's sister is called Ines."}).json()
    assert len(note["added"]) == 1
    log = [{"role": "user", "content": "My bike is red."},
           {"role": "assistant", "content": "Noted: a red bike."}]
    first = client.post("/api/add", json={"file": json.dumps(log), "format": "messages"})
    again = client.post("/api/add", json={"file": json.dumps(log), "format": "messages"})
    assert first.status_code == 200 and len(first.json()["added"]) == 2
    assert again.json()["added"] == [] and len(again.json()["already_stored"]) == 2
    lines = "\n".join(json.dumps({"id": f"j{i}", "speaker": "Tom", "text": t,
                                  "timestamp": "2024-05-01T09:00:00Z"})
                      for i, t in enumerate(["I run on Sundays.", "I hate rain."]))
    jsonl = client.post("/api/add", json={"file": lines, "format": "jsonl"}).json()
    assert sorted(jsonl["added"]) == ["j0", "j1"]
    assert counts(client)["observations"] == 6 + 1 + 2 + 2


def test_forget_removes_a_turn_from_search_and_reads(client: TestClient) -> None:
    hits = client.get("/api/search", params={"q": "Pixel the grey cat", "k": 5}).json()["hits"]
    assert any(s["id"] == "t4" for h in hits for s in h["sources"])
    removed = client.post("/api/forget", json={"ids": ["t4"]}).json()["removed"]
    assert removed["observations"] == 1 and removed["unknown"] == 0
    hits = client.get("/api/search", params={"q": "Pixel the grey cat", "k": 5}).json()["hits"]
    assert all(s["id"] != "t4" for h in hits for s in h["sources"])
    assert client.get("/api/observations?ids=t4,t5").json()["unknown"] == ["t4"]


def test_purge_needs_the_name_again_and_the_server_flag(client: TestClient,
                                                        memory: Memory) -> None:
    assert "repeat" in assert_error(client.post("/api/purge", json={"confirm": "may"}), 400,
                                    "confirm")
    assert counts(client)["observations"] == 6
    app = build_app(AsyncMemory(memory), ServePolicy(namespaces=("maya",)))
    with TestClient(app) as strict:
        assert "--allow-purge" in assert_error(
            strict.post("/api/purge", json={"confirm": "maya"}), 403, None)
    assert client.post("/api/purge", json={"confirm": "maya"}).json()["purged"] is True
    assert counts(client)["observations"] == 0


def test_node_neighbourhood_edges_and_timeline(client: TestClient) -> None:
    nodes = client.get("/api/nodes", params={"limit": 3}).json()
    assert len(nodes["items"]) == 3 and nodes["total"] > 3 and nodes["next_offset"] == 3
    first = nodes["items"][0]["id"]
    detail = client.get("/api/node", params={"id": first}).json()
    assert detail["node"]["id"] == first and detail["edges"]
    near = client.get("/api/node/neighbourhood", params={"id": first, "hops": 2,
                                                         "limit": 4}).json()
    assert near["center"] == first and 1 < len(near["nodes"]) <= 4
    assert_error(client.get("/api/node", params={"id": "nope"}), 404, "id")
    assert_error(client.get("/api/node/neighbourhood", params={"id": "n", "hops": 9}), 400,
                 "hops")
    timeline = client.get("/api/timeline").json()
    assert [(s["session"], s["turns"]) for s in timeline["sessions"]] == [("s1", 3), ("s2", 3)]
    assert timeline["days"] and timeline["days"] == sorted(timeline["days"],
                                                           key=lambda d: d["date"])


def test_feedback_edits_an_edge_and_undo_restores_its_weight(client: TestClient) -> None:
    found = client.get("/api/search", params={"q": "Maya sourdough bread bakery", "k": 5}).json()
    reports = client.post("/api/feedback", json={"result_id": found["result_id"],
                                                 "useful": True}).json()["reports"]
    assert reports and reports[0]["operator"] == "realm.reconsolidate"
    edited = [e for e in client.get("/api/edges", params={"limit": 500}).json()["items"]
              if e["history"]]
    assert edited, "reconsolidation recorded no edit"
    edge = edited[0]
    last = edge["history"][-1]
    undone = client.post("/api/edge/undo", params={"id": edge["id"]}).json()
    expected = 0.0 if last["old_weight"] is None else last["old_weight"]
    assert undone["weight"] == pytest.approx(expected)
    assert undone["history"][-1]["decision"] == "undo"
    assert undone["history"][-1]["old_weight"] == pytest.approx(edge["weight"])
    assert_error(client.post("/api/feedback", json={"result_id": "stale"}), 404, "result_id")


def test_export_in_every_format(client: TestClient) -> None:
    lines = client.get("/api/export").text.splitlines()
    assert json.loads(lines[0])["format"] == "labile-export" and len(lines) > 6
    graphml = ET.fromstring(client.get("/api/export", params={"format": "graphml"}).text)
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    keys = {k.get("attr.name") for k in graphml.findall("g:key", ns)}
    assert {"kind", "predicate", "weight", "current", "sources"} <= keys
    assert "digraph" in client.get("/api/export", params={"format": "dot"}).text
    jg = client.get("/api/export", params={"format": "json-graph"}).json()["graph"]
    assert jg["directed"] and jg["nodes"] and {e["relation"] for e in jg["edges"]}
    assert_error(client.get("/api/export", params={"format": "png"}), 400, "format")


def test_unknown_paths_and_methods_are_json(client: TestClient) -> None:
    assert_error(client.get("/api/nothing"), 404, None)
    assert_error(client.get("/api/add"), 405, None)


def test_an_internal_failure_says_nothing_of_its_details(memory: Memory) -> None:
    amem = AsyncMemory(memory)

    async def broken(*_a: Any, **_k: Any) -> Any:
        raise RuntimeError("/secret/path/in/the/message")

    amem.search = broken  # type: ignore[method-assign]
    with TestClient(build_app(amem, ServePolicy(namespaces=("maya",)))) as c:
        res = c.get("/api/search", params={"q": "cat"})
    assert "secret" not in assert_error(res, 500, None)


def test_the_token_guards_the_api_but_not_the_page(memory: Memory) -> None:
    app = build_app(AsyncMemory(memory), ServePolicy(namespaces=("maya",)), token="s3cret")
    with TestClient(app) as c:
        assert c.get("/").status_code == 200 and "labile" in c.get("/").text
        assert c.get("/static/app.js").status_code == 200
        assert c.get("/api/namespaces").status_code == 401
        assert c.get("/openapi.json").status_code == 401
        bad = c.get("/api/namespaces", headers={"Authorization": "Bearer nope"})
        assert bad.status_code == 401
        ok = c.get("/api/namespaces", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200


def test_a_body_over_the_limit_gets_413_and_stores_nothing(memory: Memory) -> None:
    app = build_app(AsyncMemory(memory), ServePolicy(namespaces=("maya",)),
                    max_request_bytes=200)
    with TestClient(app) as c:
        res = c.post("/api/add", json={"text": "y" * 300})
        assert_error(res, 413, "body")
    assert len(memory.list("maya").items) == 6


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=st.text(max_size=60), k=st.one_of(st.integers(-5, 80).map(str), st.text(max_size=4)))
def test_any_query_is_answered_or_refused_in_one_json_line(client: TestClient, q: str,
                                                           k: str) -> None:
    """Property: whatever the query string holds, the reply is the hit schema or a 4xx
    one-line JSON error naming q or k, never a 500."""
    res = client.get("/api/search", params={"q": q, "k": k})
    if res.status_code == 200:
        assert res.json()["schema"] == "labile.hit/1"
    else:
        assert 400 <= res.status_code < 500
        assert res.json()["field"] in ("q", "k") and "\n" not in res.json()["error"]


def test_archived_units_show_what_replaced_them(client: TestClient, memory: Memory) -> None:
    from labile import Edge, Node

    old = Node(id="u-old", kind="allmem.unit", content="I plan to visit Lisbon",
               visible=False, sources=("t1",))
    new = Node(id="u-new", kind="allmem.unit", content="I visited Lisbon", sources=("t1",),
               attrs={"derived_from": ["u-old"]})
    with memory.write_lock, memory.store.batch("maya"):
        memory.store.upsert_nodes("maya", [old, new])
        memory.store.upsert_edges("maya", [Edge(id="u-new|allmem.lineage|u-old", src="u-new",
                                                dst="u-old", predicate="allmem.lineage",
                                                weight=1.0)])
    data = client.get("/api/archived").json()
    assert data["total"] == 1 and [u["id"] for u in data["units"]] == ["u-old"]
    assert data["units"][0]["replaced_by"] == [{"from": "u-new", "predicate": "allmem.lineage",
                                                "weight": 1.0}]
    detail = client.get("/api/node", params={"id": "u-new"}).json()
    assert detail["node"]["lineage"] == ["u-old"]


def test_a_log_with_some_times_missing_says_which_were_filled_or_is_refused(
        client: TestClient) -> None:
    """As `labile add`: a record without a time takes the one before it, and the response
    names it; with require_timestamps the log is refused and nothing is stored."""
    log = [{"role": "user", "content": "I moved to Lyon.", "timestamp": "2024-05-01T09:00:00Z"},
           {"role": "user", "content": "The flat is tiny."}]
    before = counts(client)
    refused = client.post("/api/add", json={"file": json.dumps(log), "format": "messages",
                                            "require_timestamps": True})
    message = assert_error(refused, 400, "file")
    assert "require_timestamps" in message and "--" not in message
    assert "labile-http-add" not in message  # not the server's temporary path
    assert counts(client) == before
    added = client.post("/api/add", json={"file": json.dumps(log), "format": "messages"}).json()
    assert len(added["added"]) == 2 and added["filled_times"] == ["message 2"]
    timed = client.post("/api/add", json={"text": "A note."}).json()
    assert timed["filled_times"] == []
