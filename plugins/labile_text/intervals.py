"""Calendar arithmetic for `labile_text.timeparse`: whole-day intervals and date offsets.

An interval is ``(start, end, granularity)``, half-open ``[start, end)`` in
whole days. Weeks start on Monday; seasons are meteorological, northern
hemisphere (they start in March, June, September and December); month
offsets clamp the day to the target month's length (31 January plus one
month is 28 or 29 February).
"""

from __future__ import annotations

import calendar
from datetime import date, timedelta

__all__ = [
    "SEASON_START", "Interval", "add_months", "clamped", "day_interval", "month_interval",
    "months_from", "offset", "season_interval", "shifted_interval", "valid_year",
    "week_interval", "weekend_interval", "year_interval",
]

#: The first month of each season.
SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


#: ``[start, end)`` in whole days, and the granularity of the interval.
Interval = tuple[date, date, str]


def add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    """``(year, month)`` moved by ``delta`` months."""
    y, m0 = divmod(year * 12 + (month - 1) + delta, 12)
    return y, m0 + 1


def month_interval(year: int, month: int) -> Interval:
    ny, nm = add_months(year, month, 1)
    return date(year, month, 1), date(ny, nm, 1), "month"


def year_interval(year: int) -> Interval:
    return date(year, 1, 1), date(year + 1, 1, 1), "year"


def day_interval(d: date) -> Interval:
    return d, d + timedelta(days=1), "day"


def week_interval(d: date) -> Interval:
    monday = d - timedelta(days=d.weekday())
    return monday, monday + timedelta(days=7), "week"


def weekend_interval(saturday: date) -> Interval:
    return saturday, saturday + timedelta(days=2), "weekend"


def season_interval(season: str, year: int) -> Interval:
    start = date(year, SEASON_START[season], 1)
    ey, em = add_months(year, SEASON_START[season], 3)
    return start, date(ey, em, 1), "range"


def valid_year(y: int) -> bool:
    return 1900 <= y <= 2100


def clamped(year: int, month: int, day: int) -> date:
    """``date(year, month, day)`` with the day clamped to the month's length."""
    return date(year, month, min(day, calendar.monthrange(year, month)[1]))


def shifted_interval(anchor: date, n: int, unit: str) -> Interval:
    """The day/week/month/year interval ``n`` units away from ``anchor``."""
    if unit == "day":
        return day_interval(anchor + timedelta(days=n))
    if unit == "week":
        return week_interval(anchor + timedelta(days=7 * n))
    if unit == "month":
        return month_interval(*add_months(anchor.year, anchor.month, n))
    return year_interval(anchor.year + n)


def months_from(anchor: date, months: int) -> date:
    """The same day of the month ``months`` away, clamped to the month's length."""
    y, mo = add_months(anchor.year, anchor.month, months)
    return clamped(y, mo, anchor.day)


def offset(anchor: date, n: int, unit: str) -> date:
    """``anchor`` moved by ``n`` days/weeks/months/years (negative = back)."""
    if unit in {"day", "week"}:
        return anchor + timedelta(days=n * (7 if unit == "week" else 1))
    return months_from(anchor, n * (12 if unit == "year" else 1))
