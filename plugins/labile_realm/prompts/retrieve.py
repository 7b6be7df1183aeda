"""REALM's retrieval prompts: seed planning, the sufficiency controller, expansion actions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from labile.plugin import Node
from labile_realm.prompts.common import (
    IDS,
    KINDS,
    LAYERS,
    SHORT,
    STRING,
    STRINGS,
    node_line,
    schema_text,
    shown_ids,
)
from labile_realm.schema import predicate_table


def seed_schema(max_plans: int) -> dict[str, Any]:
    """The seed-plan schema allowing at most ``max_plans`` plans."""
    return {
        "type": "object",
        "required": ["plans"],
        "additionalProperties": False,
        "properties": {
            "plans": {
                "type": "array",
                "minItems": 1,
                "maxItems": max_plans,
                "items": {
                    "type": "object",
                    "required": ["mode", "query", "keywords", "allowed_node_types"],
                    "additionalProperties": False,
                    "properties": {
                        "mode": {"enum": ["query_match", "keywords_match", "hybrid_match"]},
                        "query": STRING,
                        "keywords": STRINGS,
                        "allowed_node_types": {
                            "type": "array", "items": {"enum": KINDS}, "maxItems": 4,
                        },
                        "time_range": {
                            "anyOf": [
                                {"type": "null"},
                                {"type": "array", "items": STRING, "minItems": 2, "maxItems": 2},
                            ]
                        },
                    },
                },
            }
        },
    }


def seed_plan_prompt(question: str, asked_at: datetime, max_plans: int) -> str:
    """Ask for up to ``max_plans`` seed plans locating the question's anchor nodes."""
    return f"""Plan where to start searching a memory graph for the evidence of a question.

Think about the people, things, events, time and reasoning chain the question involves,
then write up to {max_plans} search plan(s). Each plan has:
- mode: "query_match" (semantic similarity of a rewritten query: good for paraphrases
  and vague topics), "keywords_match" (exact words: good for names, places, titles,
  numbers), or "hybrid_match" (both).
- query: the text to match semantically.
- keywords: the exact words or names to match.
- allowed_node_types: from entity, event, episode, fact.
- time_range: null, or ["YYYY-MM-DD", "YYYY-MM-DD"] when the question restricts time
  (relative to the date it is asked: {asked_at.date().isoformat()}).

QUESTION: {question}

Reply with JSON matching this schema:
{schema_text(seed_schema(max_plans))}"""


SUFFICIENCY_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["is_enough", "nodes_to_expand"],
    "additionalProperties": False,
    "properties": {
        "is_enough": {"type": "boolean"},
        "nodes_to_expand": {"type": "array", "items": {"type": "integer", "minimum": 1},
                            "maxItems": 5},
        "nodes_to_skip": IDS,
    },
}


def sufficiency_schema(shown: int) -> dict[str, Any]:
    """`SUFFICIENCY_SCHEMA` narrowed to the ``shown`` node ids, like `node_schema`.

    SmolLM2-135M named node 2 with one node shown; the whole reply was rejected
    and the round fell back to the offline controller.
    """
    schema: dict[str, Any] = json.loads(json.dumps(SUFFICIENCY_SCHEMA))
    schema["properties"]["nodes_to_expand"] = shown_ids(shown, 5)
    schema["properties"]["nodes_to_skip"] = shown_ids(shown, 50)
    return schema


def sufficiency_prompt(question: str, nodes: Sequence[tuple[int, Node, bool]]) -> str:
    """Ask whether the shown nodes answer the question, else which to expand."""
    lines = "\n".join(
        node_line(s, n) + ("  (already expanded)" if done else "") for s, n, done in nodes
    )
    return f"""You control a search over a memory graph.

Look at all the candidate nodes together. If one of them, or several combined, contain
what is needed to answer the question, reply "is_enough": true with empty lists. Not
every node has to be relevant.

Otherwise reply "is_enough": false and choose in "nodes_to_expand" at most 5 nodes whose
graph neighbourhood most likely holds the missing evidence: nodes on the question's
topic, holding part of the answer, or bridging towards it. Do not pick a node only to
confirm what it already says.

QUESTION: {question}

CANDIDATE NODES:
{lines}

Reply with JSON matching this schema:
{schema_text(SUFFICIENCY_SCHEMA)}"""


EXPANSION_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["actions"],
    "additionalProperties": False,
    "properties": {
        "actions": {
            "type": "array",
            "maxItems": 5,
            "items": {
                "type": "object",
                "required": ["seed_id", "expansion_mode", "layer_predicate_include",
                             "score_threshold", "conflict_inhibit", "reasoning"],
                "additionalProperties": False,
                "properties": {
                    "seed_id": {"type": "integer", "minimum": 1},
                    "expansion_mode": {"enum": ["subgraph_beam", "path_search"]},
                    "layer_predicate_include": {
                        "type": "array",
                        "maxItems": 8,
                        "items": {
                            "type": "object",
                            "required": ["layer"],
                            "additionalProperties": False,
                            "properties": {
                                "layer": {"enum": LAYERS},
                                "predicate": SHORT,
                                "direction": {"enum": ["forward", "backward", "both"]},
                            },
                        },
                    },
                    "score_threshold": {"type": "number", "minimum": 0, "maximum": 1},
                    "subgraph_max_nodes": {"type": "integer", "minimum": 1, "maximum": 20},
                    "path_max_depth": {"type": "integer", "minimum": 1, "maximum": 5},
                    "path_top_k": {"type": "integer", "minimum": 1, "maximum": 5},
                    "temporal_decay": {
                        "anyOf": [
                            {"type": "null"},
                            {
                                "type": "object",
                                "required": ["time", "delta_t", "mode", "missing_time_mode"],
                                "additionalProperties": False,
                                "properties": {
                                    "time": {"anyOf": [
                                        STRING,
                                        {"type": "array", "items": STRING, "minItems": 2,
                                         "maxItems": 2},
                                    ]},
                                    "delta_t": {
                                        "type": "object",
                                        "required": ["value", "unit"],
                                        "additionalProperties": False,
                                        "properties": {
                                            "value": {"type": "number", "minimum": 0},
                                            "unit": {"enum": ["hours", "days", "weeks",
                                                              "months", "years"]},
                                        },
                                    },
                                    "mode": {"enum": ["hard", "soft"]},
                                    "missing_time_mode": {"enum": ["keep", "drop"]},
                                },
                            },
                        ]
                    },
                    "conflict_inhibit": {"type": "boolean"},
                    # short: SmolLM2 ran an expansion plan to 512 tokens inside it
                    "reasoning": {"type": "string", "maxLength": 200},
                },
            },
        }
    },
}


def expansion_schema(shown: int) -> dict[str, Any]:
    """`EXPANSION_SCHEMA` with ``seed_id`` limited to the ``shown`` node ids."""
    schema: dict[str, Any] = json.loads(json.dumps(EXPANSION_SCHEMA))
    item = schema["properties"]["actions"]["items"]["properties"]
    item["seed_id"] = {"enum": list(range(1, shown + 1)) or [1]}
    return schema


def expansion_prompt(question: str, frontier: Sequence[tuple[int, Node]]) -> str:
    """Ask for one expansion action per frontier node."""
    lines = "\n".join(node_line(s, n) for s, n in frontier)
    return f"""Choose how to explore the memory graph around each selected node.

For every node below give one action:
- seed_id: the node's number.
- expansion_mode: "subgraph_beam" gathers a compact set of the best neighbours (broad
  supporting evidence, context, constraints); "path_search" follows chains of edges
  (causal or logical steps, one line of explanation); dropped paths are not revisited.
- layer_predicate_include: which edges to follow, as {{"layer", "predicate",
  "direction"}}; an empty predicate means the whole layer; direction is "forward"
  (from this node), "backward" (into it) or "both". An empty list follows every edge.
- score_threshold: candidates scoring below it (0..1) are dropped.
- subgraph_max_nodes (beam) / path_max_depth and path_top_k (paths): budgets.
- temporal_decay: null, or a window {{"time": "YYYY[-MM[-DD]]" or [start, end],
  "delta_t": {{"value", "unit"}}, "mode": "hard" (drop outside) or "soft" (penalise),
  "missing_time_mode": "keep" or "drop"}}; only when the question fixes a time.
- conflict_inhibit: true to never follow "contradicts" edges.
- reasoning: what this exploration is looking for (edges are scored against it).

Predicates (layer/name: meaning):
{predicate_table()}

QUESTION: {question}

SELECTED NODES:
{lines}

Reply with JSON matching this schema:
{schema_text(EXPANSION_SCHEMA)}"""

