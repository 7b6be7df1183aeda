"""The graph at the command line: ``namespaces``, ``get --nodes --edges``, ``export --format``,
and the labelled ``search`` output in the one hit schema."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from labile_cli import main

CONFIG = """\
preset = "realm"

[store]
type = "lancedb"
path = "{path}"

[embedder]
type = "hashing"
"""

TURNS = [{"id": "t1", "speaker": "Maya", "timestamp": "2024-03-02T10:00:00Z", "session": "s1",
          "text": "We moved to Lisbon last week."},
         {"id": "t2", "speaker": "Tom", "timestamp": "2024-03-02T10:01:00Z", "session": "s1",
          "text": "How is the new job at the bakery?"}]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("graph-cli")
    cfg = root / "memory.toml"
    cfg.write_text(CONFIG.format(path=root / "store"), encoding="utf-8")
    log = root / "chat.jsonl"
    log.write_text("\n".join(json.dumps(t) for t in TURNS), encoding="utf-8")
    assert main(["add", "-c", str(cfg), "-n", "maya", str(log)]) == 0
    return ["-c", str(cfg)]


def _out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out


def test_namespaces_lists_names_and_counts(store: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(_out(capsys, ["namespaces", *store, "--json"]))
    assert list(data) == ["maya"] and data["maya"]["observations"] == 2
    assert data["maya"]["nodes"] > 0 and data["maya"]["edges"] > 0
    assert _out(capsys, ["namespaces", *store]).startswith("maya  observations 2")


def test_get_nodes_with_edges(store: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    node_id = json.loads(_out(capsys, ["list", *store, "-n", "maya", "--nodes", "--json",
                                       "--limit", "1"]).splitlines()[0])["id"]
    rows = [json.loads(line) for line in _out(capsys, [
        "get", *store, "-n", "maya", "--nodes", "--edges", "--json", node_id]).splitlines()]
    edges = [r for r in rows if r.get("type") == "edge"]
    assert rows[0]["id"] == node_id and edges
    assert all(node_id in (e["src"], e["dst"]) and 0 <= e["weight"] <= 1 for e in edges)
    assert "-[" in _out(capsys, ["get", *store, "-n", "maya", "--nodes", "--edges", node_id])


def test_get_edges_without_nodes_is_refused(store: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["get", *store, "-n", "maya", "--edges", "t1"]) != 0
    assert "--nodes" in capsys.readouterr().err


def test_export_graph_formats(store: list[str], capsys: pytest.CaptureFixture[str],
                              tmp_path: Path) -> None:
    graphml = ET.fromstring(_out(capsys, ["export", *store, "-n", "maya", "--format",
                                          "graphml"]))
    keys = {k.get("attr.name") for k in graphml.iter("{http://graphml.graphdrawing.org/xmlns}key")}
    assert {"kind", "predicate", "weight", "current", "valid_to", "sources"} <= keys
    dot = _out(capsys, ["export", *store, "-n", "maya", "--format", "dot"])
    assert dot.lstrip().startswith("/*") and "digraph" in dot and "realm." in dot
    out = tmp_path / "g.json"
    assert main(["export", *store, "-n", "maya", "--format", "json-graph", "-o", str(out)]) == 0
    graph = json.loads(out.read_text(encoding="utf-8"))["graph"]
    assert graph["nodes"] and all(e["source"] in graph["nodes"] for e in graph["edges"])


def test_search_labels_dates_and_json_uses_the_hit_schema(
        store: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    text = _out(capsys, ["search", *store, "-n", "maya", "-k", "2", "Where did Maya move?"])
    assert "said 2024-03-02" in text and "why: seed" in text and "↳ t1 Maya" in text
    data = json.loads(_out(capsys, ["search", *store, "-n", "maya", "-k", "2", "--json",
                                    "Where did Maya move?"]))
    assert data["schema"] == "labile.hit/1" and len(data["hits"]) == 2
    assert data["hits"][0]["sources"][0]["speaker"] in ("Maya", "Tom")
