"""What every REALM prompt shares: the system message, schema building blocks, node lines."""

from __future__ import annotations

import json
from typing import Any, Final

from labile.plugin import Node
from labile_realm.schema import SHORT_BY_KIND

SYSTEM: Final = (
    "You are the memory-keeping component of a long-running assistant. You read "
    "conversation turns and memory records and answer with exactly one JSON value that "
    "fits the schema you are given: no prose before or after it, no comments, no extra keys."
)

STRING = {"type": "string"}
STRINGS = {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 12}
# Short fields of a unit: names, roles, keywords, times are a few words. Tight limits
# matter to grammar-constrained small models, which loop inside a string until its
# limit (SmolLM2 filled a name with a list of invented people up to the limit).
SHORT = {"type": "string", "maxLength": 80}
#: A date whose month is 01-12 and day 01-31 (SmolLM2 wrote "1497-16-22" under a looser one).
_DATE: Final = r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
#: A unit's time: "none", a date, or a date range (what `extract_llm.parse_time` reads).
TIME_PATTERN: Final = rf"^(none|{_DATE}( to {_DATE})?)$"
SHORTS = {"type": "array", "items": SHORT, "maxItems": 6}
IDS = {"type": "array", "items": {"type": "integer", "minimum": 1}, "maxItems": 50}
KINDS = ["entity", "event", "episode", "fact"]
LAYERS = ["logical", "causal", "taxonomic", "associative"]


def schema_text(schema: dict[str, Any]) -> str:
    """``schema`` as compact JSON, the form written at the end of a prompt."""
    return json.dumps(schema, separators=(",", ":"))


def node_line(short: int, node: Node, limit: int = 320) -> str:
    """One node as a prompt line: ``[3] event, 2023-05-08: <description>``."""
    kind = SHORT_BY_KIND.get(node.kind, node.kind)
    when = f", {node.time_start.date().isoformat()}" if node.time_start is not None else ""
    text = " ".join((node.description or node.content).split())
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + "…"
    return f"[{short}] {kind}{when}: {text}"



def shown_ids(shown: int, max_items: int) -> dict[str, Any]:
    """An id list limited to the ``shown`` ids 1..shown (``const []`` when none is shown)."""
    ids = list(range(1, shown + 1))
    return ({"type": "array", "items": {"enum": ids}, "maxItems": min(max_items, shown)}
            if ids else {"const": []})
