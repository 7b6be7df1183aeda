"""REALM's reconsolidation prompt: audit a recalled subgraph and propose edge edits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from labile.plugin import Edge, Node
from labile_realm.prompts.common import IDS, STRING, node_line, schema_text
from labile_realm.schema import SHORT_BY_PREDICATE, predicate_table

TOPOLOGY_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["topic", "gold_supporting_node_ids", "supporting_associated_node_ids",
                 "misleading_node_ids", "unrelated_node_ids", "operations"],
    "additionalProperties": False,
    "properties": {
        "topic": {"type": "string", "maxLength": 600},
        "gold_supporting_node_ids": IDS,
        "supporting_associated_node_ids": IDS,
        "misleading_node_ids": IDS,
        "unrelated_node_ids": IDS,
        "operations": {
            "type": "array",
            "maxItems": 20,
            "items": {
                "type": "object",
                "required": ["action", "confidence"],
                "additionalProperties": False,
                "properties": {
                    "action": {"enum": ["add_edge", "strengthen_edge", "weaken_edge"]},
                    "source": {"type": "integer", "minimum": 1},
                    "target": {"type": "integer", "minimum": 1},
                    "predicate": STRING,
                    "edge_id": {"type": "integer", "minimum": 1},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "reason": {"type": "string", "maxLength": 400},
                },
            },
        },
    },
}


def topology_prompt(
    question: str,
    answer: str | None,
    nodes: Sequence[tuple[int, Node]],
    edges: Sequence[tuple[int, int, int, Edge]],
) -> str:
    """Ask for the audit of a recalled subgraph and the edge edits it calls for."""
    node_lines = "\n".join(node_line(s, n) for s, n in nodes)
    edge_lines = "\n".join(
        f"E{eid}: [{s}] -{SHORT_BY_PREDICATE.get(e.predicate, e.predicate)}-> [{d}] "
        f"(weight {e.weight:.2f}) {e.description}"
        for eid, s, d, e in edges
    ) or "(none)"
    return f"""Audit a piece of a memory graph that was just recalled to answer a question,
and propose edits to its edges that will make future recall better.

Steps:
1. topic: what the recalled nodes are about as a whole. The question is only a hint; if
   the answer looks wrong, describe the topic the nodes themselves point to.
2. gold_supporting_node_ids: nodes that hold the key evidence for the question or topic.
3. supporting_associated_node_ids: nodes giving needed context (background, time,
   constraints, who is who).
4. misleading_node_ids / unrelated_node_ids: nodes that are off topic or would send a
   search the wrong way.
5. operations: "strengthen_edge" or "weaken_edge" an existing edge (give its number in
   edge_id, e.g. 3 for E3), or "add_edge" between two recalled nodes that clearly belong
   together but are not linked (give source, target and a predicate). Give each a
   confidence in [0, 1]: how sure you are it helps future recall. The system turns
   confidence into a weight change; do not give weights.

Constraints: only the nodes and edges shown; never delete an edge or change a node;
only predicates from the list; when the evidence is ambiguous, propose nothing.

Predicates (layer/name: meaning):
{predicate_table()}

QUESTION: {question}
ANSWER GIVEN BY THE SYSTEM: {answer or "(none)"}

RECALLED NODES:
{node_lines}

EDGES AMONG THEM:
{edge_lines}

Reply with JSON matching this schema:
{schema_text(TOPOLOGY_SCHEMA)}"""
