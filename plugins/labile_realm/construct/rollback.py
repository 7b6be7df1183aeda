"""What `labile_realm.construct.extractor.RealmExtractor` restores when a batch rolls back.

Construction keeps per-namespace state in memory between ``add`` calls (the
conversation state, the last event of each session, the last episode, the
``correlates`` degree tally). An ``ingest`` changes it as it goes; if the
store then rolls the batch back, that state would point at nodes that no
longer exist. A `Snapshot` taken when ``ingest`` starts puts it back, so the
next ``add`` behaves exactly as if the failed one had never run.
"""

from __future__ import annotations

import copy
from typing import TypeVar

import attrs

from labile.plugin import Node
from labile_realm.construct.units import ConversationState

V = TypeVar("V")


@attrs.frozen
class Snapshot:
    """One namespace's in-memory construction state at the start of an ``ingest``.

    ``None`` means "absent": restoring it drops the entry, which the extractor
    then rebuilds from the store on first use.
    """

    state: ConversationState | None = None
    last_event: dict[tuple[str, str], Node] = attrs.field(factory=dict)
    last_episode: str | None = None
    degree: dict[str, int] | None = None

    @classmethod
    def take(cls, namespace: str, states: dict[str, ConversationState],
             last_event: dict[tuple[str, str], Node], last_episode: dict[str, str],
             degree: dict[str, dict[str, int]]) -> Snapshot:
        """Copy ``namespace``'s entries of the extractor's four maps."""
        tally = degree.get(namespace)
        return cls(copy.deepcopy(states.get(namespace)),
                   {k: v for k, v in last_event.items() if k[0] == namespace},
                   last_episode.get(namespace), dict(tally) if tally is not None else None)

    def restore(self, namespace: str, states: dict[str, ConversationState],
                last_event: dict[tuple[str, str], Node], last_episode: dict[str, str],
                degree: dict[str, dict[str, int]]) -> None:
        """Put ``namespace``'s entries of the four maps back as they were when taken."""
        for key in [k for k in last_event if k[0] == namespace]:
            del last_event[key]
        last_event.update(self.last_event)
        _put(states, namespace, self.state)
        _put(last_episode, namespace, self.last_episode)
        _put(degree, namespace, self.degree)


def _put(table: dict[str, V], key: str, value: V | None) -> None:
    """``table[key] = value``, or no entry at all for ``None``."""
    table.pop(key, None)
    if value is not None:
        table[key] = value
