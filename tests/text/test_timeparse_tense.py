"""Bare months, days and weekdays follow the tense of their clause.

A plan, promise or schedule names the coming one, a report the last one, and a
clause that does not say keeps both readings (``TimeMention.alternative``).
"""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile_text.tense import BOTH, FUTURE, PAST, TenseReader
from labile_text.timeparse import TimeMention, resolve_time_expressions

FRI = datetime(2025, 2, 21, 15, 30, tzinfo=UTC)  # a Friday in February
DEC = datetime(2024, 12, 10, 9, 0, tzinfo=UTC)  # a Tuesday in December
MAY = datetime(2024, 5, 14, 20, 45, tzinfo=UTC)  # a Tuesday in May

D = date


def _readings(m: TimeMention) -> tuple[date, date | None]:
    return m.start.date(), None if m.alternative is None else m.alternative[0].date()


# (sentence, said at, [(first day of each mention, first day of its other reading or None)])
CASES: list[tuple[str, datetime, list[tuple[date, date | None]]]] = [
    # plans, promises, schedules: the coming one
    ("I start on April 7.", FRI, [(D(2025, 4, 7), None)]),
    ("I start my new job on April 7.", FRI, [(D(2025, 4, 7), None)]),
    ("Our lease ends in June.", FRI, [(D(2025, 6, 1), None)]),
    ("New job, starting September 15.", FRI, [(D(2025, 9, 15), None)]),
    ("The report is due in May.", FRI, [(D(2025, 5, 1), None)]),
    ("We're moving in late March.", FRI, [(D(2025, 3, 1), None)]),
    ("I'll fly to Lisbon in May.", FRI, [(D(2025, 5, 1), None)]),
    ("We're flying to Tokyo in April.", FRI, [(D(2025, 4, 1), None)]),
    ("I'm going to visit my parents in June.", FRI, [(D(2025, 6, 1), None)]),
    ("I'm thinking about a trip to Peru in November.", FRI, [(D(2025, 11, 1), None)]),
    ("Can't wait for the concert in March!", FRI, [(D(2025, 3, 1), None)]),
    ("The surgery is scheduled for March 3.", FRI, [(D(2025, 3, 3), None)]),
    ("Planning to run a marathon in October.", FRI, [(D(2025, 10, 1), None)]),
    ("I hope to finish the thesis in September.", FRI, [(D(2025, 9, 1), None)]),
    ("I need to renew my passport in April.", FRI, [(D(2025, 4, 1), None)]),
    ("My sister might come over in July.", FRI, [(D(2025, 7, 1), None)]),
    ("I'm so excited for the trip in June.", FRI, [(D(2025, 6, 1), None)]),
    ("I'm interested in the course that starts in September.", FRI, [(D(2025, 9, 1), None)]),
    ("I've been training for the half marathon in May.", FRI, [(D(2025, 5, 1), None)]),
    ("We're getting married on June 8.", FRI, [(D(2025, 6, 8), None)]),
    ("Booked the flight to Lisbon on May 3.", FRI, [(D(2025, 5, 3), None)]),
    ("I'll call her on Monday.", FRI, [(D(2025, 2, 24), None)]),
    ("Mom is coming to visit on Sunday.", FRI, [(D(2025, 2, 23), None)]),
    ("I'll finish the painting on Sunday.", FRI, [(D(2025, 2, 23), None)]),
    # reports: the last one
    ("I started on April 7.", FRI, [(D(2024, 4, 7), None)]),
    ("We moved in late March.", FRI, [(D(2024, 3, 1), None)]),
    ("I flew to Lisbon in May.", FRI, [(D(2024, 5, 1), None)]),
    ("She visited us in October.", FRI, [(D(2024, 10, 1), None)]),
    ("I used to swim every morning in July.", FRI, [(D(2024, 7, 1), None)]),
    ("Last year my sister came over in July.", FRI,
     [(D(2024, 1, 1), None), (D(2024, 7, 1), None)]),
    ("The trip in June was amazing.", FRI, [(D(2024, 6, 1), None)]),
    ("We got married on June 8.", FRI, [(D(2024, 6, 8), None)]),
    ("I've been to Japan in October.", FRI, [(D(2024, 10, 1), None)]),
    ("I called her on Monday.", FRI, [(D(2025, 2, 17), None)]),
    ("I finished the painting on Sunday.", FRI, [(D(2025, 2, 16), None)]),
    ("Due to the rain we stayed home on Saturday.", FRI, [(D(2025, 2, 15), None)]),
    # each clause on its own; the nearest cue governs
    ("I moved in March and I'll start in April.", FRI,
     [(D(2024, 3, 1), None), (D(2025, 4, 1), None)]),
    ("I ran Boston in April, but I'm running Chicago in October.", FRI,
     [(D(2024, 4, 1), None), (D(2025, 10, 1), None)]),
    ("Yesterday I booked flights to Japan in October.", FRI,
     [(D(2025, 2, 20), None), (D(2025, 10, 1), None)]),
    # undecided: both readings, the last one first
    ("Japan in October!", FRI, [(D(2024, 10, 1), D(2025, 10, 1))]),
    ("I was going to visit my parents in June.", FRI, [(D(2024, 6, 1), D(2025, 6, 1))]),
    ("I wanted to see the fjords in August.", FRI, [(D(2024, 8, 1), D(2025, 8, 1))]),
    ("Our anniversary is on June 12.", FRI, [(D(2024, 6, 12), D(2025, 6, 12))]),
    ("The photo is from our trip in June.", FRI, [(D(2024, 6, 1), D(2025, 6, 1))]),
    ("Dinner with Sam on Monday.", FRI, [(D(2025, 2, 17), D(2025, 2, 24))]),
    ("I've got a dentist appointment on Monday.", FRI, [(D(2025, 2, 17), D(2025, 2, 24))]),
    # said in December about January (and about December itself)
    ("I'll start the new job in January.", DEC, [(D(2025, 1, 1), None)]),
    ("I'm going skiing in January.", DEC, [(D(2025, 1, 1), None)]),
    ("I started the new job in January.", DEC, [(D(2024, 1, 1), None)]),
    ("We went skiing in January.", DEC, [(D(2024, 1, 1), None)]),
    ("I'll see you in December.", DEC, [(D(2024, 12, 1), None)]),
    ("The party on December 31 will be fun.", DEC, [(D(2024, 12, 31), None)]),
    ("The party on December 31 was fun.", DEC, [(D(2023, 12, 31), None)]),
    # "in May" said in May: this May, whichever the tense, with one reading
    ("The festival is in May.", MAY, [(D(2024, 5, 1), None)]),
    ("We went to the festival in May.", MAY, [(D(2024, 5, 1), None)]),
    ("We'll go to the festival in May.", MAY, [(D(2024, 5, 1), None)]),
    # "this" / "next" / "last" Friday and a bare Friday, said on a Friday; a day that is today
    ("Let's meet this Friday.", FRI, [(D(2025, 2, 21), None)]),
    ("Let's meet next Friday.", FRI, [(D(2025, 2, 28), None)]),
    ("We met last Friday.", FRI, [(D(2025, 2, 14), None)]),
    ("I'm seeing the dentist on Friday.", FRI, [(D(2025, 2, 21), None)]),
    ("I saw the dentist on Friday.", FRI, [(D(2025, 2, 21), None)]),
    ("My birthday is on February 21.", FRI, [(D(2025, 2, 21), None)]),
    ("I'll hand it in on February 21.", FRI, [(D(2025, 2, 21), None)]),
    # a stated year or a "last"/"since" is never moved
    ("I'll frame the photo from June 2023.", FRI, [(D(2023, 6, 1), None)]),
    ("We're finally back to normal since March.", MAY, [(D(2024, 3, 1), None)]),
]


@pytest.mark.parametrize(("text", "said", "expected"), CASES,
                         ids=[f"{c[0]}@{c[1]:%Y-%m-%d}" for c in CASES])
def test_bare_dates_follow_the_clause(text: str, said: datetime,
                                      expected: list[tuple[date, date | None]]) -> None:
    mentions = resolve_time_expressions(text, said)
    assert [_readings(m) for m in mentions] == expected


def test_two_readings_are_whole_intervals_earliest_first() -> None:
    (m,) = resolve_time_expressions("Japan in October!", FRI)
    assert m.readings == (
        (datetime(2024, 10, 1, tzinfo=UTC), datetime(2024, 11, 1, tzinfo=UTC)),
        (datetime(2025, 10, 1, tzinfo=UTC), datetime(2025, 11, 1, tzinfo=UTC)),
    )
    (one,) = resolve_time_expressions("I'll be in Japan in October.", FRI)
    assert one.readings == ((one.start, one.end),)


def test_a_forced_tense_has_one_reading() -> None:
    for tense in ("past", "future"):
        (m,) = resolve_time_expressions("Japan in October!", FRI, tense=tense)
        assert m.alternative is None


@pytest.mark.parametrize(
    ("text", "phrase", "expected"),
    [
        ("I will go in May.", "in May", FUTURE),
        ("I went in May.", "in May", PAST),
        ("Berlin in May.", "in May", BOTH),
        ("I was going to go in May.", "in May", BOTH),
        # the clause without a cue borrows its sentence's reading
        ("We'll be in Rome, hopefully in May.", "in May", FUTURE),
        # a cue in another sentence does not count
        ("I went to Rome last year. Berlin in May.", "in May", BOTH),
    ],
)
def test_reader_directions(text: str, phrase: str, expected: str) -> None:
    at = text.index(phrase)
    assert TenseReader(text).direction(at, at + len(phrase)) == expected


# --------------------------------------------------------------------------- #
# Property: a future-marked statement never lands before its said date, a      #
# past-marked one never after it, and neither keeps a second reading.         #
# --------------------------------------------------------------------------- #

_FUTURE_TEMPLATES = (
    "I will visit Oslo {when}.",
    "We're flying to Oslo {when}.",
    "She is going to move {when}.",
    "I plan to start the course {when}.",
    "Can't wait to see you {when}!",
    "The appointment is scheduled {when}.",
    "I'll be in Oslo {when}, I think.",
)
_PAST_TEMPLATES = (
    "I visited Oslo {when}.",
    "We flew to Oslo {when}.",
    "She moved {when}.",
    "I started the course {when}.",
    "It was great to see you {when}!",
    "We had the appointment {when}.",
    "Two years ago I went to Oslo {when}.",
)


@st.composite
def _bare_time(draw: st.DrawFn) -> str:
    month = calendar.month_name[draw(st.integers(1, 12))]
    weekday = calendar.day_name[draw(st.integers(0, 6))]
    day = draw(st.integers(1, 28))
    return draw(st.sampled_from([
        f"in {month}", f"in early {month}", f"in late {month}", f"on {month} {day}",
        f"on the {day}th of {month}", f"on {weekday}", f"on {weekday} evening",
    ]))


_ANCHORS = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2080, 12, 31),
                        timezones=st.just(UTC))


@given(_ANCHORS, _bare_time(), st.sampled_from(_FUTURE_TEMPLATES))
def test_a_future_statement_never_resolves_before_it_was_said(
        said: datetime, when: str, template: str) -> None:
    """For any said time and any bare month, day or weekday in a future-marked statement:
    the date is the coming one, never wholly before the day it was said, within a year."""
    mentions = resolve_time_expressions(template.format(when=when), said)
    assert mentions
    said_day = datetime(said.year, said.month, said.day, tzinfo=UTC)
    for m in mentions:
        assert m.alternative is None
        assert m.end > said_day  # it may be today, never wholly before it
        assert m.start < said_day + timedelta(days=366)


@given(_ANCHORS, _bare_time(), st.sampled_from(_PAST_TEMPLATES))
def test_a_past_statement_never_resolves_after_it_was_said(
        said: datetime, when: str, template: str) -> None:
    """For any said time and any bare month, day or weekday in a past-marked statement:
    the date is the last one, never starting after it was said, within a year."""
    mentions = [m for m in resolve_time_expressions(template.format(when=when), said)
                if m.phrase != "Two years ago"]
    assert mentions
    for m in mentions:
        assert m.alternative is None
        assert m.start <= said
        assert m.end > said - timedelta(days=366)
