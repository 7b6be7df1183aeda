"""All-Mem's relation rules read a plan's bare date forward (issue #28).

A plan said in March about "May" is about the coming May, so a report in May
that it was done carries the plan out instead of being "another occasion";
an undecided bare date gives the unit both of its spans.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from labile.plugin import Node
from labile_allmem.consolidate.relate import DATED_PLAN_REALISED, profile, revision

SAID = datetime(2024, 3, 4, 10, 0, tzinfo=UTC)  # a Monday in March


def unit(text: str, *, session: int = 1, days: int = 0) -> Node:
    return Node(id=f"u:{session}", kind="allmem.unit", content=text,
                time_start=SAID + timedelta(days=days),
                attrs={"speaker": "Ann", "session": str(session)})


def test_a_plan_for_may_is_realised_by_a_report_in_may() -> None:
    plan = profile(unit("I'm thinking about running the Lisbon half marathon in May."))
    assert plan.times == ((datetime(2024, 5, 1, tzinfo=UTC), datetime(2024, 6, 1, tzinfo=UTC)),)
    # said Monday 20 May 2024: "last Sunday" is 19 May, inside the plan's May
    done = profile(unit("I ran the Lisbon half marathon last Sunday, so proud of my time.",
                        session=2, days=77))
    found = revision(done, plan, cos=0.7)
    assert found is not None and found.kind == DATED_PLAN_REALISED


def test_an_undecided_date_gives_both_spans() -> None:
    (sentence,) = profile(unit("Lisbon half marathon in May!")).sentences
    assert sentence.times == (
        (datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC)),
        (datetime(2024, 5, 1, tzinfo=UTC), datetime(2024, 6, 1, tzinfo=UTC)),
    )
