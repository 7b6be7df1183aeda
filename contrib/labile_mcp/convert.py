"""Between tool arguments and labile records: chat messages in, hits out.

Pure functions over plain data, so they are tested without a server.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from labile import Hit, InputError, Observation

#: The prefix of ids derived for messages sent without one.
DERIVED_ID_PREFIX = "mcp-"


def parse_time(value: str, what: str) -> datetime:
    """An ISO 8601 date or date-time; one without a zone is read as UTC.

    Raises:
        InputError: ``value`` is not ISO 8601, naming ``what`` held it.
    """
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        # The value is not echoed: error messages reach logs, and this is the caller's data.
        raise InputError(f"{what} is not an ISO 8601 date-time "
                         "(e.g. 2024-05-01T14:30:00+02:00)") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def derive_id(*, content: str, speaker: str | None, timestamp: datetime,
              session: str | None) -> str:
    """A stable id for a message sent without one: the same message, sent again
    with the same time, gets the same id, so re-sending adds nothing."""
    key = "\x1f".join((timestamp.isoformat(), speaker or "", session or "", content))
    return DERIVED_ID_PREFIX + hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


def messages_to_observations(
    messages: Sequence[Mapping[str, Any]], *, now: datetime
) -> list[Observation]:
    """Observations from chat messages (``content`` and optional ``role``, ``time``,
    ``id``, ``session``), in order.

    Messages without a time get ``now`` plus one microsecond per position, so
    their order survives; exact repeats (same id) within the call are kept once.

    Raises:
        InputError: a time is not ISO 8601, or a message is empty.
    """
    out: dict[str, Observation] = {}
    for i, msg in enumerate(messages):
        content = msg["content"]
        if not content.strip():
            raise InputError(f"messages[{i}].content is empty: there is nothing to remember")
        speaker = msg.get("role") or None
        session = msg.get("session") or None
        time = msg.get("time")
        stamp = (parse_time(time, f"messages[{i}].time") if time
                 else now + timedelta(microseconds=i))
        obs_id = msg.get("id") or derive_id(content=content, speaker=speaker,
                                            timestamp=stamp, session=session)
        out.setdefault(obs_id, Observation(id=obs_id, text=content, timestamp=stamp,
                                           speaker=speaker, session=session))
    return list(out.values())


def observation_to_dict(obs: Observation) -> dict[str, Any]:
    """An observation as the tools return it."""
    return {"id": obs.id, "text": obs.text, "role": obs.speaker, "session": obs.session,
            "time": obs.timestamp.isoformat()}


def hit_to_dict(rank: int, hit: Hit, sources: Mapping[str, Observation]) -> dict[str, Any]:
    """One search hit: the memory, its date, how it was reached, and its source turns."""
    node, via = hit.node, hit.via
    reached = f"{via.stage} by {via.atom}"
    if via.hop:
        reached += f", {via.hop} hop(s) from a seed"
    return {
        "rank": rank,
        "id": node.id,
        "kind": node.kind,
        "text": node.description or node.content,
        "score": round(hit.score, 6),
        "date": node.time_start.isoformat() if node.time_start else None,
        "reached": reached,
        "path": list(via.path),
        "current": hit.is_current,
        "superseded_by": list(hit.superseded_by),
        "sources": [observation_to_dict(sources[s]) for s in node.sources if s in sources],
    }
