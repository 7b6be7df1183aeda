"""Relative time expressions resolved to intervals."""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile_text import TimeMention, resolve_time_expressions

# Monday 8 May 2023, 13:56 UTC (a LoCoMo session stamp).
MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
SATURDAY = datetime(2023, 5, 13, 10, 0, tzinfo=UTC)
NEW_YEAR = datetime(2023, 1, 3, 9, 0, tzinfo=UTC)  # a Tuesday


def _resolve(text: str, anchor: datetime = MONDAY) -> list[tuple[str, date, date, str]]:
    return [
        (m.phrase, m.start.date(), m.end.date(), m.granularity)
        for m in resolve_time_expressions(text, anchor)
    ]


def _one(text: str, anchor: datetime = MONDAY) -> tuple[date, date, str]:
    found = _resolve(text, anchor)
    assert len(found) == 1, found
    return found[0][1:]


D = date


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("today", (D(2023, 5, 8), D(2023, 5, 9), "day")),
        ("tonight", (D(2023, 5, 8), D(2023, 5, 9), "day")),
        ("yesterday", (D(2023, 5, 7), D(2023, 5, 8), "day")),
        ("last night", (D(2023, 5, 7), D(2023, 5, 8), "day")),
        ("the day before yesterday", (D(2023, 5, 6), D(2023, 5, 7), "day")),
        ("tomorrow", (D(2023, 5, 9), D(2023, 5, 10), "day")),
        ("this week", (D(2023, 5, 8), D(2023, 5, 15), "week")),
        ("last week", (D(2023, 5, 1), D(2023, 5, 8), "week")),
        ("next week", (D(2023, 5, 15), D(2023, 5, 22), "week")),
        ("this month", (D(2023, 5, 1), D(2023, 6, 1), "month")),
        ("last month", (D(2023, 4, 1), D(2023, 5, 1), "month")),
        ("next month", (D(2023, 6, 1), D(2023, 7, 1), "month")),
        ("this year", (D(2023, 1, 1), D(2024, 1, 1), "year")),
        ("last year", (D(2022, 1, 1), D(2023, 1, 1), "year")),
        ("next year", (D(2024, 1, 1), D(2025, 1, 1), "year")),
        ("last weekend", (D(2023, 5, 6), D(2023, 5, 8), "weekend")),
        ("this weekend", (D(2023, 5, 13), D(2023, 5, 15), "weekend")),
        ("next weekend", (D(2023, 5, 20), D(2023, 5, 22), "weekend")),
        ("last Saturday", (D(2023, 5, 6), D(2023, 5, 7), "day")),
        ("on Saturday", (D(2023, 5, 6), D(2023, 5, 7), "day")),
        ("this Saturday", (D(2023, 5, 6), D(2023, 5, 7), "day")),
        ("next Saturday", (D(2023, 5, 13), D(2023, 5, 14), "day")),
        ("this coming Friday", (D(2023, 5, 12), D(2023, 5, 13), "day")),
        ("Monday morning", (D(2023, 5, 8), D(2023, 5, 9), "day")),
        ("last Fri", (D(2023, 5, 5), D(2023, 5, 6), "day")),
        ("3 days ago", (D(2023, 5, 5), D(2023, 5, 6), "day")),
        ("two weeks ago", (D(2023, 4, 24), D(2023, 5, 1), "week")),
        ("a week ago", (D(2023, 5, 1), D(2023, 5, 8), "week")),
        ("a couple of months ago", (D(2023, 3, 1), D(2023, 4, 1), "month")),
        ("a few years ago", (D(2020, 1, 1), D(2021, 1, 1), "year")),
        ("twelve months ago", (D(2022, 5, 1), D(2022, 6, 1), "month")),
        ("in 2 weeks", (D(2023, 5, 22), D(2023, 5, 29), "week")),
        ("in a few days", (D(2023, 5, 11), D(2023, 5, 12), "day")),
        ("8 May 2023", (D(2023, 5, 8), D(2023, 5, 9), "day")),
        ("the 8th of May, 2023", (D(2023, 5, 8), D(2023, 5, 9), "day")),
        ("May 8, 2023", (D(2023, 5, 8), D(2023, 5, 9), "day")),
        ("May 8th", (D(2023, 5, 8), D(2023, 5, 9), "day")),
        ("2023-05-01", (D(2023, 5, 1), D(2023, 5, 2), "day")),
        ("May 2023", (D(2023, 5, 1), D(2023, 6, 1), "month")),
        ("in 2022", (D(2022, 1, 1), D(2023, 1, 1), "year")),
        ("back in 2019", (D(2019, 1, 1), D(2020, 1, 1), "year")),
        ("since 2020", (D(2020, 1, 1), D(2023, 5, 9), "range")),
        ("last May", (D(2022, 5, 1), D(2022, 6, 1), "month")),
        ("in March", (D(2023, 3, 1), D(2023, 4, 1), "month")),
        ("in June", (D(2022, 6, 1), D(2022, 7, 1), "month")),
        ("next June", (D(2023, 6, 1), D(2023, 7, 1), "month")),
        ("the summer of 2022", (D(2022, 6, 1), D(2022, 9, 1), "range")),
        ("last summer", (D(2022, 6, 1), D(2022, 9, 1), "range")),
        ("this winter", (D(2023, 12, 1), D(2024, 3, 1), "range")),
        ("the past two weeks", (D(2023, 4, 24), D(2023, 5, 9), "range")),
        ("the next 3 days", (D(2023, 5, 8), D(2023, 5, 12), "range")),
        ("two weekends ago", (D(2023, 4, 29), D(2023, 5, 1), "weekend")),
        ("a few years back", (D(2020, 1, 1), D(2021, 1, 1), "year")),
        ("over the weekend", (D(2023, 5, 6), D(2023, 5, 8), "weekend")),
    ],
)
def test_resolve_relative_to_monday(text: str, expected: tuple[date, date, str]) -> None:
    assert _one(text) == expected


def test_year_boundaries() -> None:
    assert _one("last month", NEW_YEAR) == (D(2022, 12, 1), D(2023, 1, 1), "month")
    assert _one("next month", datetime(2022, 12, 20, tzinfo=UTC)) == (
        D(2023, 1, 1),
        D(2023, 2, 1),
        "month",
    )
    assert _one("in December", NEW_YEAR) == (D(2022, 12, 1), D(2023, 1, 1), "month")
    assert _one("last week", NEW_YEAR) == (D(2022, 12, 26), D(2023, 1, 2), "week")
    assert _one("yesterday", datetime(2023, 1, 1, tzinfo=UTC)) == (
        D(2022, 12, 31),
        D(2023, 1, 1),
        "day",
    )
    assert _one("two months ago", NEW_YEAR) == (D(2022, 11, 1), D(2022, 12, 1), "month")
    assert _one("this winter", NEW_YEAR) == (D(2022, 12, 1), D(2023, 3, 1), "range")
    assert _one("last winter", NEW_YEAR) == (D(2021, 12, 1), D(2022, 3, 1), "range")


def test_month_lengths() -> None:
    march_31 = datetime(2023, 3, 31, tzinfo=UTC)
    assert _one("last month", march_31) == (D(2023, 2, 1), D(2023, 3, 1), "month")
    assert _one("the past month", march_31) == (D(2023, 2, 28), D(2023, 4, 1), "range")
    assert _one("February 29, 2024", march_31) == (D(2024, 2, 29), D(2024, 3, 1), "day")
    assert _resolve("February 30, 2023", march_31) == []  # not a real day


def test_weekday_anchored_on_that_weekday() -> None:
    assert _one("last Saturday", SATURDAY) == (D(2023, 5, 6), D(2023, 5, 7), "day")
    assert _one("Saturday", SATURDAY) == (D(2023, 5, 13), D(2023, 5, 14), "day")
    assert _one("next Saturday", SATURDAY) == (D(2023, 5, 20), D(2023, 5, 21), "day")
    assert _one("this weekend", SATURDAY) == (D(2023, 5, 13), D(2023, 5, 15), "weekend")
    assert _one("last weekend", SATURDAY) == (D(2023, 5, 6), D(2023, 5, 8), "weekend")


def test_phrases_and_spans_are_verbatim() -> None:
    text = "Yesterday I met Anna, and Last Sunday we hiked."
    found = resolve_time_expressions(text, MONDAY)
    assert [m.phrase for m in found] == ["Yesterday", "Last Sunday"]
    for m in found:
        assert text[m.span[0] : m.span[1]] == m.phrase


def test_unresolved_expressions() -> None:
    assert _resolve("I've been busy recently and lately too, the other day.") == []
    assert _resolve("We fed 2000 people and 2022 was tough.") == []
    assert _resolve("You may go. I march on. Sun is out; we wed.") == []
    assert _resolve("Saturdays are fun.") == []
    assert _resolve("") == []


def test_longest_match_wins() -> None:
    assert [m[0] for m in _resolve("the day before yesterday")] == ["the day before yesterday"]
    # the cue and the year make one phrase (the cue used to win and drop the year)
    assert [m[0] for m in _resolve("in May 2023")] == ["in May 2023"]


def test_timezone_of_anchor_is_kept() -> None:
    tz = timezone(timedelta(hours=-5))
    anchor = datetime(2023, 5, 8, 23, 30, tzinfo=tz)
    (m,) = resolve_time_expressions("yesterday", anchor)
    assert m.start == datetime(2023, 5, 7, tzinfo=tz)
    assert m.end == datetime(2023, 5, 8, tzinfo=tz)


def test_naive_anchor_is_utc() -> None:
    (m,) = resolve_time_expressions("today", datetime(2023, 5, 8, 12))
    assert m.start.tzinfo is UTC


def test_time_mention_validates_granularity() -> None:
    with pytest.raises(ValueError, match="granularity"):
        TimeMention("x", (0, 1), MONDAY, MONDAY + timedelta(days=1), "decade")


@given(
    st.lists(
        st.sampled_from(
            [
                "last ",
                "next ",
                "this ",
                "in ",
                "ago ",
                "the ",
                "day ",
                "week ",
                "month ",
                "year ",
                "weekend ",
                "Saturday ",
                "May ",
                "March ",
                "2022 ",
                "8 ",
                "31 ",
                "two ",
                "a few ",
                "days ",
                "weeks ",
                "months ",
                "years ",
                "summer ",
                "winter ",
                "of ",
                "since ",
                "yesterday ",
                "tomorrow ",
                ", ",
                "th ",
            ]
        ),
        max_size=25,
    ).map("".join),
    st.datetimes(
        min_value=datetime(1990, 1, 1), max_value=datetime(2090, 12, 31), timezones=st.just(UTC)
    ),
)
def test_intervals_are_well_formed(text: str, anchor: datetime) -> None:
    """Mentions are non-empty tz-aware intervals, in text order, each phrase its own span."""
    prev_end = 0
    for m in resolve_time_expressions(text, anchor):
        assert m.start < m.end
        assert m.start.tzinfo is not None and m.end.tzinfo is not None
        assert text[m.span[0] : m.span[1]] == m.phrase
        assert m.span[0] >= prev_end
        prev_end = m.span[1]


@given(st.text(), st.datetimes(timezones=st.just(UTC)))
def test_resolver_is_total_on_arbitrary_text(text: str, anchor: datetime) -> None:
    """The resolver never fails on any text and anchor, and every interval is non-empty."""
    for m in resolve_time_expressions(text, anchor):
        assert m.start < m.end


@pytest.mark.parametrize(
    ("text", "expected_start"),
    [
        ("I'll do a cycling tour in September instead.", datetime(2024, 9, 1, tzinfo=UTC)),
        ("I went cycling in September.", datetime(2023, 9, 1, tzinfo=UTC)),
        ("We are going to meet on Saturday.", datetime(2024, 5, 18, tzinfo=UTC)),
        ("We met on Saturday.", datetime(2024, 5, 11, tzinfo=UTC)),
        # training for an event names the coming one (said in May: next March)
        ("I'm training for the half marathon in March.", datetime(2025, 3, 1, tzinfo=UTC)),
        ("Next year I will fly out on May 2nd.", datetime(2025, 5, 2, tzinfo=UTC)),
        # a bare date later in the year than the anchor: last year's, or the coming one
        ("I ran my first race on August 11.", datetime(2023, 8, 11, tzinfo=UTC)),
        ("I'm going to run a race on August 11.", datetime(2024, 8, 11, tzinfo=UTC)),
        ("We met on the 20th of May.", datetime(2023, 5, 20, tzinfo=UTC)),
    ],
)
def test_bare_dates_follow_the_tense(text: str, expected_start: datetime) -> None:
    """Plans point forward, reports point back (anchor: Tuesday 14 May 2024)."""
    anchor = datetime(2024, 5, 14, 20, 45, tzinfo=UTC)
    mentions = [m for m in resolve_time_expressions(text, anchor) if m.granularity != "year"]
    assert mentions[0].start == expected_start


def test_tense_can_be_forced_either_way() -> None:
    anchor = datetime(2024, 5, 14, 20, 45, tzinfo=UTC)
    question = "What is Maya doing in September?"
    (past,) = resolve_time_expressions(question, anchor, tense="past")
    (future,) = resolve_time_expressions(question, anchor, tense="future")
    assert past.start == datetime(2023, 9, 1, tzinfo=UTC)
    assert future.start == datetime(2024, 9, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="tense"):
        resolve_time_expressions(question, anchor, tense="later")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a cued month keeps the year that follows it (the cue made the longer match)
        ("during September 2023", (D(2023, 9, 1), D(2023, 10, 1), "month")),
        ("since September 2021", (D(2021, 9, 1), D(2023, 10, 7), "range")),
        ("in early May 2022", (D(2022, 5, 1), D(2022, 6, 1), "month")),
        # "the last year" is the twelve months before now; "last year" the calendar year
        ("in the last year", (D(2022, 10, 6), D(2023, 10, 7), "range")),
        ("over the last month", (D(2023, 9, 6), D(2023, 10, 7), "range")),
        ("last year", (D(2022, 1, 1), D(2023, 1, 1), "year")),
    ],
)
def test_cued_months_with_a_year_and_the_last_unit(text: str,
                                                   expected: tuple[date, date, str]) -> None:
    assert _one(text, datetime(2023, 10, 6, 9, 0, tzinfo=UTC)) == expected


def test_a_bare_day_asked_in_the_past_is_never_after_the_question() -> None:
    """A past-tense question about "August 11" asked in January means last August."""
    anchor = datetime(2024, 1, 6, 9, 0, tzinfo=UTC)
    (day,) = resolve_time_expressions("What did she do on August 11?", anchor, tense="past")
    (ahead,) = resolve_time_expressions("What will she do on August 11?", anchor, tense="future")
    assert (day.start, day.end) == (datetime(2023, 8, 11, tzinfo=UTC),
                                    datetime(2023, 8, 12, tzinfo=UTC))
    assert ahead.start == datetime(2024, 8, 11, tzinfo=UTC)


@given(st.dates(min_value=date(1950, 1, 1), max_value=date(2090, 12, 31)),
       st.integers(min_value=1, max_value=12), st.integers(min_value=1, max_value=28))
def test_a_bare_day_in_the_past_tense_is_the_last_one(anchor_day: date, month: int,
                                                       day: int) -> None:
    """Read in the past tense, a bare day is on or before the anchor, less than a year back."""
    anchor = datetime(anchor_day.year, anchor_day.month, anchor_day.day, 12, tzinfo=UTC)
    text = f"It happened on {calendar.month_name[month]} {day}."
    (mention,) = resolve_time_expressions(text, anchor, tense="past")
    assert mention.start <= anchor < mention.start + timedelta(days=366)
