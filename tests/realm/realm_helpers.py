"""Shared helpers for the REALM tests: memory store, hashing embedder, scripted LLM.

A plain module (not a conftest) with a unique name, imported by the test files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from labile._memory import Memory
from labile._model import Node, NodeFilter, Observation
from labile_llm import ScriptedLLM

T0 = datetime(2024, 3, 4, 10, 0, tzinfo=UTC)  # a Monday

#: Regexes that tell the REALM prompts apart (for ScriptedLLM rules).
EXTRACT = r"Turn the NEW TURN below into memory units"
NODE = r"A new memory unit arrived"
EDGE = r"Link a memory node to related nodes"
SEED = r"Plan where to start searching"
SUFFICIENCY = r"You control a search over a memory graph"
EXPANSION = r"Choose how to explore the memory graph"
TOPOLOGY = r"Audit a piece of a memory graph"


def open_memory(preset: str = "realm", *, llm: ScriptedLLM | None = None, **table: Any) -> Memory:
    """A pipeline from ``preset`` on the memory store and the hashing embedder."""
    config: dict[str, Any] = {
        "preset": preset, "store": {"type": "memory"}, "embedder": {"type": "hashing"}, **table,
    }
    if llm is not None:
        config.setdefault("llm", {"type": "scripted"})
        return Memory.open(config, llm=llm)
    return Memory.open(config)


def session(
    number: int, turns: Sequence[tuple[str, str]], *, start: datetime | None = None,
    captions: dict[int, str] | None = None,
) -> list[Observation]:
    """Observations of one session: ids ``D<number>:<i>``, one minute apart."""
    begin = start or T0 + timedelta(days=7 * (number - 1))
    return [
        Observation(id=f"D{number}:{i + 1}", text=text, speaker=speaker,
                    timestamp=begin + timedelta(minutes=i), session=str(number),
                    metadata={"caption": captions[i + 1]} if captions and i + 1 in captions else {})
        for i, (speaker, text) in enumerate(turns)
    ]


CHAT_1 = [
    ("Caroline", "Hey Mel! Good to see you!"),
    ("Melanie", "Hey Caroline! What did you do yesterday?"),
    ("Caroline", "I went to an LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's great! I love painting with my kids at the lake."),
    ("Caroline", "Thanks!"),
    ("Melanie", "What are you researching these days?"),
    ("Caroline", "Adoption agencies."),
]
CHAT_2 = [
    ("Melanie", "I ran a charity race for mental health last Saturday."),
    ("Caroline", "That sounds great! I work as a counselor at Riverside Clinic now."),
    ("Melanie", "My favorite book is Charlotte's Web."),
]
CHAT_3 = [
    ("Caroline", "Big news: I work as a teacher at Lincoln School now."),
    ("Melanie", "My favorite book is Becoming Nicole these days."),
    ("Melanie", "We went camping two weeks ago and painted the lake at sunrise."),
]


def reply(value: Any) -> str:
    """A scripted reply holding ``value`` as JSON."""
    return json.dumps(value)


def turn_events(mem: Memory, namespace: str = "u") -> dict[str, Node]:
    """The turn-level REALM events of ``namespace`` (clauses left out), by their turn id."""
    events = mem.store.iter_nodes(namespace, NodeFilter(kinds={"realm.event"}))
    return {n.sources[0]: n for n in events if not n.attrs.get("clause_of")}
