"""Reading chat logs into observations: the formats ``labile add`` accepts.

=============  ===============================================================
``jsonl``      one JSON object per line: labile's own records (``text``,
               ``speaker``, ``session``, ``metadata``) or chat records
               (``role``/``content`` or ``speaker``/``text``); ``id`` and
               ``timestamp`` optional
``messages``   a JSON list of OpenAI-style messages (``role``, ``content`` as
               a string or a list of text parts), or ``{"messages": [...]}``
``locomo``     a LoCoMo file: one namespace per conversation (its sample id)
``longmemeval`` a LongMemEval file: one namespace per question's haystack
=============  ===============================================================

A record without an ``id`` gets one from its content, never from the file's
name or its place in the file: ``log-`` and a hash of the record as written
(role, speaker, text, session, metadata, and its time when it has one) and of
how many identical records came before it in the same log. The same log
under another name, or grown at either end, gives the same ids for the same
lines, so ``labile add`` stores nothing twice; a message legitimately said
twice ("ok", "ok") is two turns, #0 and #1. (Before 0.3.0 the id was the file's
stem and the record's position: those stored ids stay valid, but a log added
then and again now is stored once more.)

Times: a timestamp without a zone is read in ``tz``. In a file where some
records have a time and some do not, a record without one takes the time of
the record before it (the first ones: the time of the first record that has
one), and the conversation lists them in `Conversation.filled_times`;
``require_timestamps`` refuses such a file instead, naming the first records
without a time. A file with no time at all gets the caller's ``default_time``
for every record.

Speakers: a record's speaker is its ``speaker``, else its ``name`` (OpenAI),
else its ``role``; when a name differs from the role, the role is kept in
``metadata["role"]``. ``speakers`` maps roles to people's names and
self-introductions name a role from then on (`labile_io.speakers`).

Chat records whose ``role`` is in ``skip_roles`` (a system prompt, a tool's
raw output) and records with no text are left out, and each is listed in
`Conversation.skipped` so the caller can say so: nothing is dropped silently.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Final

import attrs

from labile.plugin import InputError, Observation
from labile_io.speakers import NAMED_BY_KEY, ROLE_KEY, SpeakerNames, parse_speakers

__all__ = ["DEFAULT_SKIP_ROLES", "FORMATS", "Conversation", "ReadOptions", "Skipped", "content_id",
           "detect", "fill_times", "read_file"]

FORMATS: Final = ("jsonl", "messages", "locomo", "longmemeval")
#: Roles whose messages are instructions or machine output, not conversation.
DEFAULT_SKIP_ROLES: Final = ("system", "tool")


def _roles(roles: Iterable[str]) -> frozenset[str]:
    return frozenset(r.strip().lower() for r in roles)


@attrs.frozen(kw_only=True)
class ReadOptions:
    """How to fill what a record leaves out.

    Attributes:
        default_time: The timestamp of every record when none has one.
        tz: The zone of timestamps written without one.
        skip_roles: Chat records with one of these roles (compared in lower
            case) are left out.
        require_timestamps: Refuse a file where some records have a time and
            some do not (instead of giving those the time of their neighbour).
        speakers: Role → person's name (``{"user": "Elena"}``); see
            `labile_io.speakers`. Self-introductions name roles not listed.
    """

    default_time: datetime
    tz: tzinfo
    skip_roles: frozenset[str] = attrs.field(default=frozenset(DEFAULT_SKIP_ROLES),
                                             converter=_roles)
    require_timestamps: bool = False
    speakers: Mapping[str, str] = attrs.field(factory=dict, converter=parse_speakers)


@attrs.frozen(kw_only=True)
class Skipped:
    """A record left out, and why.

    Attributes:
        where: Where it is in the file (``"line 3"``, ``"message 1"``).
        reason: ``"role 'system'"``, or ``"no text"``.
    """

    where: str
    reason: str


@attrs.frozen(kw_only=True)
class Conversation:
    """Observations bound for one namespace (``None``: the one the caller names), the
    records of the file that were left out, and those without a time that took
    their neighbour's (``"line 4"``, ``"message 2"``)."""

    namespace: str | None
    observations: tuple[Observation, ...]
    skipped: tuple[Skipped, ...] = ()
    filled_times: tuple[str, ...] = ()


def detect(path: Path, text: str) -> str:
    """The format of the file at ``path`` holding ``text``, from its name and structure.

    Raises:
        InputError: the content fits no format.
    """
    if path.suffix == ".jsonl":
        return "jsonl"
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        first = next((line for line in text.splitlines() if line.strip()), "")
        if first.lstrip().startswith("{"):
            return "jsonl"
        raise InputError(f"{path}: neither JSON nor JSON lines; pass --format "
                         f"({', '.join(FORMATS)})") from None
    first = data[0] if isinstance(data, list) and data else data
    if isinstance(first, Mapping):
        if "haystack_sessions" in first:
            return "longmemeval"
        if "conversation" in first:
            return "locomo"
    return "messages"


def read_file(path: Path, fmt: str | None, options: ReadOptions) -> list[Conversation]:
    """Every conversation in the file at ``path`` (``fmt=None``: detected).

    Raises:
        InputError: the file is missing, unreadable, or a record is malformed
            (the message names the file, the record and what is wrong), or
            ``options.require_timestamps`` and some records lack a time.
    """
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read it ({exc})") from None
    if not text.strip():
        raise InputError(f"{path}: the file is empty: there is nothing to add")
    fmt = fmt or detect(path, text)
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "locomo":
        return _locomo(path)
    if fmt == "longmemeval":
        return _longmemeval(path)
    return [_chat(path, _records(path, fmt, text), options)]


def _records(path: Path, fmt: str, text: str) -> list[tuple[str, Any]]:
    """``(where, record)`` for each record of a chat log."""
    if fmt == "jsonl":
        return [(f"line {lineno}", _json(path, line, f"line {lineno}"))
                for lineno, line in enumerate(text.splitlines(), 1) if line.strip()]
    data = _json(path, text, "the file")
    if isinstance(data, Mapping) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of messages")
    return [(f"message {i + 1}", item) for i, item in enumerate(data)]


def _chat(path: Path, records: list[tuple[str, Any]], options: ReadOptions) -> Conversation:
    kept: list[tuple[str, Mapping[str, Any], datetime | None]] = []
    skipped: list[Skipped] = []
    for where, row in records:
        role = row.get("role") if isinstance(row, Mapping) else None
        if isinstance(role, str) and role.strip().lower() in options.skip_roles:
            skipped.append(Skipped(where=where, reason=f"role {role.strip().lower()!r}"))
        elif _has_text(path, where, row):
            kept.append((where, row, _stamp(path, where, row, options)))
        else:
            skipped.append(Skipped(where=where, reason="no text"))
    untimed = [where for where, _, stamp in kept if stamp is None]
    if untimed and len(untimed) < len(kept) and options.require_timestamps:
        shown = ", ".join(untimed[:5]) + (f" and {len(untimed) - 5} more"
                                          if len(untimed) > 5 else "")
        raise InputError(f"{path}: {len(untimed)} of {len(kept)} records have no time "
                         f"({shown}); give each a 'timestamp', or leave out "
                         "--require-timestamps to give them the time of the record before")
    stamps = fill_times([stamp for _, _, stamp in kept], options.default_time)
    seen: Counter[str] = Counter()
    observations = []
    for (where, row, _), stamp in zip(kept, stamps, strict=True):
        raw = json.dumps(row, sort_keys=True, ensure_ascii=False)
        observations.append(_observation(path, where, row, stamp, content_id(raw, seen[raw])))
        seen[raw] += 1
    named = SpeakerNames(given=options.speakers).apply(observations)
    return Conversation(namespace=None, observations=tuple(named), skipped=tuple(skipped),
                        filled_times=tuple(untimed) if len(untimed) < len(kept) else ())


def content_id(record: str, occurrence: int) -> str:
    """The id of a record given without one: ``log-`` and a hash of the record as
    written (``record``: its canonical JSON) and of ``occurrence``, how many
    identical records came before it in the same log."""
    key = record if occurrence == 0 else f"{record}\x1f{occurrence}"
    return "log-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def fill_times(stamps: Sequence[datetime | None], default: datetime) -> list[datetime]:
    """Each missing time replaced by the one before it (leading ones: the first time
    given); all of them ``default`` when none is given."""
    first = next((s for s in stamps if s is not None), default)
    out: list[datetime] = []
    for stamp in stamps:
        out.append(stamp if stamp is not None else (out[-1] if out else first))
    return out


def _json(path: Path, text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: {where}: not JSON ({exc.msg})") from None


def _content(value: Any) -> str:
    if isinstance(value, list):  # OpenAI content parts
        return "\n".join(str(p.get("text", "")) for p in value
                         if isinstance(p, Mapping) and p.get("type", "text") == "text")
    return value if isinstance(value, str) else ""


def _has_text(path: Path, where: str, row: Any) -> bool:
    """Whether the record has something to remember; ``False`` for an empty message.

    Raises:
        InputError: not an object, or neither ``text`` nor ``content``.
    """
    if not isinstance(row, Mapping):
        raise InputError(f"{path}: {where}: expected a JSON object, got {type(row).__name__}")
    metadata = row.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise InputError(f"{path}: {where}: 'metadata' must be an object")
    if _content(row.get("text", row.get("content"))).strip() or metadata.get("caption"):
        return True
    if "text" in row or "content" in row:
        return False  # an empty message (a tool call, say): nothing to remember
    raise InputError(f"{path}: {where}: no 'text' or 'content'")


def _stamp(path: Path, where: str, row: Mapping[str, Any],
           options: ReadOptions) -> datetime | None:
    try:
        return _time(row.get("timestamp", row.get("time")), options.tz)
    except (ValueError, TypeError, OverflowError) as exc:
        raise InputError(f"{path}: {where}: {exc}") from None


def _observation(path: Path, where: str, row: Mapping[str, Any], stamp: datetime,
                 derived_id: str) -> Observation:
    role, named = row.get("role"), row.get("speaker", row.get("name"))
    speaker = named if named is not None else role
    metadata = dict(row.get("metadata") or {})
    if isinstance(role, str) and isinstance(named, str) and named != role:
        metadata.setdefault(ROLE_KEY, role)  # the log names its speaker: keep the role
        metadata.setdefault(NAMED_BY_KEY, "log")
    obs_id = row.get("id")
    try:
        return Observation(
            id=derived_id if obs_id is None else str(obs_id),
            text=_content(row.get("text", row.get("content"))), timestamp=stamp,
            speaker=None if speaker is None else str(speaker),
            session=None if row.get("session") is None else str(row["session"]),
            metadata=metadata,
        )
    except (ValueError, TypeError) as exc:
        raise InputError(f"{path}: {where}: {exc}") from None


def _time(value: Any, tz: tzinfo) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz)
    if not isinstance(value, str):
        raise ValueError(f"timestamp must be an ISO 8601 string or epoch seconds, got {value!r}")
    stamp = datetime.fromisoformat(value)
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=tz)


def _locomo(path: Path) -> list[Conversation]:
    from labile_io.locomo import load_locomo, observations_of

    try:
        conversations, _ = load_locomo(path)
    except ValueError as exc:
        raise InputError(f"{path}: not a LoCoMo file ({exc})") from None
    return [Conversation(namespace=c.sample_id,
                         observations=tuple(o for s in observations_of(c) for o in s))
            for c in conversations]


def _longmemeval(path: Path) -> list[Conversation]:
    from labile_io.longmemeval import load_longmemeval

    try:
        items = load_longmemeval(path)
    except ValueError as exc:
        raise InputError(f"{path}: not a LongMemEval file ({exc})") from None
    return [Conversation(namespace=item.question_id, observations=tuple(_lme_turns(item)))
            for item in items]


def _lme_turns(item: Any) -> Iterator[Observation]:
    for session in item.sessions:
        for index, (role, content) in enumerate(session.turns):
            if content.strip():
                yield Observation(id=f"{session.id}:{index}", text=content, speaker=role,
                                  timestamp=session.timestamp, session=session.id,
                                  metadata={"date_text": session.date_text})
