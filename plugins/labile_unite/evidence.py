"""REALM's evidence nodes seen as All-Mem units.

The united pipeline consolidates REALM's ``realm.event`` nodes: each holds
one turn's text (its evidence), the speaker, the session and when it was
said. All-Mem's offline diagnosis reads exactly that (text, caption,
speaker, session, time, an embedding; `labile_allmem.consolidate.relate`),
but it orders units by ``time_start`` and a write sequence, while a REALM
event's ``time_start`` is the time it *talks about* ("last year"), not when
it was said. `evidence_view` therefore gives the diagnoser a copy of the node
whose ``time_start`` is the moment it was said (``said_at``) and whose
``seq`` is its position in the namespace's observation log; ids, text and
embedding are the node's own, so proposals name real REALM nodes.

The consolidation buffer is every visible event without the
``consolidated`` attr: REALM writes events without it, and a diagnosis run
sets it (`mark_consolidated`). An event that REALM rewrites loses the flag
and is simply diagnosed again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Final

import attrs

from labile.plugin import Node, NodeFilter, Store
from labile_realm.schema import EVENT

__all__ = [
    "CONSOLIDATED",
    "EVIDENCE_KINDS",
    "VISIBLE_EVIDENCE",
    "buffered",
    "evidence_view",
    "mark_consolidated",
    "observation_order",
    "said_at",
]

#: Node kinds the united consolidator treats as evidence units.
EVIDENCE_KINDS: Final = frozenset({EVENT})
#: The attr a diagnosed event carries.
CONSOLIDATED: Final = "consolidated"
VISIBLE_EVIDENCE: Final = NodeFilter(kinds=EVIDENCE_KINDS, visible=True)
_PHOTO: Final = re.compile(r"\s*\[photo: (.*)\]\s*$", re.DOTALL)


def said_at(node: Node) -> datetime | None:
    """When the node's evidence was said (REALM's ``said_at``), else its ``time_start``."""
    raw = node.attrs.get("said_at")
    if isinstance(raw, str):
        try:
            return datetime.fromisoformat(raw)
        except ValueError:
            pass
    return node.time_start


def observation_order(store: Store, namespace: str) -> dict[str, int]:
    """Observation id -> its position in the namespace's log (write order)."""
    return {obs.id: i for i, obs in enumerate(store.iter_observations(namespace))}


def evidence_view(node: Node, order: Mapping[str, int]) -> Node:
    """The copy of ``node`` the All-Mem diagnoser reads (see the module doc).

    Args:
        node: A REALM evidence node.
        order: `observation_order` of its namespace.
    """
    seq = min((order[s] for s in node.sources if s in order), default=0)
    text, caption = node.content, node.attrs.get("caption")
    photo = _PHOTO.search(text)
    if photo is not None:  # REALM appends a shared photo's caption to the text
        text, caption = text[: photo.start()], photo.group(1)
    return attrs.evolve(node, content=text, time_start=said_at(node), time_end=None,
                        attrs={**node.attrs, "seq": seq, "caption": caption})


def buffered(nodes: Iterable[Node]) -> list[Node]:
    """The visible evidence nodes not yet diagnosed."""
    return [n for n in nodes if n.kind in EVIDENCE_KINDS and n.visible
            and not n.attrs.get(CONSOLIDATED)]


def mark_consolidated(store: Store, namespace: str, ids: Iterable[str]) -> None:
    """Set the ``consolidated`` flag on the (current versions of the) nodes ``ids``."""
    fresh = store.get_nodes(namespace, sorted(set(ids)))
    store.upsert_nodes(namespace, [attrs.evolve(n, attrs={**n.attrs, CONSOLIDATED: True})
                                   for n in fresh if not n.attrs.get(CONSOLIDATED)])
