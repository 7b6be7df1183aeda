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

A record without an ``id`` gets one derived from its own content and its
position in the file, so reading the same file twice gives the same ids (and
``labile add`` skips what is stored). A record without a timestamp gets the
caller's ``default_time``; a timestamp without a zone is read in ``tz``.

Chat records whose ``role`` is in ``skip_roles`` (a system prompt, a tool's
raw output) and records with no text are left out, and each is listed in
`Conversation.skipped` so the caller can say so: nothing is dropped silently.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Final

import attrs

from labile.plugin import InputError, Observation

__all__ = ["DEFAULT_SKIP_ROLES", "FORMATS", "Conversation", "ReadOptions", "Skipped", "detect",
           "read_file"]

FORMATS: Final = ("jsonl", "messages", "locomo", "longmemeval")
#: Roles whose messages are instructions or machine output, not conversation.
DEFAULT_SKIP_ROLES: Final = ("system", "tool")


def _roles(roles: Iterable[str]) -> frozenset[str]:
    return frozenset(r.strip().lower() for r in roles)


@attrs.frozen(kw_only=True)
class ReadOptions:
    """How to fill what a record leaves out.

    Attributes:
        default_time: The timestamp of records without one.
        tz: The zone of timestamps written without one.
        skip_roles: Chat records with one of these roles (compared in lower
            case) are left out.
    """

    default_time: datetime
    tz: tzinfo
    skip_roles: frozenset[str] = attrs.field(default=frozenset(DEFAULT_SKIP_ROLES),
                                             converter=_roles)


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
    """Observations bound for one namespace (``None``: the one the caller names), and
    the records of the file that were left out."""

    namespace: str | None
    observations: tuple[Observation, ...]
    skipped: tuple[Skipped, ...] = ()


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


def read_file(path: Path, fmt: str | None, options: ReadOptions) -> list[Conversation]:  # noqa: PLR0912
    """Every conversation in the file at ``path`` (``fmt=None``: detected).

    Raises:
        InputError: the file is missing, unreadable, or a record is malformed
            (the message names the file, the record and what is wrong).
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
    records: list[tuple[str, Any]] = []
    if fmt == "jsonl":
        for lineno, line in enumerate(text.splitlines(), 1):
            if line.strip():
                records.append((f"line {lineno}", _json(path, line, f"line {lineno}")))
    else:
        data = _json(path, text, "the file")
        if isinstance(data, Mapping) and isinstance(data.get("messages"), list):
            data = data["messages"]
        if not isinstance(data, list):
            raise InputError(f"{path}: expected a JSON list of messages")
        records = [(f"message {i + 1}", item) for i, item in enumerate(data)]
    observations: list[Observation] = []
    skipped: list[Skipped] = []
    for position, (where, row) in enumerate(records):
        role = row.get("role") if isinstance(row, Mapping) else None
        if isinstance(role, str) and role.strip().lower() in options.skip_roles:
            skipped.append(Skipped(where=where, reason=f"role {role.strip().lower()!r}"))
            continue
        obs = _observation(path, where, position, row, options)
        if obs is None:
            skipped.append(Skipped(where=where, reason="no text"))
        else:
            observations.append(obs)
    return [Conversation(namespace=None, observations=tuple(observations),
                         skipped=tuple(skipped))]


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


def _observation(path: Path, where: str, position: int, row: Any,
                 options: ReadOptions) -> Observation | None:
    if not isinstance(row, Mapping):
        raise InputError(f"{path}: {where}: expected a JSON object, got {type(row).__name__}")
    text = _content(row.get("text", row.get("content")))
    if not text.strip() and not (row.get("metadata") or {}).get("caption"):
        if "text" in row or "content" in row:
            return None  # an empty message (a tool call, say): nothing to remember
        raise InputError(f"{path}: {where}: no 'text' or 'content'")
    raw = json.dumps(row, sort_keys=True, ensure_ascii=False)
    obs_id = row.get("id")
    if obs_id is None:
        digest = hashlib.sha256(f"{position}\x1f{raw}".encode()).hexdigest()[:16]
        obs_id = f"{path.stem}-{digest}"
    speaker = row.get("speaker", row.get("name", row.get("role")))
    metadata = row.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise InputError(f"{path}: {where}: 'metadata' must be an object")
    try:
        return Observation(
            id=str(obs_id), text=text,
            timestamp=_time(row.get("timestamp", row.get("time")), options),
            speaker=None if speaker is None else str(speaker),
            session=None if row.get("session") is None else str(row["session"]),
            metadata=metadata,
        )
    except (ValueError, TypeError) as exc:
        raise InputError(f"{path}: {where}: {exc}") from None


def _time(value: Any, options: ReadOptions) -> datetime:
    if value is None:
        return options.default_time
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, options.tz)
    if not isinstance(value, str):
        raise ValueError(f"timestamp must be an ISO 8601 string or epoch seconds, got {value!r}")
    stamp = datetime.fromisoformat(value)
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=options.tz)


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
