"""Entity nodes of REALM graphs built from the change benchmark (and LoCoMo): types and merges.

`build_entity_graphs` ingests conversations session by session with a preset
and returns every entity node per conversation. Two judged samples read them:

* ``data/entities/merges.jsonl``: one row per judged merge, ids only — the
  conversation, the node id, ``kind`` ("same-name": mentions of one spelling
  in several turns became one node; "alias": a differently spelled name
  joined the node, keyed by the SHA-1 of the alias), and whether the merged
  mentions are one referent. `merge_precision` recomputes the share that
  still hold; a judged merge the code no longer makes is counted apart;
* the mention sample (`labile_bench.entity_eval`): `graph_type_scores` types
  each judged mention by the category of the node its name resolves to, i.e.
  what a reader of the graph sees after every mention has been merged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from labile import Memory
from labile.plugin import Node, NodeFilter, Observation
from labile_bench.entity_eval import LABILE_TYPES, TurnKey
from labile_text.entities import name_keys, normalize_name

__all__ = ["alias_hash", "build_entity_graphs", "graph_type_scores", "merge_precision",
           "merge_rows"]

ENTITY: Final = "realm.entity"
SAMPLE: Final = Path(__file__).with_name("data") / "entities" / "merges.jsonl"


def alias_hash(alias: str) -> str:
    """The id a judged alias is stored under (never the alias itself)."""
    return hashlib.sha1(alias.encode("utf-8")).hexdigest()[:12]


def build_entity_graphs(
    conversations: Iterable[tuple[str, Sequence[Sequence[Observation]]]], preset: str = "realm"
) -> dict[str, list[Node]]:
    """Ingest each conversation (one ``add`` per session) in memory; its entity nodes."""
    out: dict[str, list[Node]] = {}
    with Memory.open({"preset": preset, "store": {"type": "memory"}}) as memory:
        for cid, sessions in conversations:
            for batch in sessions:
                memory.add(list(batch), namespace=cid)
            out[cid] = list(memory.store.iter_nodes(cid, NodeFilter(kinds={ENTITY})))
    return out


def merge_rows(conversation: str, nodes: Iterable[Node]) -> list[dict[str, Any]]:
    """The merges a graph holds, as unjudged rows: same-name nodes and aliases."""
    rows: list[dict[str, Any]] = []
    for node in nodes:
        name = normalize_name(str(node.attrs.get("name", "")))
        if len(node.sources) > 1:
            rows.append({"conversation": conversation, "node": node.id, "kind": "same-name"})
        for alias in node.attrs.get("aliases", ()):
            if normalize_name(str(alias)) != name:
                rows.append({"conversation": conversation, "node": node.id, "kind": "alias",
                             "alias": alias_hash(str(alias))})
    return rows


def _key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return (row["conversation"], row["node"], row["kind"], row.get("alias", ""))


def merge_precision(
    judged: Sequence[dict[str, Any]], graphs: dict[str, list[Node]]
) -> dict[str, Any]:
    """Precision of the judged merges the graphs still make, per kind and overall.

    Only conversations present in ``graphs`` are scored; ``unjudged_alias_merges``
    counts alias merges the graphs make that the sample has no verdict for.
    """
    made = {_key(r) for cid, nodes in graphs.items() for r in merge_rows(cid, nodes)}
    out: dict[str, Any] = {}
    for kind in ("same-name", "alias"):
        rows = [r for r in judged if r["kind"] == kind and r["conversation"] in graphs]
        kept = [r for r in rows if _key(r) in made]
        right = sum(bool(r["same_referent"]) for r in kept)
        out[kind] = {"judged": len(rows), "still_made": len(kept), "correct": right,
                     "precision": round(100.0 * right / len(kept), 1) if kept else None}
    judged_keys = {_key(r) for r in judged}
    out["unjudged_alias_merges"] = sum(1 for k in made if k[2] == "alias" and k not in judged_keys)
    return out


def graph_type_scores(
    rows: Sequence[dict[str, Any]], texts: dict[TurnKey, str], graphs: dict[str, list[Node]]
) -> dict[str, Any]:
    """Type precision when each judged entity takes the category of its graph node.

    A judged entity (not "none") of a built conversation counts as typed right
    when its name resolves to a node (by `name_keys`) whose category matches.
    """
    index: dict[tuple[str, str], Node] = {}
    for cid, nodes in graphs.items():
        for node in nodes:
            for name in (node.attrs.get("name", ""), *node.attrs.get("aliases", ())):
                for key in name_keys(str(name)):
                    index.setdefault((cid, key), node)
    scored = right = found = 0
    for row in rows:
        if row["type"] == "none" or row["conversation"] not in graphs:
            continue
        scored += 1
        text = texts[(row["source"], row["conversation"], row["turn"])]
        name = text[row["span"][0]:row["span"][1]]
        hit = next((index[(row["conversation"], k)] for k in name_keys(name)
                    if (row["conversation"], k) in index), None)
        if hit is None:
            continue
        found += 1
        right += LABILE_TYPES.get(str(hit.attrs.get("category")), "") == row["type"]
    return {"judged_entities": scored, "with_node": found, "typed_right": right,
            "precision": round(100.0 * right / found, 1) if found else None}
