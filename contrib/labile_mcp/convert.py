"""Between tool arguments and labile records: chat messages in, observations out.

Search hits leave in the one hit schema (`labile_io.hits.result_to_dict`), the
same as the CLI's ``search --json`` and the HTTP API.

Pure functions over plain data, so they are tested without a server.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from labile.plugin import InputError, Observation
from labile_io.speakers import ROLE_KEY

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


def derive_id(*, content: str, speaker: str | None, timestamp: datetime | None,
              session: str | None, occurrence: int = 0) -> str:
    """A stable id for a message sent without one, from what the caller sent: its role,
    session and content, its time only when one was given (``None``: a time
    defaulted to now is not part of it), and ``occurrence``, how many identical
    messages came before it in the same call.

    So re-sending a message adds nothing, with or without a time: a note sent
    twice without a time is one memory (give it a time or an id to keep a
    repeat), while "ok" said twice in one call is two turns.
    """
    parts = [timestamp.isoformat() if timestamp else "", speaker or "", session or "", content]
    if occurrence:
        parts.append(str(occurrence))  # the first keeps the id earlier versions derived
    key = "\x1f".join(parts)
    return DERIVED_ID_PREFIX + hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


def messages_to_observations(
    messages: Sequence[Mapping[str, Any]], *, now: datetime
) -> list[Observation]:
    """Observations from chat messages (``content`` and optional ``role``, ``time``,
    ``id``, ``session``), in order.

    Messages without a time get ``now`` plus one microsecond per position, so
    their order survives; ids are derived as `derive_id` says; a message whose
    own id repeats an earlier one of the call with the same turn is kept once.

    Raises:
        InputError: a time is not ISO 8601, a message is empty, or two messages
            share an id but not their content, role, session or time.
    """
    out: dict[str, tuple[int, Observation, bool]] = {}
    seen: Counter[tuple[str | None, ...]] = Counter()
    for i, msg in enumerate(messages):
        content = msg["content"]
        if not content.strip():
            raise InputError(f"messages[{i}].content is empty: there is nothing to remember")
        speaker = msg.get("role") or None
        session = msg.get("session") or None
        time = msg.get("time")
        stamp = (parse_time(time, f"messages[{i}].time") if time
                 else now + timedelta(microseconds=i))
        same = (content, speaker, session, time or None)
        obs_id = msg.get("id") or derive_id(
            content=content, speaker=speaker, session=session, occurrence=seen[same],
            timestamp=stamp if time else None)
        seen[same] += 1
        obs = Observation(id=obs_id, text=content, timestamp=stamp, speaker=speaker,
                          session=session)
        if obs_id not in out:
            out[obs_id] = (i, obs, bool(time))
            continue
        first, earlier, timed = out[obs_id]
        differ = differing_fields(earlier, obs, with_time=timed and bool(time))
        if differ:
            raise InputError(f"messages[{i}] has the id {obs_id!r} of messages[{first}] but "
                             f"another {' and '.join(differ)}: one id names one turn (give "
                             "each turn its own id, or none); nothing was added")
    return [obs for _, obs, _ in out.values()]


def differing_fields(a: Observation, b: Observation, *, with_time: bool) -> list[str]:
    """The fields, in the tools' words, in which two turns of one id differ; the time
    only counts ``with_time`` (a turn sent without one is dated when it arrives)."""
    pairs = (("content", a.text, b.text), ("role", a.speaker, b.speaker),
             ("session", a.session, b.session),
             ("time", a.timestamp, b.timestamp if with_time else a.timestamp))
    return [name for name, x, y in pairs if x != y]


def conflicts_with_stored(messages: Sequence[Mapping[str, Any]],
                          stored: Mapping[str, Observation]) -> str | None:
    """Why ``messages`` cannot be added over the ``stored`` turns of their ids, or
    ``None``: a message whose id is stored must be that same turn (re-sending it
    adds nothing); another turn under a used id would be silently dropped."""
    for i, msg in enumerate(messages):
        old = stored.get(msg.get("id") or "")
        if old is None:
            continue
        time = msg.get("time")
        if isinstance(old.metadata.get(ROLE_KEY), str):  # stored under the person's name
            old = attrs.evolve(old, speaker=old.metadata[ROLE_KEY])
        new = Observation(id=old.id, text=msg["content"], speaker=msg.get("role") or None,
                          session=msg.get("session") or None,
                          timestamp=parse_time(time, f"messages[{i}].time") if time
                          else old.timestamp)
        differ = differing_fields(old, new, with_time=bool(time))
        if differ:
            return (f"messages[{i}]: the id {old.id!r} is already stored with another "
                    f"{' and '.join(differ)}; one id names one turn (give this turn its own "
                    "id, or forget the stored one first); nothing was added")
    return None


def observation_to_dict(obs: Observation) -> dict[str, Any]:
    """An observation as the tools return it."""
    return {"id": obs.id, "text": obs.text, "role": obs.speaker, "session": obs.session,
            "time": obs.timestamp.isoformat()}
