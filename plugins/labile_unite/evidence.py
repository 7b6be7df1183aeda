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

The consolidation buffer is every visible event that no run has diagnosed
yet. Which events a run diagnosed is kept in that run's record, a
``unite.run`` node (invisible, no embedding, no text, the ids in its
attrs), never by rewriting REALM's nodes just to flag them. Events created
by a run (split parts, merged events) are recorded as diagnosed by it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Final

import attrs

from labile.plugin import Node, NodeFilter, NodeKind, Store
from labile_realm.schema import EVENT

__all__ = [
    "EVIDENCE_KINDS",
    "RUN",
    "RUN_FILTER",
    "RUN_KIND",
    "VISIBLE_EVIDENCE",
    "buffered",
    "diagnosed_ids",
    "evidence_view",
    "observation_order",
    "record_run",
    "said_at",
]

#: Node kinds the united consolidator treats as evidence units.
EVIDENCE_KINDS: Final = frozenset({EVENT})
#: The node kind of a consolidation run's record.
RUN: Final = "unite.run"
RUN_KIND: Final = NodeKind(name=RUN, fields=("seq", "diagnosed", "counts"),
                           summary="one united consolidation run: the events it diagnosed")
RUN_FILTER: Final = NodeFilter(kinds=frozenset({RUN}))
#: The attr an event made by consolidation carries (``split`` / ``merge``).
ORIGIN: Final = "origin"
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


def diagnosed_ids(store: Store, namespace: str) -> set[str]:
    """The ids every earlier run diagnosed or created (from the run records)."""
    out: set[str] = set()
    for record in store.iter_nodes(namespace, RUN_FILTER):
        out.update(str(i) for i in record.attrs.get("diagnosed", ()))
    return out


def buffered(nodes: Iterable[Node], done: set[str]) -> list[Node]:
    """The visible evidence nodes among ``nodes`` that are not in ``done``."""
    return [n for n in nodes if n.kind in EVIDENCE_KINDS and n.visible and n.id not in done]


def record_run(store: Store, namespace: str, ids: Iterable[str], counts: Mapping[str, int],
               now: datetime) -> None:
    """Append a run record holding the ids this run diagnosed or created, and its counts."""
    seq = 1 + store.count_nodes(namespace, RUN_FILTER)
    store.upsert_nodes(namespace, [Node(
        id=f"{RUN}:{seq:06d}", kind=RUN, content="",
        visible=False, created_at=now, updated_at=now, time_start=now,
        attrs={"seq": seq, "diagnosed": sorted(set(ids)), "counts": dict(counts)},
    )])
