"""Use: when a memory last served an answer, read from reconsolidation's edit log.

Every strengthen (or added edge) that REALM's reconsolidation writes is
logged in the edge's ``attrs["history"]`` with its time (``at``) and
``decision`` (`labile_realm.reconsolidate`): the edge helped retrieval reach
evidence that was used. A memory counts as *used* at the latest such entry on
an edge that touches it, unless it was blamed as often as it was credited
(``weaken`` entries: retrieval reached it and it misled). No write happens on
the read path: a pipeline without reconsolidation has no record of use, so
its memories all count as never used (``docs/retention.md``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final

from labile.plugin import Edge

#: Edit-log decisions that credit the two ends of the edge, and the one that blames them.
CREDIT: Final = frozenset({"add", "strengthen"})
BLAME: Final = "weaken"
HISTORY_KEY: Final = "history"


def _when(entry: Mapping[str, Any]) -> datetime | None:
    raw = entry.get("at")
    if not isinstance(raw, str):
        return None
    try:
        when = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def last_used(edges: Iterable[Edge]) -> dict[str, datetime]:
    """Node id -> the latest time it was credited, for nodes credited more often than
    blamed, read from the edit logs of ``edges`` (malformed entries are skipped)."""
    credits: dict[str, int] = defaultdict(int)
    blames: dict[str, int] = defaultdict(int)
    latest: dict[str, datetime] = {}
    for edge in edges:
        history = edge.attrs.get(HISTORY_KEY)
        if not isinstance(history, list):
            continue
        for entry in history:
            if not isinstance(entry, Mapping):
                continue
            decision, when = entry.get("decision"), _when(entry)
            for node_id in (edge.src, edge.dst):
                if decision == BLAME:
                    blames[node_id] += 1
                elif decision in CREDIT and when is not None:
                    credits[node_id] += 1
                    if node_id not in latest or when > latest[node_id]:
                        latest[node_id] = when
    return {n: t for n, t in latest.items() if credits[n] > blames[n]}
