"""The OpenAPI document: served, complete, and the copy in docs/ is current."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.testclient import TestClient

from labile_http.context import ENDPOINTS
from labile_http.openapi import openapi_document

DOCS_COPY = Path(__file__).parents[2] / "docs" / "openapi.json"


def test_the_checked_in_copy_is_current() -> None:
    """Regenerate with: labile serve http --print-openapi > docs/openapi.json"""
    assert json.loads(DOCS_COPY.read_text(encoding="utf-8")) == openapi_document(), (
        "docs/openapi.json is stale: labile serve http --print-openapi > docs/openapi.json")


def test_every_route_is_documented_and_served(client: TestClient) -> None:
    served = client.get("/openapi.json").json()
    assert served == openapi_document()
    documented = {(m.upper(), p) for p, ops in served["paths"].items() for m in ops}
    assert documented == {(e.method, e.path) for e in ENDPOINTS}
    for path, ops in served["paths"].items():
        for op in ops.values():
            assert op["summary"] and "400" in op["responses"], path
    hit = served["components"]["schemas"]["Hit"]["properties"]
    assert {"dates", "sources", "reached", "validity", "relative_score"} <= set(hit)
