"""Times whose UTC value falls outside years 1-9999 are refused on the way in,
and a store that already holds one still opens and reads (the row reported)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile import Memory
from labile._errors import InputError
from labile._model import Observation

NS = "n"
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def _obs(i: int, text: str = "I adopted a cat named Miso.") -> Observation:
    return Observation(id=f"t{i}", text=text, timestamp=T0, speaker="Ana", session="s1")


@given(hours=st.integers(min_value=1, max_value=23))
def test_timestamps_past_year_9999_in_utc_are_refused(hours: int) -> None:
    """Property: a time late on 9999-12-31 at a negative offset whose UTC value is
    in year 10000 is refused, naming the field; the same wall time in UTC is fine."""
    late = datetime(9999, 12, 31, 23, 59, tzinfo=timezone(-timedelta(hours=hours)))
    with pytest.raises(InputError, match=r"^timestamp .* outside years 1 to 9999"):
        Observation(id="x", text="hi", timestamp=late)
    Observation(id="x", text="hi", timestamp=late.replace(tzinfo=UTC))


def test_timestamps_before_year_1_in_utc_are_refused() -> None:
    early = datetime(1, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=2)))
    with pytest.raises(InputError, match="outside years 1 to 9999"):
        Observation(id="x", text="hi", timestamp=early)


def test_a_store_holding_an_out_of_range_time_still_opens_and_reads(tmp_path: Path) -> None:
    late = datetime(9999, 12, 31, 23, 0, tzinfo=timezone(-timedelta(hours=5)))
    bad = _obs(9, "Written before writes were checked.")
    object.__setattr__(bad, "timestamp", late)  # as an older labile let through
    with Memory.open(preset="hybrid", path=tmp_path) as mem:
        mem.add([_obs(0)], namespace=NS)
        mem.store.add_observations(NS, [bad])
    with Memory.open(path=tmp_path) as mem:
        got = {o.id: o.timestamp for o in mem.list(NS).items}
        assert got["t0"] == T0
        assert got["t9"] == datetime.max.replace(tzinfo=UTC)
        assert mem.search("cat", namespace=NS, k=3).hits
