"""Every LLM prompt of the REALM bundle, with the JSON schema its reply must satisfy.

The prompts are written for this project (none is copied from the paper).
Each asks for one strict JSON value; schemas use the subset that
`labile_llm.jsoncheck` validates. Nodes and edges are shown under short integer
ids (see `labile_realm.ids.IdMap`); a reply that names any other id is
rejected by the caller.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from labile.plugin import Edge, Node
from labile_realm.schema import SHORT_BY_KIND, SHORT_BY_PREDICATE, predicate_table

SYSTEM: Final = (
    "You are the memory-keeping component of a long-running assistant. You read "
    "conversation turns and memory records and answer with exactly one JSON value that "
    "fits the schema you are given: no prose before or after it, no comments, no extra keys."
)

_STR = {"type": "string"}
_STRS = {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 12}
# Short fields of a unit: names, roles, keywords, times are a few words. Tight limits
# matter to grammar-constrained small models, which loop inside a string until its
# limit (SmolLM2 filled a name with a list of invented people up to the limit).
_SHORT = {"type": "string", "maxLength": 80}
#: A unit's time: "none", a date, or a date range (what `extract_llm.parse_time` reads).
TIME_PATTERN: Final = r"^(none|[0-9]{4}-[0-9]{2}-[0-9]{2}( to [0-9]{4}-[0-9]{2}-[0-9]{2})?)$"
_SHORTS = {"type": "array", "items": _SHORT, "maxItems": 6}
_IDS = {"type": "array", "items": {"type": "integer", "minimum": 1}, "maxItems": 50}
_KINDS = ["entity", "event", "episode", "fact"]
_LAYERS = ["logical", "causal", "taxonomic", "associative"]


def _schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, separators=(",", ":"))


def node_line(short: int, node: Node, limit: int = 320) -> str:
    """One node as a prompt line: ``[3] event, 2023-05-08: <description>``."""
    kind = SHORT_BY_KIND.get(node.kind, node.kind)
    when = f", {node.time_start.date().isoformat()}" if node.time_start is not None else ""
    text = " ".join((node.description or node.content).split())
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + "…"
    return f"[{short}] {kind}{when}: {text}"


# --------------------------------------------------------------------------- #
# Construction: unit extraction and running summary                            #
# --------------------------------------------------------------------------- #

#: Units come before the summary: a grammar-constrained model writes properties in this
#: order, and a reply cut at its token budget loses everything, so the part that matters
#: most (and is most often short) comes first.
EXTRACT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["units", "summary"],
    "additionalProperties": False,
    "properties": {
        "units": {
            "type": "array",
            "maxItems": 8,
            "items": {
                "type": "object",
                "required": ["type", "name", "description"],
                "additionalProperties": False,
                "properties": {
                    "type": {"enum": _KINDS},
                    "name": {"type": "string", "minLength": 1, "maxLength": 120},
                    "description": {"type": "string", "minLength": 1, "maxLength": 1200},
                    "aliases": _SHORTS,
                    "category": _SHORT,
                    "role": _SHORT,
                    "participants": _SHORTS,
                    "statement": _STR,
                    "keywords": {"type": "array", "items": _SHORT, "maxItems": 3},
                    # a pattern, so a grammar-constrained model cannot write "][" (SmolLM2 did)
                    "time": {"type": "string", "maxLength": 40, "pattern": TIME_PATTERN},
                },
            },
        },
        "summary": {"type": "string", "maxLength": 2400},
    },
}


def extraction_prompt(
    summary: str, recent: Sequence[str], speaker: str | None, when: datetime, text: str,
    max_summary_words: int = 200,
) -> str:
    """Ask for the memory units of one new turn and the updated running summary."""
    context = "\n".join(recent) or "(nothing yet)"
    return f"""Turn the NEW TURN below into memory units, and update the running summary.

Use the context only to understand the new turn (who "she" is, which question a short
reply answers); do not store the context again, it is already in memory.

Unit types:
- entity: something that can be referred to (person, place, organisation, object, title,
  concept). Fields: name, aliases (other names, never pronouns), category, role (why it
  matters here), description.
- event: one thing that happened or was said at a particular time. Fields: name,
  participants (entity names), description (self-contained: who did what, with whom,
  and, for a reply, what it answers), time.
- episode: an experience spanning a stretch of time, with its cause and outcome. Fields:
  name, description, keywords (at most 3), time.
- fact: a lasting statement about someone or something (a preference, identity,
  possession, relationship, rule). Fields: name, statement, keywords (at most 3), description.

Rules:
- Use as few units as cover everything new; one meaning per unit; every unit must be
  understandable without the others (write full names, not pronouns).
- Small talk (greetings, thanks, compliments) yields no unit.
- time is "none", a date "YYYY-MM-DD", or a range "YYYY-MM-DD to YYYY-MM-DD". Resolve
  relative expressions ("yesterday", "last week") against the turn's date.
- summary: the conversation so far, at most {max_summary_words} words, plain sentences
  about topics and open threads, no pronouns without a name.

RUNNING SUMMARY:
{summary or "(empty)"}

RECENT CONTEXT (oldest first):
{context}

NEW TURN ({when.date().isoformat()}) {speaker or "someone"}: {text}

Reply with JSON matching this schema:
{_schema_text(EXTRACT_SCHEMA)}"""


# --------------------------------------------------------------------------- #
# Construction: node operation and edge decisions                              #
# --------------------------------------------------------------------------- #

NODE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["operation", "related"],
    "additionalProperties": False,
    "properties": {
        "operation": {"enum": ["add", "modify", "skip"]},
        "target": {"type": ["integer", "null"], "minimum": 1},
        "description": {"type": "string", "maxLength": 1200},
        # short keywords and reason: SmolLM2 ran a node decision to 512 tokens
        "keywords": {"type": "array", "items": _SHORT, "maxItems": 8},
        "related": _IDS,
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
{_schema_text(NODE_SCHEMA)}"""


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
{_schema_text(EDGE_SCHEMA)}"""


# --------------------------------------------------------------------------- #
# Retrieval: seed planning, sufficiency, expansion                             #
# --------------------------------------------------------------------------- #


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
                        "query": _STR,
                        "keywords": _STRS,
                        "allowed_node_types": {
                            "type": "array", "items": {"enum": _KINDS}, "maxItems": 4,
                        },
                        "time_range": {
                            "anyOf": [
                                {"type": "null"},
                                {"type": "array", "items": _STR, "minItems": 2, "maxItems": 2},
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
{_schema_text(seed_schema(max_plans))}"""


SUFFICIENCY_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["is_enough", "nodes_to_expand"],
    "additionalProperties": False,
    "properties": {
        "is_enough": {"type": "boolean"},
        "nodes_to_expand": {"type": "array", "items": {"type": "integer", "minimum": 1},
                            "maxItems": 5},
        "nodes_to_skip": _IDS,
    },
}


def _shown_ids(shown: int, max_items: int) -> dict[str, Any]:
    """An id list limited to the ``shown`` ids 1..shown (``const []`` when none is shown)."""
    ids = list(range(1, shown + 1))
    return ({"type": "array", "items": {"enum": ids}, "maxItems": min(max_items, shown)}
            if ids else {"const": []})


def sufficiency_schema(shown: int) -> dict[str, Any]:
    """`SUFFICIENCY_SCHEMA` narrowed to the ``shown`` node ids, like `node_schema`.

    SmolLM2-135M named node 2 with one node shown; the whole reply was rejected
    and the round fell back to the offline controller.
    """
    schema: dict[str, Any] = json.loads(json.dumps(SUFFICIENCY_SCHEMA))
    schema["properties"]["nodes_to_expand"] = _shown_ids(shown, 5)
    schema["properties"]["nodes_to_skip"] = _shown_ids(shown, 50)
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
{_schema_text(SUFFICIENCY_SCHEMA)}"""


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
                                "layer": {"enum": _LAYERS},
                                "predicate": _SHORT,
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
                                        _STR,
                                        {"type": "array", "items": _STR, "minItems": 2,
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
{_schema_text(EXPANSION_SCHEMA)}"""


# --------------------------------------------------------------------------- #
# Reconsolidation                                                              #
# --------------------------------------------------------------------------- #

TOPOLOGY_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["topic", "gold_supporting_node_ids", "supporting_associated_node_ids",
                 "misleading_node_ids", "unrelated_node_ids", "operations"],
    "additionalProperties": False,
    "properties": {
        "topic": {"type": "string", "maxLength": 600},
        "gold_supporting_node_ids": _IDS,
        "supporting_associated_node_ids": _IDS,
        "misleading_node_ids": _IDS,
        "unrelated_node_ids": _IDS,
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
                    "predicate": _STR,
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
{_schema_text(TOPOLOGY_SCHEMA)}"""
