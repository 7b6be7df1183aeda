"""Calendar words and the one session-stamp parser (the toolkit's and the LoCoMo loader's)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile_text.dates import (
    FULL_MONTH_NAMES,
    FULL_WEEKDAY_NAMES,
    MONTH_NUMBERS,
    WEEKDAY_NUMBERS,
    parse_session_datetime,
)


@pytest.mark.parametrize(
    ("stamp", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37, tzinfo=UTC)),
        ("12:05 am on 1 January, 2024", datetime(2024, 1, 1, 0, 5, tzinfo=UTC)),
        ("12:06 am on 11 November, 2022", datetime(2022, 11, 11, 0, 6, tzinfo=UTC)),
        ("12:30 pm on 2 Feb 2022", datetime(2022, 2, 2, 12, 30, tzinfo=UTC)),
        ("12:45 pm on 8 May, 2022", datetime(2022, 5, 8, 12, 45, tzinfo=UTC)),
        ("  7:00 PM on 31 December, 1999 ", datetime(1999, 12, 31, 19, 0, tzinfo=UTC)),
        ("9:02 AM on 22 November 2023", datetime(2023, 11, 22, 9, 2, tzinfo=UTC)),
        ("7:05 p.m. on 1 Jan, 2024", datetime(2024, 1, 1, 19, 5, tzinfo=UTC)),
        ("14:30 on 2 Sept 2023", datetime(2023, 9, 2, 14, 30, tzinfo=UTC)),
        ("8 May 2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("8 May, 2023", datetime(2023, 5, 8, tzinfo=UTC)),
        ("  29 February, 2024 ", datetime(2024, 2, 29, tzinfo=UTC)),
    ],
)
def test_parse_session_datetime(stamp: str, expected: datetime) -> None:
    parsed = parse_session_datetime(stamp)
    assert parsed == expected
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "yesterday",
        "May 8, 2023",
        "2023-05-08",
        "1:56 pm 8 May 2023",
        "13:56 pm on 8 May, 2023",
        "1:56 pm on 31 June, 2023",
        "1:56 pm on 30 February, 2023",
        "1:56 pm on 8 Mayo, 2023",
        "1:56 pm on 8 Mai, 2023",
        "1:61 am on 8 May, 2023",
    ],
)
def test_parse_session_datetime_rejects_and_quotes_the_stamp(bad: str) -> None:
    with pytest.raises(ValueError, match="session date-time") as info:
        parse_session_datetime(bad)
    assert repr(bad) in str(info.value)


@given(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31)))
def test_a_written_stamp_parses_back(moment: datetime) -> None:
    """Any minute written as "H:MM am|pm on D Month, YYYY" parses back to that minute, in UTC."""
    moment = moment.replace(second=0, microsecond=0)
    hour = moment.hour % 12 or 12
    stamp = (f"{hour}:{moment.minute:02d} {'am' if moment.hour < 12 else 'pm'} on "
             f"{moment.day} {moment:%B}, {moment.year}")
    assert parse_session_datetime(stamp) == moment.replace(tzinfo=UTC)


def test_month_table_spells_each_month_once_in_full() -> None:
    assert len(FULL_MONTH_NAMES) == 12
    by_number = {MONTH_NUMBERS[name]: name for name in FULL_MONTH_NAMES}
    assert [by_number[n] for n in range(1, 13)][:3] == ["january", "february", "march"]
    for name, number in MONTH_NUMBERS.items():  # an abbreviation starts its month's name
        assert by_number[number].startswith(name)


def test_weekday_table_counts_from_monday() -> None:
    assert len(FULL_WEEKDAY_NAMES) == 7
    assert WEEKDAY_NUMBERS["monday"] == WEEKDAY_NUMBERS["mon"] == 0
    assert WEEKDAY_NUMBERS["sunday"] == WEEKDAY_NUMBERS["sun"] == 6
    for name, number in WEEKDAY_NUMBERS.items():
        full = next(n for n in FULL_WEEKDAY_NAMES if WEEKDAY_NUMBERS[n] == number)
        assert full.startswith(name)
