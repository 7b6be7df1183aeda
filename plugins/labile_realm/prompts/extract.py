"""REALM's construction prompt: the units of new turns and the running summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from labile_realm.prompts.common import KINDS, SHORT, SHORTS, STRING, TIME_PATTERN, schema_text

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
                    "type": {"enum": KINDS},
                    "name": {"type": "string", "minLength": 1, "maxLength": 120},
                    "description": {"type": "string", "minLength": 1, "maxLength": 1200},
                    "aliases": SHORTS,
                    "category": SHORT,
                    "role": SHORT,
                    "participants": SHORTS,
                    "statement": STRING,
                    "keywords": {"type": "array", "items": SHORT, "maxItems": 3},
                    # a pattern, so a grammar-constrained model cannot write "][" (SmolLM2 did)
                    "time": {"type": "string", "maxLength": 40, "pattern": TIME_PATTERN},
                },
            },
        },
        "summary": {"type": "string", "maxLength": 2400},
    },
}


#: Longest description or statement of a unit in a batch reply, in characters.
BATCH_TEXT_CHARS: Final = 300

#: The unit types and their fields, shared by the one-turn and the batch prompt.
_UNIT_TYPES: Final = """Unit types:
- entity: something that can be referred to (person, place, organisation, object, title,
  concept). Fields: name, aliases (other names, never pronouns), category, role (why it
  matters here), description.
- event: one thing that happened or was said at a particular time. Fields: name,
  participants (entity names), description (self-contained: who did what, with whom,
  and, for a reply, what it answers), time.
- episode: an experience spanning a stretch of time, with its cause and outcome. Fields:
  name, description, keywords (at most 3), time.
- fact: a lasting statement about someone or something (a preference, identity,
  possession, relationship, rule). Fields: name, statement, keywords (at most 3), description."""


def extraction_prompt(
    summary: str, recent: Sequence[str], speaker: str | None, when: datetime, text: str,
    max_summary_words: int = 200,
) -> str:
    """Ask for the memory units of one new turn and the updated running summary."""
    context = "\n".join(recent) or "(nothing yet)"
    return f"""Turn the NEW TURN below into memory units, and update the running summary.

Use the context only to understand the new turn (who "she" is, which question a short
reply answers); do not store the context again, it is already in memory.

{_UNIT_TYPES}

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
{schema_text(EXTRACT_SCHEMA)}"""


def extraction_batch_schema(turns: int) -> dict[str, Any]:
    """`EXTRACT_SCHEMA` for a batch of ``turns`` turns: every unit names its turn first.

    ``turn`` is limited to the numbers shown (1..turns) and comes first, so a
    grammar-constrained model commits to a turn before it writes the unit and
    cannot name a turn that was not shown. At least one unit, at most 3 per turn and 12 in
    all, descriptions and statements of at most `BATCH_TEXT_CHARS`: a reply
    for several turns must still fit a small model's token budget.
    """
    schema: dict[str, Any] = json.loads(json.dumps(EXTRACT_SCHEMA))
    units = schema["properties"]["units"]
    # at least one unit: small talk never reaches a batch, and greedy SmolLM2 closed the
    # list at once ("units": []) on a batch of three informative turns, losing all three
    units["minItems"] = 1
    units["maxItems"] = min(12, 3 * turns)
    item = units["items"]
    # shorter descriptions than one turn's: SmolLM2's 4-turn replies ran past 512 tokens
    for field in ("description", "statement"):
        item["properties"][field] = {**item["properties"][field], "maxLength": BATCH_TEXT_CHARS}
    item["required"] = ["turn", *item["required"]]
    item["properties"] = {"turn": {"enum": list(range(1, turns + 1))}, **item["properties"]}
    return schema


def extraction_batch_prompt(
    summary: str, recent: Sequence[str], turns: Sequence[tuple[str | None, datetime, str]],
    max_summary_words: int = 200,
) -> str:
    """Ask for the memory units of several new turns of one session, and the summary.

    ``turns`` are ``(speaker, when, text)`` in order; the prompt numbers them
    from 1 and every unit of the reply names the turn it comes from.
    """
    context = "\n".join(recent) or "(nothing yet)"
    new = "\n".join(f"[{n}] ({when.date().isoformat()}) {speaker or 'someone'}: {text}"
                    for n, (speaker, when, text) in enumerate(turns, start=1))
    return f"""Turn each of the NEW TURNS below into memory units, and update the running summary.

Use the context only to understand the new turns (who "she" is, which question a short
reply answers); do not store the context again, it is already in memory.

{_UNIT_TYPES}

Rules:
- Give every unit the number of the turn it comes from ("turn"). A turn may give
  several units or none.
- Use as few units as cover everything new; one meaning per unit; every unit must be
  understandable without the others (write full names, not pronouns).
- Small talk (greetings, thanks, compliments) yields no unit.
- time is "none", a date "YYYY-MM-DD", or a range "YYYY-MM-DD to YYYY-MM-DD". Resolve
  relative expressions ("yesterday", "last week") against the date of the unit's turn.
- summary: the conversation so far, at most {max_summary_words} words, plain sentences
  about topics and open threads, no pronouns without a name.

RUNNING SUMMARY:
{summary or "(empty)"}

RECENT CONTEXT (oldest first):
{context}

NEW TURNS:
{new}

Reply with JSON matching this schema:
{schema_text(extraction_batch_schema(len(turns)))}"""
