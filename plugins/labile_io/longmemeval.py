"""Loader for LongMemEval_S: the data format (its session-level metrics are in
`labile_bench.metrics`).

The file is a JSON list of items, each one question over its own haystack::

    {"question_id", "question_type", "question", "answer", "question_date",
     "haystack_session_ids": [str], "haystack_dates": [str],
     "haystack_sessions": [[{"role", "content", "has_answer"?}, ...], ...],
     "answer_session_ids": [str]}

Loading contract:

* Dates look like ``"2023/05/20 (Sat) 02:21"`` and are parsed by
  :func:`parse_lme_datetime` as UTC; the weekday in parentheses is optional
  and not checked. The original strings are kept (``date_text``).
* ``haystack_session_ids``, ``haystack_dates`` and ``haystack_sessions`` must
  have the same length and the session ids must be distinct; otherwise a
  :class:`ValueError` names the item.
* Sessions keep file order. Turns become ``(role, content)`` pairs; the
  indices of turns flagged ``has_answer: true`` are kept in
  ``LMESession.evidence_turns``.
* ``answer`` is converted to ``str`` (some upstream answers are ints).
  ``answer_session_ids`` are kept as given, even ids that are not in the
  haystack (they then count as unretrievable gold).

Evidence is session-level: ``answer_session_ids`` names the sessions that hold
the answer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import attrs

from labile_io.jsonlist import load_json_list

__all__ = [
    "LMEItem",
    "LMESession",
    "load_longmemeval",
    "parse_lme_datetime",
]


@attrs.frozen
class LMESession:
    """One haystack session.

    Attributes:
        id: The haystack session id.
        timestamp: Session date, tz-aware UTC.
        turns: ``(role, content)`` pairs in order.
        date_text: The date string exactly as in the data.
        evidence_turns: Indices into ``turns`` of turns flagged ``has_answer``.
    """

    id: str
    timestamp: datetime
    turns: list[tuple[str, str]]
    date_text: str = ""
    evidence_turns: tuple[int, ...] = ()


@attrs.frozen
class LMEItem:
    """One LongMemEval question with its haystack.

    Attributes:
        question_id: Item id (``*_abs`` ids are abstention questions).
        question_type: E.g. ``"temporal-reasoning"``.
        question: The question text.
        answer: Reference answer as a string.
        question_date: When the question is asked, tz-aware UTC.
        sessions: Haystack sessions in file order.
        answer_session_ids: Gold evidence session ids, as given.
        question_date_text: ``question_date`` exactly as in the data.
    """

    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: datetime
    sessions: list[LMESession]
    answer_session_ids: tuple[str, ...]
    question_date_text: str = ""

    @property
    def is_abstention(self) -> bool:
        """Whether this is an abstention item (``question_id`` ends in ``_abs``)."""
        return self.question_id.endswith("_abs")


_LME_DATE = re.compile(
    r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\(\s*[A-Za-z]{3,9}\s*\))?\s*(\d{1,2}):(\d{2})\s*$"
)


def parse_lme_datetime(text: str) -> datetime:
    """Parse a LongMemEval date such as ``"2023/05/20 (Sat) 02:21"`` as UTC.

    Args:
        text: ``YYYY/MM/DD [(Weekday)] HH:MM`` (24-hour; weekday ignored).

    Returns:
        A tz-aware UTC datetime.

    Raises:
        ValueError: If the string does not have that form or is not a valid
            date/time.
    """
    m = _LME_DATE.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"unparseable LongMemEval date {text!r}")
    year, month, day, hour, minute = (int(g) for g in m.groups())
    try:
        return datetime(year, month, day, hour, minute, tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"invalid LongMemEval date {text!r}: {exc}") from None


def _parse_item(raw: Mapping[str, Any]) -> LMEItem:
    qid = str(raw.get("question_id", "?"))
    try:
        ids = [str(s) for s in raw["haystack_session_ids"]]
        dates = list(raw["haystack_dates"])
        sessions_raw = list(raw["haystack_sessions"])
        if not len(ids) == len(dates) == len(sessions_raw):
            raise ValueError(
                f"{qid}: haystack_session_ids/haystack_dates/haystack_sessions lengths differ "
                f"({len(ids)}/{len(dates)}/{len(sessions_raw)})"
            )
        if len(set(ids)) != len(ids):
            raise ValueError(f"{qid}: duplicate haystack session ids")
        sessions: list[LMESession] = []
        for sid, date_text, turns_raw in zip(ids, dates, sessions_raw, strict=True):
            turns = [(str(t["role"]), str(t["content"])) for t in turns_raw]
            evidence = tuple(i for i, t in enumerate(turns_raw) if t.get("has_answer") is True)
            sessions.append(
                LMESession(
                    id=sid,
                    timestamp=parse_lme_datetime(date_text),
                    turns=turns,
                    date_text=date_text,
                    evidence_turns=evidence,
                )
            )
        qdate = str(raw["question_date"])
        return LMEItem(
            question_id=qid,
            question_type=str(raw["question_type"]),
            question=str(raw["question"]),
            answer=str(raw["answer"]),
            question_date=parse_lme_datetime(qdate),
            sessions=sessions,
            answer_session_ids=tuple(str(s) for s in raw["answer_session_ids"]),
            question_date_text=qdate,
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{qid}: malformed item ({type(exc).__name__}: {exc})") from None
    except ValueError as exc:
        message = str(exc)
        raise ValueError(
            message if message.startswith(f"{qid}:") else f"{qid}: {message}"
        ) from None


def load_longmemeval(path: str | os.PathLike[str], limit: int | None = None) -> list[LMEItem]:
    """Load a LongMemEval_S file.

    Args:
        path: The JSON file (a list of items).
        limit: Load only the first ``limit`` items (``None``: all).

    Returns:
        The items in file order.

    Raises:
        ValueError: On a layout violation or bad date (message names the
            item), or a negative ``limit``.
        OSError: If the file cannot be read.
    """
    data = load_json_list(path, what="items", limit=limit)
    return [_parse_item(item) for item in data]
