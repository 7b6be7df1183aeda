"""Relative time expressions resolved to absolute intervals.

Conversations say "last Saturday" or "two weeks ago"; memory needs absolute
intervals so that a temporal question asked months later can be matched
against the right nodes. :func:`resolve_time_expressions` turns such phrases
into half-open ``[start, end)`` intervals relative to an anchor (normally the
timestamp of the turn that contains them).

Conventions (documented because English is ambiguous here):
    * weeks start on Monday; a weekend is Saturday 00:00 to Monday 00:00;
    * seasons are meteorological, northern hemisphere (spring = Mar-May,
      summer = Jun-Aug, fall/autumn = Sep-Nov, winter = Dec-Feb) and "the
      winter of 2022" is the one starting in December 2022;
    * a bare or "this"/"on" weekday is the most recent such day on or before
      the anchor's date; "next"/"coming" picks the first one after it; "last"
      the most recent one strictly before it;
    * a month name with a cue ("in March") is the most recent such month on or
      before the anchor's month; "last May" is strictly before, "next May"
      strictly after; "May 8th" without a year is in the anchor's year;
    * "N weeks ago" is the Monday-to-Sunday week containing the day N weeks
      back; "N months/years ago" the calendar month/year;
    * "since X" is a range from the start of X to the end of the anchor's day;
      "the past N days/weeks/..." is a range ending with the anchor's day and
      "the next N ..." one starting with it;
    * a bare month, day or weekday (no year, no "last"/"next") follows the tense of
      its clause (`labile_text.tense`): the coming one in a plan or schedule, the
      last one in a report; when the clause does not say, the last one is the
      mention's ``start``/``end`` and the coming one its ``alternative``;
    * vague words ("recently", "lately", "the other day") are not resolved.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, tzinfo

import attrs

from labile_text.dates import (
    FULL_MONTH_NAMES,
    FULL_WEEKDAY_NAMES,
    MONTH_NUMBERS,
    WEEKDAY_NUMBERS,
)
from labile_text.intervals import (
    Interval,
    add_months,
    clamped,
    day_interval,
    month_interval,
    offset,
    season_interval,
    shifted_interval,
    valid_year,
    week_interval,
    weekend_interval,
    year_interval,
)
from labile_text.tense import BOTH, FUTURE, TenseReader

__all__ = ["GRANULARITIES", "TimeMention", "resolve_time_expressions"]


GRANULARITIES: frozenset[str] = frozenset({"day", "week", "month", "year", "weekend", "range"})


def _check_granularity(_inst: object, _attr: object, value: str) -> None:
    if value not in GRANULARITIES:
        raise ValueError(f"unknown granularity {value!r}")


@attrs.frozen
class TimeMention:
    """One resolved time expression.

    Attributes:
        phrase: The expression exactly as written (``text[span[0]:span[1]]``).
        span: Character offsets of the phrase in the text.
        start: Inclusive start, tz-aware, in the anchor's time zone.
        end: Exclusive end, tz-aware, always after ``start``.
        granularity: "day", "week", "month", "year", "weekend" or "range".
        alternative: For a bare month, day or weekday whose clause does not say
            whether it looks forward or back ("Japan in October!"), the coming
            occurrence as ``(start, end)``; ``start``/``end`` then hold the last
            one. ``None`` when the phrase has one reading.
    """

    phrase: str
    span: tuple[int, int]
    start: datetime
    end: datetime
    granularity: str = attrs.field(validator=_check_granularity)
    alternative: tuple[datetime, datetime] | None = None

    @property
    def readings(self) -> tuple[tuple[datetime, datetime], ...]:
        """Every candidate ``(start, end)``, earliest first: one, or two when undecided."""
        main = (self.start, self.end)
        return (main,) if self.alternative is None else (main, self.alternative)


_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "couple": 2,
    "few": 3,
}

def _number(raw: str) -> int:
    """Value of a count phrase: "3", "three", "a", "a couple of", "a few"."""
    key = " ".join(raw.casefold().split())
    if key.isdigit():
        return int(key)
    return _NUMBER_WORDS[key.removeprefix("a ").removesuffix(" of")]


# --------------------------------------------------------------------------- #
# Rules                                                                        #
# --------------------------------------------------------------------------- #

_MON = (
    r"(?P<mon>january|february|march|april|may|june|july|august|september|october|"
    r"november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
)
_FULL_MON = (
    r"(?P<mon>january|february|march|april|may|june|july|august|september|october|"
    r"november|december)"
)
_YEAR = r"(?P<y>\d{4})(?![\d%])"
_DAYNUM = r"(?P<d>\d{1,2})(?:st|nd|rd|th)?(?!\d)"
_NUM = (
    r"(?P<n>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|an|"
    r"a\s+couple\s+of|a\s+couple|couple\s+of|couple|a\s+few|few|a)"
)
_UNIT = r"(?P<unit>day|week|month|year)s?"
_WD = (
    r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"mon|tues|tue|wed|thurs|thur|thu|fri|sat|sun)"
)
_SEASON = r"(?P<season>spring|summer|fall|autumn|winter)"

_Handler = Callable[[re.Match[str], date], Interval | None]
_RULES: list[tuple[re.Pattern[str], _Handler]] = []


def _rule(pattern: str) -> Callable[[_Handler], _Handler]:
    """Register a handler for a case-insensitive, word-bounded pattern."""

    def register(fn: _Handler) -> _Handler:
        _RULES.append((re.compile(rf"(?<![\w-])(?:{pattern})(?![\w])", re.IGNORECASE), fn))
        return fn

    return register


def _month_of(m: re.Match[str]) -> int | None:
    """Month number; "may"/"march"/abbreviations must be capitalised (they are common words)."""
    raw = m.group("mon")
    low = raw.casefold()
    if not raw[0].isupper() and (low in {"may", "march"} or low not in FULL_MONTH_NAMES):
        return None
    return MONTH_NUMBERS[low]


@_rule(r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})")
def _iso(m: re.Match[str], anchor: date) -> Interval | None:
    y = int(m.group("y"))
    return day_interval(date(y, int(m.group("m")), int(m.group("d")))) if valid_year(y) else None


@_rule(rf"(?:the\s+)?{_DAYNUM}\s+(?:of\s+)?{_MON}\.?,?\s+{_YEAR}")
@_rule(rf"{_MON}\.?\s+(?:the\s+)?{_DAYNUM},?\s+{_YEAR}")
def _full_date(m: re.Match[str], anchor: date) -> Interval | None:
    month, y = _month_of(m), int(m.group("y"))
    if month is None or not valid_year(y):
        return None
    return day_interval(date(y, month, int(m.group("d"))))


@_rule(rf"(?:the\s+)?{_DAYNUM}\s+(?:of\s+)?{_MON}\.?")
@_rule(rf"{_MON}\.?\s+(?:the\s+)?{_DAYNUM}")
def _day_month(m: re.Match[str], anchor: date) -> Interval | None:
    month = _month_of(m)
    if month is None:
        return None
    day = int(m.group("d"))
    when = date(anchor.year, month, day)
    if when > anchor:
        # A bare date names the last one, as a bare month does (`_cued_month`): asked in
        # January, "on August 11" is last August, not the coming one; plans roll forward
        # again in `resolve_time_expressions`. A 29 February without a leap year before
        # it falls on the 28th.
        when = clamped(anchor.year - 1, month, day)
    return day_interval(when)


@_rule(rf"{_MON}\.?,?\s+(?:of\s+)?{_YEAR}")
def _month_year(m: re.Match[str], anchor: date) -> Interval | None:
    month, y = _month_of(m), int(m.group("y"))
    return month_interval(y, month) if month is not None and valid_year(y) else None


@_rule(rf"(?:the\s+)?{_SEASON}\s+(?:of\s+)?{_YEAR}")
def _season_year(m: re.Match[str], anchor: date) -> Interval | None:
    y = int(m.group("y"))
    return season_interval(m.group("season").casefold(), y) if valid_year(y) else None


@_rule(rf"(?P<rel>last|next|this\s+past|this\s+coming|this|past)\s+{_SEASON}")
def _relative_season(m: re.Match[str], anchor: date) -> Interval | None:
    season, rel = m.group("season").casefold(), " ".join(m.group("rel").casefold().split())
    candidates = [season_interval(season, y) for y in range(anchor.year - 2, anchor.year + 2)]
    if rel in {"last", "this past", "past"}:
        done = [c for c in candidates if c[1] <= anchor]
        return done[-1] if done else None
    if rel in {"next", "this coming"}:
        return next(c for c in candidates if c[0] > anchor)
    # "this summer": the season of the anchor's year (a winter Jan/Feb belongs to the previous one).
    year = anchor.year - 1 if season == "winter" and anchor.month <= 2 else anchor.year
    return season_interval(season, year)


@_rule(rf"(?P<cue>back\s+in|in|since|of|during|from)\s+{_YEAR}")
def _cued_year(m: re.Match[str], anchor: date) -> Interval | None:
    y = int(m.group("y"))
    if not valid_year(y):
        return None
    if m.group("cue").casefold() == "since" and y <= anchor.year:
        return date(y, 1, 1), anchor + timedelta(days=1), "range"
    return year_interval(y)


@_rule(
    r"(?P<rel>last|next|this\s+coming|this\s+past|this|back\s+in|in\s+early|in\s+late|"
    r"in\s+mid|in|during|since|early|late|mid|the\s+end\s+of|the\s+beginning\s+of|"
    rf"the\s+start\s+of|the\s+middle\s+of|the\s+month\s+of)[\s-]+{_FULL_MON}"
    # the year, when one follows: "during September 2023" is one phrase, longer than
    # "September 2023" alone, so without it the cue would win and drop the year
    rf"(?:,?\s+(?:of\s+)?{_YEAR})?"
)
def _cued_month(m: re.Match[str], anchor: date) -> Interval | None:
    raw = m.group("mon")
    if not raw[0].isupper():
        return None  # "in may" is too often the verb
    month = MONTH_NUMBERS[raw.casefold()]
    rel = " ".join(m.group("rel").casefold().split())
    y = anchor.year
    if m.group("y") is not None:
        y = int(m.group("y"))
        if not valid_year(y):
            return None
    elif rel == "last":
        y = anchor.year if month < anchor.month else anchor.year - 1
    elif rel in {"next", "this coming"}:
        y = anchor.year if month > anchor.month else anchor.year + 1
    elif month > anchor.month:
        y = anchor.year - 1
    if rel == "since":
        start = date(y, month, 1)
        return (start, anchor + timedelta(days=1), "range") if start <= anchor else None
    return month_interval(y, month)


@_rule(r"(?P<rel>this|last|next|the\s+previous|previous)\s+(?P<unit>week|month|year)")
def _relative_unit(m: re.Match[str], anchor: date) -> Interval | None:
    rel = m.group("rel").casefold().split()[-1]
    step = {"this": 0, "last": -1, "previous": -1, "next": 1}[rel]
    unit = m.group("unit").casefold()
    if unit == "week":
        return week_interval(anchor + timedelta(days=7 * step))
    if unit == "month":
        return month_interval(*add_months(anchor.year, anchor.month, step))
    return year_interval(anchor.year + step)


def _saturday_of_current_or_last(anchor: date) -> date:
    """The Saturday of the weekend containing ``anchor``, else of the last one."""
    return anchor - timedelta(days=(anchor.weekday() - 5) % 7)


def _last_weekend_saturday(anchor: date) -> date:
    """Saturday of the last weekend completed before ``anchor``'s weekend/week."""
    recent = _saturday_of_current_or_last(anchor)
    this = recent if anchor.weekday() >= 5 else recent + timedelta(days=7)
    return this - timedelta(days=7)


@_rule(r"(?P<rel>last|this\s+past|past|this\s+coming|this|next|over\s+the)\s+weekend")
def _relative_weekend(m: re.Match[str], anchor: date) -> Interval | None:
    rel = " ".join(m.group("rel").casefold().split())
    in_weekend = anchor.weekday() >= 5
    recent = _saturday_of_current_or_last(anchor)
    this = recent if in_weekend else recent + timedelta(days=7)
    if rel in {"last", "this past", "past"}:
        return weekend_interval(_last_weekend_saturday(anchor))
    if rel == "over the":
        return weekend_interval(recent)
    if rel == "next":
        return weekend_interval(this + timedelta(days=7))
    return weekend_interval(this)


@_rule(
    rf"(?:(?P<rel>last|next|this\s+coming|this\s+past|this|on|coming|past)\s+)?{_WD}"
    r"(?:\s+(?:morning|afternoon|evening|night))?"
)
def _weekday(m: re.Match[str], anchor: date) -> Interval | None:
    raw = m.group("wd")
    if raw.casefold() not in FULL_WEEKDAY_NAMES and (not m.group("rel") or not raw[0].isupper()):
        return None  # "sun", "sat", "wed" are words: abbreviations need a cue and a capital
    target = WEEKDAY_NUMBERS.get(raw.casefold().rstrip("."), 0)
    rel = " ".join((m.group("rel") or "").casefold().split())
    back = (anchor.weekday() - target) % 7  # days back to the most recent one, 0 = today
    if rel in {"last", "this past", "past"}:
        return day_interval(anchor - timedelta(days=back or 7))
    if rel in {"next", "this coming", "coming"}:
        ahead = (target - anchor.weekday()) % 7
        return day_interval(anchor + timedelta(days=ahead or 7))
    return day_interval(anchor - timedelta(days=back))


@_rule(
    r"the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|last\s+night|"
    r"today|tonight|this\s+(?:morning|afternoon|evening)|tomorrow"
)
def _relative_day(m: re.Match[str], anchor: date) -> Interval | None:
    phrase = " ".join(m.group(0).casefold().split())
    offset = {
        "the day before yesterday": -2,
        "the day after tomorrow": 2,
        "yesterday": -1,
        "last night": -1,
        "tomorrow": 1,
    }.get(phrase, 0)
    return day_interval(anchor + timedelta(days=offset))


@_rule(rf"{_NUM}\s+(?P<unit>day|week|weekend|month|year)s?\s+(?:ago|back)")
def _ago(m: re.Match[str], anchor: date) -> Interval | None:
    n, unit = _number(m.group("n")), m.group("unit").casefold()
    if unit == "weekend":
        # "a weekend ago" is last weekend; each further one is a week earlier.
        return weekend_interval(_last_weekend_saturday(anchor) - timedelta(days=7 * (n - 1)))
    return shifted_interval(anchor, -n, unit)


@_rule(rf"in\s+{_NUM}\s+{_UNIT}(?!\s+ago)")
def _in_future(m: re.Match[str], anchor: date) -> Interval | None:
    return shifted_interval(anchor, _number(m.group("n")), m.group("unit").casefold())


@_rule(
    rf"(?:the\s+)?(?P<dir>past|last|next)\s+{_NUM}\s+{_UNIT}"
    r"|(?:the\s+)?past\s+(?P<unit2>day|week|month|year)s?"
    # "in the last year" is the twelve months before now, as "the past year" is; "last
    # year" alone is the calendar year, and "the last week of May" is no span before now
    r"|the\s+last\s+(?P<unit3>day|week|month|year)(?!\s+of\b)"
)
def _rolling(m: re.Match[str], anchor: date) -> Interval | None:
    n = _number(m.group("n")) if m.group("n") else 1
    unit = (m.group("unit") or m.group("unit2") or m.group("unit3")).casefold()
    if (m.group("dir") or "").casefold() == "next":
        # "the next few months": from today to the same day N units ahead.
        return anchor, offset(anchor, n, unit) + timedelta(days=1), "range"
    return offset(anchor, -n, unit), anchor + timedelta(days=1), "range"


def _roll_forward(handler: _Handler, m: re.Match[str], iv: Interval) -> Interval:
    """The next occurrence of a bare month, day or weekday instead of the last one."""
    start, end, gran = iv
    if handler is _weekday:
        return start + timedelta(days=7), end + timedelta(days=7), gran
    if gran == "month":
        y, mo = add_months(start.year, start.month, 12)
        return month_interval(y, mo)
    return day_interval(clamped(start.year + 1, start.month, start.day))


def _rollable(handler: _Handler, m: re.Match[str]) -> bool:
    if handler not in (_cued_month, _day_month, _weekday) or m.groupdict().get("y"):
        return False  # a stated year is never rolled ("in September 2023")
    rel = " ".join((m.groupdict().get("rel") or "").casefold().split())
    return rel not in {"last", "since", "back in", "this past", "past"}


_Found = tuple[int, int, Interval, Interval | None]


def _disjoint(found: list[_Found], size: int) -> list[_Found]:
    """Each (non-empty) candidate in turn unless it overlaps one already kept; kept ones in
    text order.

    Kept characters are marked in a bitmap of the text's ``size``: each candidate is
    checked and marked in time proportional to its own length (comparing it with
    every kept span made texts with many dates quadratic).
    """
    taken = bytearray(size)
    chosen: list[_Found] = []
    for cand in found:
        start, end = cand[0], cand[1]
        if 1 in taken[start:end]:
            continue
        taken[start:end] = b"\x01" * (end - start)
        chosen.append(cand)
    chosen.sort(key=lambda f: f[0])
    return chosen


def resolve_time_expressions(
    text: str, anchor: datetime, *, tense: str = "auto"
) -> list[TimeMention]:
    """Find time expressions in ``text`` and resolve them against ``anchor``.

    Supported: today/tonight/yesterday/last night/tomorrow/the day before
    yesterday; this/last/next week|month|year; this/last/next weekend;
    weekday names (optionally with last/next/this/on); "N days/weeks/months/
    years ago" (or "back"), "N weekends ago" and "in N ..." (digits,
    one..twelve, a/an, a couple of, a few); "the past/next N days/...";
    explicit dates ("8 May 2023", "May 8th, 2023", "May 8th", "2023-05-08",
    "May 2023"); years with a cue ("in 2022", "since 2019", "back in 2010");
    month names with a cue ("in March", "last May", "since June"); seasons
    ("the summer of 2022", "last summer"). A bare month, day or weekday
    resolves to the coming one when its clause looks forward ("will", "'ll",
    "going to", "plan to", "I'm moving", "due", "booked" …), to the most
    recent one when it looks back ("went", "was", "have seen", "ago"), and to
    both (``TimeMention.alternative``) when it does not say. Overlapping
    candidates are resolved longest-first. See the module docstring for the
    calendar conventions.

    Args:
        text: Arbitrary text.
        anchor: The moment the text was written; a naive value is taken as UTC.
        tense: How a bare month, day or weekday is read: ``"auto"`` from its
            clause, ``"past"`` always the last one, ``"future"`` always the next
            one. Questions are ambiguous ("What is she doing in September?"):
            resolve both ways and keep both readings.

    Returns:
        The mentions in text order; every interval is tz-aware (anchor's zone)
        with ``start < end``.
    """
    if tense not in ("auto", "past", "future"):
        raise ValueError(f"tense must be 'auto', 'past' or 'future', got {tense!r}")
    tz: tzinfo = anchor.tzinfo or UTC
    day = anchor.date()
    found: list[_Found] = []
    tenses = TenseReader(text)
    for pattern, handler in _RULES:
        for m in pattern.finditer(text):
            try:
                interval = handler(m, day)
            except (ValueError, OverflowError, KeyError, StopIteration):
                interval = None  # impossible dates such as "31 February 2023"
            if interval is None or not interval[0] < interval[1]:
                continue
            other: Interval | None = None
            # A bare "in September" / "on Saturday" / "May 8th" is resolved to the last one;
            # said of a plan it means the coming one ("I'll cycle the Douro in September"),
            # and where the clause does not say, both are kept.
            if interval[1] <= day and _rollable(handler, m):
                direction = tense if tense != "auto" else tenses.direction(m.start(), m.end())
                if direction == FUTURE:
                    interval = _roll_forward(handler, m, interval)
                elif direction == BOTH:
                    other = _roll_forward(handler, m, interval)
            found.append((m.start(), m.end(), interval, other))
    # Longest match wins ("the day before yesterday" over "yesterday").
    found.sort(key=lambda f: (-(f[1] - f[0]), f[0]))
    chosen = _disjoint(found, len(text))

    def at(d: date) -> datetime:
        return datetime(d.year, d.month, d.day, tzinfo=tz)

    return [
        TimeMention(text[s:e], (s, e), at(iv[0]), at(iv[1]), iv[2],
                    None if alt is None else (at(alt[0]), at(alt[1])))
        for s, e, iv, alt in chosen
    ]
