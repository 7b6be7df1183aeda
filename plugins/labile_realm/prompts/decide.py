"""REALM's write decisions: what a new unit becomes, and the edges of its node."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from labile.plugin import Edge, Node
from labile_realm.prompts.common import IDS, SHORT, node_line, schema_text
from labile_realm.schema import SHORT_BY_PREDICATE, predicate_table

NODE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["operation", "related"],
    "additionalProperties": False,
    "properties": {
        "operation": {"enum": ["add", "modify", "skip"]},
        "target": {"type": ["integer", "null"], "minimum": 1},
        "description": {"type": "string", "maxLength": 1200},
        # short keywords and reason: SmolLM2 ran a node decision to 512 tokens
        "keywords": {"type": "array", "items": SHORT, "maxItems": 8},
        "related": IDS,
        "reason": {"type": "string", "maxLength": 200},
    },
}


def node_schema(shown: int) -> dict[str, Any]:
    """`NODE_SCHEMA` narrowed to the ``shown`` candidate ids (1..shown).

    A model that decodes under the schema (a grammar-constrained local model)
    then cannot name a candidate the prompt did not show; SmolLM2-135M named
    candidate 1 with no candidates shown, which made its whole reply invalid.
    """
    ids = list(range(1, shown + 1))
    schema: dict[str, Any] = json.loads(json.dumps(NODE_SCHEMA))
    props = schema["properties"]
    props["target"] = {"enum": [*ids, None]}
    # const, not maxItems 0: llama-cpp-python's grammar converter reads 0 as "no limit"
    props["related"] = ({"type": "array", "items": {"enum": ids}, "maxItems": shown}
                        if ids else {"const": []})
    return schema


def node_decision_prompt(unit_text: str, candidates: Sequence[tuple[int, Node, str, float]]) -> str:
    """Ask whether a new unit is added, merged into a candidate, or skipped."""
    lines = "\n".join(
        f"{node_line(short, node)}  (found by {source}, similarity {sim:.2f})"
        for short, node, source, sim in candidates
    ) or "(no candidates)"
    return f"""A new memory unit arrived. Decide how it enters the memory graph.

- "add": store it as a new node.
- "modify": merge it into ONE existing candidate ("target"), only if it is the same
  entity, event or fact, it adds detail or a small correction, it brings no new state,
  no change over time and no contradiction, and merging loses nothing.
- "skip": a candidate already says all of it ("target" = that candidate).
If you are not sure, choose "add": a wrong merge destroys information.

Optionally refine the node's "description" and "keywords". List in "related" the
candidates that have a real semantic or logical link to the final node (edges are
decided later). Candidates were found by similarity, by recency (time), or both.

NEW UNIT:
{unit_text}

CANDIDATES:
{lines}

Reply with JSON matching this schema:
{schema_text(NODE_SCHEMA)}"""


EDGE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["edges"],
    "additionalProperties": False,
    "properties": {
        "edges": {
            "type": "array",
            "maxItems": 20,
            "items": {
                "type": "object",
                "required": ["candidate", "operation", "predicate", "direction", "weight"],
                "additionalProperties": False,
                "properties": {
                    "candidate": {"type": "integer", "minimum": 1},
                    "operation": {"enum": ["add", "modify", "delete", "no_change"]},
                    "predicate": {"type": "string", "minLength": 1},
                    "direction": {"enum": ["from_target", "to_target"]},
                    "description": {"type": "string", "maxLength": 400},
                    "weight": {"type": "number", "minimum": 0, "maximum": 1},
                },
            },
        },
    },
}


def edge_schema(shown: int, existing: bool = True) -> dict[str, Any]:
    """`EDGE_SCHEMA` narrowed to the ``shown`` candidate ids and REALM's predicate names.

    See `node_schema`: under a constrained decoder neither an unknown candidate
    nor an invented predicate can be produced. Without ``existing`` edges in
    the prompt, only ``add`` and ``no_change`` are offered: on LoCoMo SmolLM2
    answered "modify" for edges that did not exist, and every such reply was
    rejected whole.
    """
    schema: dict[str, Any] = json.loads(json.dumps(EDGE_SCHEMA))
    item = schema["properties"]["edges"]["items"]["properties"]
    item["predicate"] = {"enum": sorted(set(SHORT_BY_PREDICATE.values()))}
    if not existing:
        item["operation"] = {"enum": ["add", "no_change"]}
    if shown:
        item["candidate"] = {"enum": list(range(1, shown + 1))}
    else:
        schema["properties"]["edges"] = {"const": []}
    return schema


def edge_decision_prompt(
    target: Node, candidates: Sequence[tuple[int, Node]], existing: Sequence[tuple[int, Edge, str]]
) -> str:
    """Ask for the edge operations between a node and its related candidates."""
    cand = "\n".join(node_line(s, n) for s, n in candidates) or "(none)"
    edges = "\n".join(
        f"- with [{s}]: {SHORT_BY_PREDICATE.get(e.predicate, e.predicate)} {direction}, "
        f"weight {e.weight:.2f}: {e.description}"
        for s, e, direction in existing
    ) or "(none)"
    return f"""Link a memory node to related nodes of the memory graph.

For each candidate choose an operation: "add" a new edge, "modify" an existing edge
(give its full new form), "delete" an edge that is clearly wrong, or "no_change".
Add an edge only when the relation is clear. "direction" says whether the edge goes
from the target node to the candidate ("from_target") or the other way ("to_target");
symmetric predicates get their reverse automatically. "weight" in [0, 1] is how sure
the relation is (0.9+ explicit, 0.7 clear, 0.5 implied, 0.3 weak). "description" says
in a few words how the two are related.

Predicates (layer/name: meaning):
{predicate_table()}

TARGET NODE:
{node_line(0, target)}

CANDIDATES:
{cand}

EXISTING EDGES BETWEEN THE TARGET AND THE CANDIDATES:
{edges}

Reply with JSON matching this schema:
{schema_text(EDGE_SCHEMA)}"""

