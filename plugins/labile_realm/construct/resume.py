"""Picking a conversation up where the store left it: the links to what came just before.

`labile_realm.construct.extractor.RealmExtractor` links each turn's event to the
previous event of the same session (``precedes``) and each session's episode to
the previous session's. Within one process it remembers those as it writes;
a process that did not write them (a restart, or another process that wrote
the latest turns of a shared store) must read them back from the store, or its
first event of a session would start a new chain and the graph would depend on
which process wrote what. These functions do that reading, once per namespace
state load.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from labile.plugin import Node, Observation
from labile_realm.construct.extract_offline import session_key

__all__ = ["last_events", "last_session"]


def _event_session(node: Node) -> str | None:
    """The session key of a stored turn event, as `session_key` gives it for its turn."""
    session = node.attrs.get("session")
    if session:
        return str(session)
    said = str(node.attrs.get("said_at") or "")
    return said[:10] or None  # the ISO date of the time it was said


def last_events(events: Iterable[Node]) -> dict[str, Node]:
    """The latest turn event of each session among ``events`` (stored ones, in write order).

    Latest by the time it was said; of a turn's several events, the last one
    written, as the writer itself leaves it. Clause events (``clause_of``)
    never start or continue a chain, so they are left out.
    """
    out: dict[str, Node] = {}
    for node in events:
        if node.attrs.get("clause_of"):
            continue
        key = _event_session(node)
        if key is None:
            continue
        held = out.get(key)
        if held is None or _said(node) >= _said(held):
            out[key] = node
    return out


def _said(node: Node) -> datetime:
    try:
        return datetime.fromisoformat(str(node.attrs.get("said_at")))
    except ValueError:
        return node.created_at


def last_session(observations: Iterable[Observation]) -> str | None:
    """The session key of the latest of ``observations`` (the log, in order), if any."""
    latest: Observation | None = None
    for obs in observations:
        if latest is None or obs.timestamp >= latest.timestamp:
            latest = obs
    return None if latest is None else session_key(latest)
