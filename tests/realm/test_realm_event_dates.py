"""How a turn's bare dates flow into its REALM event and into temporal scoring.

A plan's event spans from when it was said to the coming date; an undecided
bare date spans both readings and lists them in ``attrs["time_readings"]``;
a question about that time then finds the event at no temporal cost.
"""

from __future__ import annotations

from datetime import UTC, datetime

from realm_helpers import open_memory

from labile._model import NodeFilter
from labile.plugin import Node, Observation
from labile_realm.retrieve.plan import TemporalDecay, question_time_range
from labile_realm.retrieve.score import temporal_delta
from labile_realm.schema import EVENT

SAID = datetime(2025, 2, 21, 15, 30, tzinfo=UTC)  # a Friday


def _event(text: str) -> Node:
    with open_memory("realm") as memory:
        memory.add([Observation(id="t1", text=text, speaker="Elena", timestamp=SAID,
                                session="1")], namespace="u")
        (event,) = memory.store.iter_nodes("u", NodeFilter(kinds={EVENT}))
        return event


def _cost(node: Node, question: str) -> float | None:
    window = question_time_range(question, SAID)
    assert window is not None
    return temporal_delta(node, TemporalDecay(start=window[0], end=window[1]))


def test_a_plan_spans_from_its_telling_to_the_coming_date() -> None:
    event = _event("I start my new job on April 7.")
    assert event.time_start == SAID
    assert event.time_end is not None and event.time_end.date().isoformat() == "2025-04-07"
    assert "time_readings" not in event.attrs
    assert any(k.endswith("7 April 2025") for k in event.keywords)
    assert _cost(event, "What will Elena do on April 7?") == 0.0


def test_a_report_spans_from_the_last_date_to_its_telling() -> None:
    event = _event("I started my new job on April 7.")
    assert event.time_start is not None and event.time_start.date().isoformat() == "2024-04-07"
    assert event.time_end == SAID
    assert _cost(event, "What did Elena do on April 7?") == 0.0


def test_an_undecided_date_keeps_both_readings() -> None:
    event = _event("Japan in October!")
    readings = event.attrs["time_readings"]
    assert [(a[:10], b[:10]) for a, b in readings] == [("2024-10-01", "2024-10-31"),
                                                       ("2025-10-01", "2025-10-31")]
    assert event.time_start is not None and event.time_start.date().isoformat() == "2024-10-01"
    assert event.time_end is not None and event.time_end.date().isoformat() == "2025-10-31"
    assert "in October: October 2024 or October 2025" in event.keywords
    # either reading of a question finds it
    assert _cost(event, "What did Elena do in October?") == 0.0
    assert _cost(event, "What will Elena do in October?") == 0.0
    # a time far from both still costs
    cost = _cost(event, "What did Elena do in 2019?")
    assert cost is not None and cost < 0
