"""What a session's episode node says, computed from its turns alone.

Construction (`labile_realm.construct.extractor`) and forgetting
(`labile_realm.forget`) both describe an episode with these functions, from
what the store holds: the turns it summarises (its ``sources``), each turn's
terms (kept per turn in the episode's ``turn_terms`` attribute) and the
turns' events. Nothing here reads a process's memory of what it wrote, so the
description is the same whichever process added which turn, and a forget can
rebuild it from the turns that remain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from labile.plugin import Node
from labile_realm.construct.extract_offline import date_phrase
from labile_realm.construct.relations import Highlight, highlight_text

__all__ = ["TOPICS", "describe_episode", "event_terms", "session_topics"]

#: How many topics an episode's description names.
TOPICS = 8


def session_topics(turns: Iterable[str], turn_terms: Mapping[str, Sequence[str]]) -> list[str]:
    """The most frequent terms over ``turns`` (in conversation order; ties go to the
    term said first), at most `TOPICS`."""
    counts: Counter[str] = Counter()
    for turn in turns:
        counts.update(turn_terms.get(turn, ()))
    return [t for t, _ in counts.most_common(TOPICS)]


def event_terms(event: Node) -> list[str]:
    """A turn's terms read back from its event (for episodes stored without
    ``turn_terms``): its keywords, less the resolved time phrase ("last week: …")."""
    return [k.casefold() for k in event.keywords if ": " not in k]


def describe_episode(key: str, speakers: Iterable[str], start: datetime, topics: Sequence[str],
                     highlights: Sequence[Highlight]) -> str:
    """The episode's description: who, when, its topics and its highlights."""
    who = " and ".join(sorted(speakers)) or "the speakers"
    return (f"Conversation session {key} between {who} on {date_phrase(start)}; "
            f"topics: {', '.join(topics)}" + highlight_text(highlights))
