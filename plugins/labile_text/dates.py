"""Calendar words, and the one parser of conversation session stamps.

The tables here are shared by everything in the toolkit that reads dates
(`labile_text.timeparse`, `labile_text.entities`, `labile_text.keywords`) and
by the LoCoMo loader of the benchmark bundle, so a month or weekday spelling
is known in one place. `parse_session_datetime` reads the session stamps of
LoCoMo-style conversations ("1:56 pm on 8 May, 2023").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Final

__all__ = [
    "FULL_MONTH_NAMES",
    "FULL_WEEKDAY_NAMES",
    "MONTH_NUMBERS",
    "WEEKDAY_NUMBERS",
    "parse_session_datetime",
]

_MONTH_SPELLINGS: Final = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sep", "sept"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)
#: Month names and their abbreviations, lower-case, to the month number (1-12).
MONTH_NUMBERS: Final[Mapping[str, int]] = {
    name: number for number, names in enumerate(_MONTH_SPELLINGS, start=1) for name in names
}
#: The twelve full month names, lower-case.
FULL_MONTH_NAMES: Final = frozenset(names[0] for names in _MONTH_SPELLINGS)

_WEEKDAY_SPELLINGS: Final = (
    ("monday", "mon"),
    ("tuesday", "tue", "tues"),
    ("wednesday", "wed"),
    ("thursday", "thu", "thur", "thurs"),
    ("friday", "fri"),
    ("saturday", "sat"),
    ("sunday", "sun"),
)
#: Weekday names and their abbreviations, lower-case, to `datetime.weekday` (Monday 0).
WEEKDAY_NUMBERS: Final[Mapping[str, int]] = {
    name: number for number, names in enumerate(_WEEKDAY_SPELLINGS) for name in names
}
#: The seven full weekday names, lower-case.
FULL_WEEKDAY_NAMES: Final = frozenset(names[0] for names in _WEEKDAY_SPELLINGS)

_SESSION_STAMP = re.compile(
    r"""^\s*
    (?:(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<ampm>[ap]\.?\s?m\.?)?\s+on\s+)?
    (?P<day>\d{1,2})\s+(?P<month>[a-z]+)\.?\s*,?\s*(?P<year>\d{4})
    \s*$""",
    re.IGNORECASE | re.VERBOSE,
)


def parse_session_datetime(text: str) -> datetime:
    """Parse a session stamp such as ``"1:56 pm on 8 May, 2023"``, as UTC.

    Accepted: that form (LoCoMo's), with or without the comma, ``am``/``pm``
    in any case (``"p.m."`` too), full or abbreviated month names; without
    ``am``/``pm`` the time is read as 24-hour; the time part may be omitted
    (``"8 May 2023"`` is midnight). The source carries no time zone.

    Args:
        text: The stamp.

    Returns:
        A tz-aware UTC datetime.

    Raises:
        ValueError: ``text`` has none of those forms, or names an impossible
            date or time; the message quotes it.
    """
    m = _SESSION_STAMP.match(text)
    month = MONTH_NUMBERS.get(m.group("month").lower()) if m else None
    if m is None or month is None:
        raise ValueError(f"unrecognised session date-time {text!r} "
                         "(expected e.g. '1:56 pm on 8 May, 2023')")
    hour = int(m.group("hour") or 0)
    minute = int(m.group("minute") or 0)
    ampm = m.group("ampm")
    if ampm is not None:
        if not 1 <= hour <= 12:
            raise ValueError(f"bad 12-hour time in session date-time {text!r}")
        hour = hour % 12 + (12 if ampm.lower().startswith("p") else 0)
    try:
        return datetime(int(m.group("year")), month, int(m.group("day")), hour, minute, tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"impossible session date-time {text!r}: {exc}") from None
