"""Loader for the benchmark of change (``labile bench change``).

The data are hand-written conversations of people whose circumstances change
over months (a move, a new job, a diet, a pet, a plan that is moved or
cancelled), with questions about what is true now, what was true before, what
changed, and facts that never changed. It ships in
``labile_bench/data/change/``, one JSON file per person; the format is
described in that folder's ``README.md``:

``{"id", "person", "speakers": [..], "about", "sessions": [{"turns": [{"id",
"speaker", "text", "timestamp"}, ...]}, ...], "questions": [{"id", "question",
"asked_at", "kind", "gold": [turn ids], "stale": [turn ids]}, ...]}``

Loading contract:

* Turn ids are unique in a conversation; timestamps are ISO 8601 with an
  offset and never go backwards.
* ``kind`` is one of `KINDS`. ``gold`` is non-empty and names turns of the
  conversation. ``stale`` (the turns holding values that the answer
  superseded) is non-empty for ``current`` questions, names turns, never
  overlaps ``gold``, and is empty for the other kinds.
* ``asked_at`` is not before the first turn the question's gold cites.
* Question ids are unique across the whole set.

Any breach raises :class:`ValueError` naming the file, the item and the rule.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

import attrs

__all__ = [
    "DEFAULT_KS",
    "DEFAULT_PRESETS",
    "KINDS",
    "ChangeConversation",
    "ChangeQuestion",
    "ChangeTurn",
    "default_change_dir",
    "load_change",
    "load_change_file",
]

#: The question kinds, in report order.
KINDS: Final = ("current", "past", "change", "control")
#: The offline presets that ship, compared by default: the methods, then the baselines.
DEFAULT_PRESETS: Final = ("realm", "labile", "allmem", "context", "hybrid", "dense", "bm25")
#: Cut-offs: Hit and recall at the smallest, stale-first at the largest.
DEFAULT_KS: Final = (1, 5)


@attrs.frozen(kw_only=True)
class ChangeTurn:
    """One turn: its id, speaker (a name or an OpenAI role), text and time."""

    id: str
    speaker: str
    text: str
    timestamp: datetime
    session: int


@attrs.frozen(kw_only=True)
class ChangeQuestion:
    """A question, the time it is asked, its kind and the turns that answer it.

    ``stale`` holds the turns whose value the answer superseded (``current``
    questions only).
    """

    id: str
    question: str
    asked_at: datetime
    kind: str
    gold: tuple[str, ...]
    stale: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class ChangeConversation:
    """One person's sessions (turns in order) and the questions about them."""

    id: str
    person: str
    speakers: tuple[str, ...]
    sessions: tuple[tuple[ChangeTurn, ...], ...]
    questions: tuple[ChangeQuestion, ...]

    @property
    def turns(self) -> tuple[ChangeTurn, ...]:
        """Every turn, in order."""
        return tuple(t for session in self.sessions for t in session)


def default_change_dir() -> Path:
    """The folder of the shipped conversations."""
    return Path(str(files("labile_bench") / "data" / "change"))


def _time(value: Any, where: str) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"{where}: expected an ISO 8601 time string, got {value!r}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{where}: {value!r} is not an ISO 8601 time") from None
    if parsed.tzinfo is None:
        raise ValueError(f"{where}: {value!r} has no UTC offset (write e.g. '+00:00')")
    return parsed


def _ids(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: expected a list of turn ids, got {value!r}")
    return tuple(value)


def _parse_turns(raw: dict[str, Any], name: str) -> tuple[tuple[ChangeTurn, ...], ...]:
    sessions: list[tuple[ChangeTurn, ...]] = []
    seen: set[str] = set()
    last: datetime | None = None
    for number, session in enumerate(raw.get("sessions") or [], start=1):
        turns: list[ChangeTurn] = []
        for entry in session.get("turns") or []:
            where = f"{name} session {number} turn {entry.get('id', '?')!r}"
            missing = {"id", "speaker", "text", "timestamp"} - set(entry)
            if missing:
                raise ValueError(f"{where}: missing {', '.join(sorted(missing))}")
            if entry["id"] in seen:
                raise ValueError(f"{where}: turn id used twice")
            seen.add(entry["id"])
            stamp = _time(entry["timestamp"], where)
            if last is not None and stamp < last:
                raise ValueError(f"{where}: timestamp {entry['timestamp']} is before the "
                                 "previous turn's (turns must be in time order)")
            last = stamp
            turns.append(ChangeTurn(id=entry["id"], speaker=str(entry["speaker"]),
                                    text=str(entry["text"]), timestamp=stamp, session=number))
        if not turns:
            raise ValueError(f"{name} session {number}: no turns")
        sessions.append(tuple(turns))
    if not sessions:
        raise ValueError(f"{name}: no sessions")
    return tuple(sessions)


def _parse_question(entry: dict[str, Any], name: str,
                    times: dict[str, datetime]) -> ChangeQuestion:
    where = f"{name} question {entry.get('id', '?')!r}"
    missing = {"id", "question", "asked_at", "kind", "gold"} - set(entry)
    if missing:
        raise ValueError(f"{where}: missing {', '.join(sorted(missing))}")
    kind = entry["kind"]
    if kind not in KINDS:
        raise ValueError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    gold = _ids(entry["gold"], f"{where} gold")
    stale = _ids(entry.get("stale", []), f"{where} stale")
    if not gold:
        raise ValueError(f"{where}: gold is empty")
    unknown = [t for t in (*gold, *stale) if t not in times]
    if unknown:
        raise ValueError(f"{where}: {', '.join(unknown)} name no turn of the conversation")
    if kind == "current" and not stale:
        raise ValueError(f"{where}: a current question needs the stale turns it "
                         "superseded (a fact that never changed is a control)")
    if kind != "current" and stale:
        raise ValueError(f"{where}: only current questions have stale turns, not {kind}")
    if set(gold) & set(stale):
        raise ValueError(f"{where}: {', '.join(sorted(set(gold) & set(stale)))} "
                         "is both gold and stale")
    asked = _time(entry["asked_at"], f"{where} asked_at")
    if asked < min(times[t] for t in gold):
        raise ValueError(f"{where}: asked at {entry['asked_at']}, before its gold was said")
    return ChangeQuestion(id=str(entry["id"]), question=str(entry["question"]), asked_at=asked,
                          kind=kind, gold=gold, stale=stale)


def load_change_file(path: str | Path) -> ChangeConversation:
    """One conversation file, checked against the loading contract.

    Raises:
        ValueError: The file breaks the contract (the message names what).
        OSError: The file cannot be read.
    """
    name = Path(path).name
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name}: not JSON ({exc})") from None
    if not isinstance(raw, dict) or not {"id", "person", "sessions", "questions"} <= set(raw):
        raise ValueError(f"{name}: expected an object with id, person, sessions, questions")
    sessions = _parse_turns(raw, name)
    times = {t.id: t.timestamp for s in sessions for t in s}
    questions = tuple(_parse_question(q, name, times) for q in raw["questions"])
    return ChangeConversation(
        id=str(raw["id"]), person=str(raw["person"]),
        speakers=tuple(str(s) for s in raw.get("speakers", [])),
        sessions=sessions, questions=questions)


def load_change(paths: Iterable[str | Path] | None = None) -> list[ChangeConversation]:
    """Conversations from files or folders (every ``*.json`` inside, by name).

    With no ``paths``, the shipped set (`default_change_dir`).

    Raises:
        ValueError: A file breaks the contract, two conversations share an id,
            two questions share an id, or no file was found.
    """
    files_: list[Path] = []
    for p in ([default_change_dir()] if paths is None else [Path(p) for p in paths]):
        files_.extend(sorted(p.glob("*.json")) if p.is_dir() else [p])
    if not files_:
        raise ValueError("no conversation files (*.json) found")
    conversations = [load_change_file(f) for f in files_]
    _check_unique([c.id for c in conversations], "conversation id")
    _check_unique([q.id for c in conversations for q in c.questions], "question id")
    return conversations


def _check_unique(values: Sequence[str], what: str) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"{what} {value!r} is used twice")
        seen.add(value)
