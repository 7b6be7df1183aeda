"""Prompts and JSON schemas of the LLM-driven All-Mem decisions.

Four decisions can ask a model: descriptor compression (write path and split
siblings), diagnosis (proposing edits over a neighbourhood) and the three
repair planners (split, merge, update). Every prompt asks for one JSON object
and every reply is validated against the schema next to it by the LLM client
(`labile_llm.jsoncheck` subset); an invalid reply raises `LLMOutputError` and the
caller applies nothing from it. The wording is ours.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from labile.plugin import Node

SYSTEM: Final = (
    "You maintain the long-term memory of a conversational assistant. "
    "You answer with a single JSON object and nothing else."
)

# --------------------------------------------------------------------------- #
# Descriptor compression                                                       #
# --------------------------------------------------------------------------- #

DESCRIPTOR_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "minLength": 1, "maxLength": 600},
        "keywords": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 60},
            "minItems": 3,
            "maxItems": 5,
        },
    },
    "required": ["summary", "keywords"],
    "additionalProperties": False,
}


def descriptor_prompt(
    *,
    text: str,
    speaker: str | None,
    when: str | None,
    caption: str | None,
    previous: tuple[str | None, str] | None,
) -> str:
    """The prompt that turns one piece of evidence into a search descriptor.

    Args:
        text: The evidence (a turn, or a segment of one).
        speaker: Who said it.
        when: Its date, as text.
        caption: The caption of a photo shared with it.
        previous: ``(speaker, text)`` of the message it follows, for context.

    Returns:
        The prompt.
    """
    lines = [
        "Write a search descriptor for one message from a conversation. The descriptor is",
        "what a search engine will index for this message, so it must let someone find the",
        "message later with a question about its content.",
        "",
        "Rules:",
        "- summary: one or two plain sentences saying who said what; name the speaker;",
        "  keep names, places, dates, numbers and objects exactly as stated; add nothing",
        "  that the message (or its photo) does not say.",
        "- If the message only makes sense as an answer to the previous message (for",
        "  example 'Yes, last week!'), say briefly what it answers.",
        "- keywords: 3 to 5 short phrases a person might search for.",
        "",
        'Reply with JSON: {"summary": "...", "keywords": ["...", "...", "..."]}',
        "",
    ]
    if previous is not None:
        prev_speaker, prev_text = previous
        lines.append(f"Previous message ({prev_speaker or 'unknown'}): {prev_text}")
    lines.append(f"Speaker: {speaker or 'unknown'}")
    if when:
        lines.append(f"Date: {when}")
    if caption:
        lines.append(f"Shared photo: {caption}")
    lines.append(f"Message: {text}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- #
# Diagnosis                                                                    #
# --------------------------------------------------------------------------- #

DIAGNOSE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "proposals": {
            "type": "array",
            "maxItems": 20,
            "items": {
                "type": "object",
                "properties": {
                    "op": {"type": "string", "enum": ["split", "merge", "update"]},
                    "target": {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1},
                        "minItems": 1,
                        "maxItems": 12,
                    },
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "reason": {"type": "string"},
                },
                "required": ["op", "target", "confidence"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["proposals"],
    "additionalProperties": False,
}


def unit_block(alias: str, unit: Node) -> str:
    """One unit as the diagnosis and planning prompts show it."""
    speaker = unit.attrs.get("speaker") or "unknown"
    when = unit.attrs.get("date_text") or (
        unit.time_start.isoformat() if unit.time_start is not None else "unknown"
    )
    return (
        f"[{alias}] speaker: {speaker} | time: {when}\n"
        f"  summary: {unit.description}\n"
        f"  evidence: {json.dumps(unit.content, ensure_ascii=False)}"
    )


def diagnose_prompt(anchor_alias: str, blocks: Sequence[str]) -> str:
    """The prompt asking for edit proposals over one neighbourhood.

    Args:
        anchor_alias: The alias of the newly written unit the neighbourhood is built around.
        blocks: One `unit_block` per unit of the neighbourhood (the anchor included).

    Returns:
        The prompt.
    """
    return "\n".join(
        [
            "Below are memory units that a search engine considers close to each other.",
            f"Unit {anchor_alias} was written recently. Look for three kinds of damage:",
            "- split: ONE unit whose evidence mixes clearly unrelated topics that would be",
            "  easier to find apart. target = [that unit].",
            "- merge: two or more units that state the same facts (redundant copies).",
            "  target = [all of them]. Units that share a person or topic but say different",
            "  things are NOT redundant.",
            "- update: a newer unit that replaces an older one about the same subject and",
            "  attribute with a new value (the older statement is no longer true).",
            "  target = [newer unit, older unit], in that order. Complementary details are",
            "  NOT an update.",
            "Refer to units by their bracketed alias only. Give each proposal a confidence",
            "between 0 and 1; propose nothing when nothing is clearly wrong.",
            "",
            'Reply with JSON: {"proposals": [{"op": "merge", "target": ["U2", "U5"], '
            '"confidence": 0.93, "reason": "..."}]}',
            "",
            *blocks,
        ]
    )


# --------------------------------------------------------------------------- #
# Planning                                                                     #
# --------------------------------------------------------------------------- #

SPLIT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "segments": {"type": "array", "items": {"type": "string"}, "maxItems": 12},
        "reason": {"type": "string"},
    },
    "required": ["segments"],
    "additionalProperties": False,
}

DESCRIPTOR_PLAN_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "decline": {"type": "boolean"},
        "summary": {"type": "string", "maxLength": 800},
        "keywords": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
        "reason": {"type": "string"},
    },
    "required": ["summary", "keywords"],
    "additionalProperties": False,
}


def split_plan_prompt(block: str) -> str:
    """The prompt asking to cut one unit's evidence into topic segments."""
    return "\n".join(
        [
            "The memory unit below may mix several unrelated topics. Cut its evidence into",
            "segments, one per topic, so each can be found on its own.",
            "- Every segment must be copied EXACTLY from the evidence (same characters, same",
            "  order); cut only between sentences; do not rewrite, shorten or reorder.",
            "- If the evidence is about one topic, return fewer than two segments.",
            "",
            'Reply with JSON: {"segments": ["first exact passage", "second exact passage"]}',
            "",
            block,
        ]
    )


def merge_plan_prompt(blocks: Sequence[str]) -> str:
    """The prompt asking for one canonical descriptor of a redundant set."""
    return "\n".join(
        [
            "The memory units below were judged to say the same thing. They will be replaced",
            "on the search surface by one unit; their evidence is kept. Write the descriptor",
            "of that unit.",
            "- summary: what the units say, using only facts stated in them; name the speaker.",
            "- keywords: up to 5 short search phrases.",
            '- If they are in fact not redundant, reply {"decline": true, "summary": "", '
            '"keywords": []}.',
            "",
            'Reply with JSON: {"summary": "...", "keywords": ["..."]}',
            "",
            *blocks,
        ]
    )


def update_plan_prompt(current_block: str, old_block: str) -> str:
    """The prompt asking to refresh the descriptor of a current unit."""
    return "\n".join(
        [
            "The CURRENT unit below replaces the OLD unit: it gives a newer value of the same",
            "fact. The old unit will be hidden from search but kept as history. Write a fresh",
            "descriptor for the current unit.",
            "- Use only facts from the CURRENT unit; the old unit only tells you which details",
            "  are outdated and must not be presented as current.",
            "- summary: name the speaker; keywords: up to 5 short search phrases.",
            '- If the current unit does not really replace the old one, reply {"decline": '
            'true, "summary": "", "keywords": []}.',
            "",
            'Reply with JSON: {"summary": "...", "keywords": ["..."]}',
            "",
            "CURRENT:",
            current_block,
            "OLD:",
            old_block,
        ]
    )
