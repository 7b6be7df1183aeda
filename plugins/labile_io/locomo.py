"""Loader for the LoCoMo benchmark in the public ``locomo10.json`` layout.

The file is a JSON list of samples ``{sample_id, conversation, qa, ...}``.
``conversation`` holds ``speaker_a``, ``speaker_b``, and for every session
``N`` a list ``session_N`` of turns ``{speaker, dia_id, text, [img_url,
blip_caption, query, ...]}`` and its start ``session_N_date_time`` (e.g.
``"1:56 pm on 8 May, 2023"``). ``qa`` is a list of ``{question, answer,
evidence, category}``; category 5 (adversarial) questions usually carry
``adversarial_answer`` instead of ``answer``.

Loading contract:

* Sessions are ordered by their number (``session_10`` after ``session_9``).
  A ``session_N_date_time`` without a ``session_N`` list is ignored; a
  ``session_N`` list without its date is an error.
* Session dates are parsed by `labile_text.dates.parse_session_datetime` and
  taken as UTC.
  Every turn of a session gets the session's timestamp and its original date
  text (``Turn.date_text``).
* Turn ids must be canonical (``D<session>:<turn>``, no leading zeros, session
  number matching the list they are in) and unique in a conversation; anything
  else raises :class:`ValueError`.
* ``blip_caption`` (when a non-blank string) becomes ``Turn.caption``.
* Answers are converted to ``str`` (some are JSON ints). For a question
  without ``answer``, ``adversarial_answer`` is used; ``adversarial_answer``
  is also kept on its own.

Evidence cleaning (:class:`EvidenceCleaning` counts each rule; rules apply to
each raw ``evidence`` entry in order):

a. **split** — an entry holding several ids separated by ``;``, ``,`` or
   whitespace (``"D8:6; D9:17"``, ``"D1:3 D2:5"``, ``"D1:3,D2:5"``) is split
   into its pieces, each cleaned by the rules below. Whitespace around ``:``
   and after the ``D`` prefix is removed first, so ``"D3 : 7"`` and ``"D 3:7"``
   stay one id.
b. **normalised** — a piece matching ``[dD]<int>:<int>`` whose canonical form
   ``D<int>:<int>`` (uppercase, no padding, no surrounding whitespace) differs
   from the raw text, e.g. ``"d3:7"``, ``" D3:7"``, ``"D30:05"``, is rewritten
   to the canonical form when that turn exists (otherwise rule c applies).
   **recovered** — a piece ``D:<s>:<t>`` (session number written after a
   stray colon, e.g. ``"D:11:26"``) is read as ``D<s>:<t>`` when that turn
   exists; this is the only reading that yields a well-formed id, so it is
   unambiguous. If the turn does not exist, the piece counts as malformed.
   **malformed** — any other piece (e.g. a bare ``"D"``, ``"D11"``,
   ``"D:26"``) carries no recoverable id and is dropped.
c. **absent** — a well-formed id that names no turn of the conversation
   (e.g. ``"D10:19"`` when session 10 has 16 turns) is dropped: guessing the
   intended turn would invent gold labels.
d. **duplicates** — an id already kept for the same question is dropped.
e. **empty** — a question whose cleaned evidence is empty (including one
   whose raw evidence was already empty) is kept, with ``evidence == ()``;
   callers exclude it from retrieval metrics (``Question.has_evidence``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import attrs

from labile.plugin import Observation
from labile_io.jsonlist import load_json_list
from labile_text.dates import parse_session_datetime

__all__ = [
    "LOCOMO_ENV_VAR",
    "Conversation",
    "EvidenceCleaning",
    "Question",
    "Session",
    "Turn",
    "clean_evidence",
    "default_locomo_path",
    "load_locomo",
    "turn_document",
]

LOCOMO_ENV_VAR = "LABILE_LOCOMO"
"""Environment variable overriding the LoCoMo file location."""

_DEFAULT_RELATIVE = Path("..") / "shared" / "data" / "locomo" / "locomo_dev.json"


def default_locomo_path(repo_root: str | os.PathLike[str]) -> Path:
    """Where the LoCoMo dev file is expected.

    Args:
        repo_root: The repository root.

    Returns:
        ``$LABILE_LOCOMO`` if set (a relative value is resolved against
        ``repo_root``), else ``<repo_root>/../shared/data/locomo/locomo_dev.json``.
        The file may not exist.
    """
    root = Path(repo_root)
    override = os.environ.get(LOCOMO_ENV_VAR)
    return root / Path(override) if override else root / _DEFAULT_RELATIVE


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------


@attrs.frozen
class Turn:
    """One dialogue turn.

    Attributes:
        id: The canonical dia_id, ``D<session>:<n>``.
        session: Session number (1-based, as in the data).
        speaker: Speaker name as given.
        text: Utterance text, verbatim.
        timestamp: The session's start, tz-aware UTC.
        caption: BLIP caption of a shared image, or ``None``.
        date_text: The session date-time string exactly as in the data.
    """

    id: str
    session: int
    speaker: str
    text: str
    timestamp: datetime
    caption: str | None
    date_text: str


@attrs.frozen
class Question:
    """One QA item.

    Attributes:
        index: Position in the sample's ``qa`` list (0-based).
        question: The question text.
        answer: Reference answer as a string (``adversarial_answer`` when the
            item has no ``answer``).
        category: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
            5 adversarial.
        evidence: Cleaned evidence turn ids (existing, distinct, in order).
        raw_evidence: The evidence entries exactly as in the data.
        adversarial_answer: The item's ``adversarial_answer``, if any.
    """

    index: int
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]
    raw_evidence: tuple[str, ...]
    adversarial_answer: str | None = None

    @property
    def has_evidence(self) -> bool:
        """Whether retrieval metrics are defined (cleaned evidence non-empty)."""
        return bool(self.evidence)


class Session(NamedTuple):
    """One session: ``(number, timestamp, turns)``."""

    number: int
    timestamp: datetime
    turns: list[Turn]


@attrs.frozen
class Conversation:
    """One LoCoMo sample.

    Attributes:
        sample_id: E.g. ``"conv-26"``.
        speakers: ``(speaker_a, speaker_b)``.
        sessions: Sessions in session-number order.
        questions: QA items in file order.
    """

    sample_id: str
    speakers: tuple[str, str]
    sessions: list[Session]
    questions: list[Question]

    @property
    def turns(self) -> list[Turn]:
        """All turns in session order, then turn order."""
        return [turn for session in self.sessions for turn in session.turns]

    @property
    def turn_ids(self) -> frozenset[str]:
        """The ids of all turns."""
        return frozenset(turn.id for session in self.sessions for turn in session.turns)

    def turn(self, turn_id: str) -> Turn:
        """Look a turn up by id.

        Args:
            turn_id: A canonical dia_id.

        Returns:
            The turn.

        Raises:
            KeyError: If no turn has that id.
        """
        for session in self.sessions:
            for turn in session.turns:
                if turn.id == turn_id:
                    return turn
        raise KeyError(turn_id)


@attrs.define
class EvidenceCleaning:
    """Counts of the evidence-cleaning rules (see the module docstring).

    Attributes:
        raw_entries: Raw evidence entries seen.
        split: Entries holding several ids that were split (rule a).
        normalised: Pieces rewritten to canonical form (rule b).
        recovered: ``D:<s>:<t>`` pieces recovered as ``D<s>:<t>`` (rule b).
        malformed: Pieces with no recoverable id, dropped (rule b).
        absent: Well-formed ids naming no turn, dropped (rule c).
        duplicates: Repeated ids within a question, dropped (rule d).
        kept: Evidence ids kept in total.
        empty_questions: Questions left with no evidence (rule e).
        flagged: ``(sample_id, question index)`` of those questions.
    """

    raw_entries: int = 0
    split: int = 0
    normalised: int = 0
    recovered: int = 0
    malformed: int = 0
    absent: int = 0
    duplicates: int = 0
    kept: int = 0
    empty_questions: int = 0
    flagged: list[tuple[str, int]] = attrs.Factory(list)

    def counts(self) -> dict[str, int]:
        """The counters as a dict (without ``flagged``)."""
        return {name: value for name, value in attrs.asdict(self).items() if name != "flagged"}


# ---------------------------------------------------------------------------
# Evidence cleaning
# ---------------------------------------------------------------------------

_CANON_RE = re.compile(r"D([1-9]\d*):([1-9]\d*)")
_ID_RE = re.compile(r"[dD](\d+):(\d+)")
_MISSING_SESSION_RE = re.compile(r"[dD]:(\d+):(\d+)")
_SEPARATORS = re.compile(r"[;,\s]+")
_COLON_SPACE = re.compile(r"\s*:\s*")
_PREFIX_SPACE = re.compile(r"\b([dD])\s+(?=\d)")


def clean_evidence(
    raw: list[Any] | tuple[Any, ...],
    turn_ids: frozenset[str] | set[str],
    stats: EvidenceCleaning,
) -> tuple[str, ...]:
    """Clean one question's raw evidence list (rules a–d of the module doc).

    Rule e (empty result) is counted by the caller, which knows the question.

    Args:
        raw: The raw ``evidence`` entries (non-strings count as malformed).
        turn_ids: The canonical ids of the conversation's turns.
        stats: Counters to update in place.

    Returns:
        The kept canonical ids, distinct, in first-seen order.
    """
    kept: list[str] = []
    for entry in raw:
        stats.raw_entries += 1
        if not isinstance(entry, str):
            stats.malformed += 1
            continue
        tidy = _PREFIX_SPACE.sub(r"\1", _COLON_SPACE.sub(":", entry.strip()))
        pieces = [p for p in _SEPARATORS.split(tidy) if p]
        if not pieces:
            stats.malformed += 1
            continue
        if len(pieces) > 1:
            stats.split += 1
        for piece in pieces:
            original = piece if len(pieces) > 1 else entry
            if m := _ID_RE.fullmatch(piece):
                canon = f"D{int(m.group(1))}:{int(m.group(2))}"
                if canon not in turn_ids:
                    stats.absent += 1
                    continue
                if canon != original:
                    stats.normalised += 1
            elif m := _MISSING_SESSION_RE.fullmatch(piece):
                canon = f"D{int(m.group(1))}:{int(m.group(2))}"
                if canon not in turn_ids:
                    stats.malformed += 1
                    continue
                stats.recovered += 1
            else:
                stats.malformed += 1
                continue
            if canon in kept:
                stats.duplicates += 1
                continue
            kept.append(canon)
    stats.kept += len(kept)
    return tuple(kept)


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------

_SESSION_KEY = re.compile(r"session_(\d+)")


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _parse_sessions(sample_id: str, conv: Mapping[str, Any]) -> list[Session]:
    numbers = sorted(
        int(m.group(1)) for key in conv if (m := _SESSION_KEY.fullmatch(key)) is not None
    )
    sessions: list[Session] = []
    seen: set[str] = set()
    for n in numbers:
        turns_raw = conv[f"session_{n}"]
        if not isinstance(turns_raw, list):
            raise ValueError(f"{sample_id}: session_{n} is not a list of turns")
        date_key = f"session_{n}_date_time"
        if date_key not in conv:
            raise ValueError(f"{sample_id}: session_{n} has no {date_key}")
        date_text = _as_text(conv[date_key])
        try:
            timestamp = parse_session_datetime(date_text)
        except ValueError as exc:
            raise ValueError(f"{sample_id}: bad {date_key} {date_text!r} ({exc})") from None
        turns: list[Turn] = []
        for t in turns_raw:
            dia_id = t.get("dia_id")
            m = _CANON_RE.fullmatch(dia_id) if isinstance(dia_id, str) else None
            if m is None or int(m.group(1)) != n:
                raise ValueError(f"{sample_id}: unexpected dia_id {dia_id!r} in session_{n}")
            if dia_id in seen:
                raise ValueError(f"{sample_id}: duplicate dia_id {dia_id!r}")
            seen.add(dia_id)
            if not isinstance(t.get("speaker"), str) or not isinstance(t.get("text"), str):
                raise ValueError(f"{sample_id}: turn {dia_id} lacks a speaker or text string")
            caption = t.get("blip_caption")
            turns.append(
                Turn(
                    id=dia_id,
                    session=n,
                    speaker=t["speaker"],
                    text=t["text"],
                    timestamp=timestamp,
                    caption=caption if isinstance(caption, str) and caption.strip() else None,
                    date_text=date_text,
                )
            )
        sessions.append(Session(n, timestamp, turns))
    return sessions


def _parse_sample(sample: Mapping[str, Any], stats: EvidenceCleaning) -> Conversation:
    sample_id = _as_text(sample.get("sample_id", "?"))
    try:
        conv = sample["conversation"]
        qa = sample["qa"]
        speakers = (_as_text(conv["speaker_a"]), _as_text(conv["speaker_b"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{sample_id}: missing field {exc}") from None
    sessions = _parse_sessions(sample_id, conv)
    turn_ids = frozenset(t.id for s in sessions for t in s.turns)
    questions: list[Question] = []
    for index, q in enumerate(qa):
        adversarial = q.get("adversarial_answer")
        if "answer" in q and q["answer"] is not None:
            answer = _as_text(q["answer"])
        elif adversarial is not None:
            answer = _as_text(adversarial)
        else:
            raise ValueError(f"{sample_id}: qa[{index}] has neither answer nor adversarial_answer")
        try:
            text = _as_text(q["question"])
            category = int(q["category"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{sample_id}: qa[{index}] bad question/category ({exc!r})") from None
        raw = q.get("evidence", [])
        if not isinstance(raw, list):
            raise ValueError(f"{sample_id}: qa[{index}] evidence is not a list")
        evidence = clean_evidence(raw, turn_ids, stats)
        if not evidence:
            stats.empty_questions += 1
            stats.flagged.append((sample_id, index))
        questions.append(
            Question(
                index=index,
                question=text,
                answer=answer,
                category=category,
                evidence=evidence,
                raw_evidence=tuple(_as_text(e) for e in raw),
                adversarial_answer=None if adversarial is None else _as_text(adversarial),
            )
        )
    return Conversation(
        sample_id=sample_id, speakers=speakers, sessions=sessions, questions=questions
    )


def load_locomo(
    path: str | os.PathLike[str], *, limit: int | None = None
) -> tuple[list[Conversation], EvidenceCleaning]:
    """Load a LoCoMo file (``locomo10.json`` layout).

    Args:
        path: The JSON file.
        limit: Load only the first ``limit`` samples (``None``: all).

    Returns:
        The conversations in file order, and the evidence-cleaning counts over
        the loaded samples.

    Raises:
        ValueError: On a layout violation (message names the sample), a bad
            date string, or a negative ``limit``.
        OSError: If the file cannot be read.
    """
    data = load_json_list(path, what="samples", limit=limit)
    stats = EvidenceCleaning()
    conversations = [_parse_sample(sample, stats) for sample in data]
    return conversations, stats


def turn_document(turn: Turn) -> str:
    """The reference baseline's text for indexing one turn.

    Args:
        turn: The turn.

    Returns:
        ``"[<date_text>] <speaker>: <text>"``, followed by
        ``" [shares a photo: <caption>]"`` when the turn has a caption.
    """
    doc = f"[{turn.date_text}] {turn.speaker}: {turn.text}"
    if turn.caption is not None:
        doc += f" [shares a photo: {turn.caption}]"
    return doc


def observations_of(conv: Conversation) -> list[list[Observation]]:
    """The conversation's turns as observations, one list per session, in order."""
    out = []
    for session in conv.sessions:
        batch = []
        for turn in session.turns:
            meta: dict[str, Any] = {"date_text": turn.date_text}
            if turn.caption:
                meta["caption"] = turn.caption
            batch.append(Observation(
                id=turn.id, text=turn.text, speaker=turn.speaker, timestamp=turn.timestamp,
                session=str(session.number), metadata=meta,
            ))
        out.append(batch)
    return out
