"""Ids from content, not file names, and missing times (#28 items 4 and 7), as properties
of the chat-log reader (`labile_io.formats`)."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile import InputError
from labile_io.formats import ReadOptions, fill_times, read_file

NOW = datetime(2026, 1, 1, tzinfo=UTC)
OPTS = ReadOptions(default_time=NOW, tz=UTC)
LINES = st.lists(st.tuples(st.sampled_from(["user", "assistant"]),
                           st.sampled_from(["ok", "hello", "I moved.", "ok!"])),
                 min_size=1, max_size=10)


def _ids(name: str, rows: list[dict[str, str]], options: ReadOptions = OPTS) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text("\n".join(json.dumps(r) for r in rows))
        return [o.id for o in read_file(path, "jsonl", options)[0].observations]


@given(LINES, LINES, st.sampled_from(["a.jsonl", "export (2).jsonl", "x.log"]))
def test_ids_do_not_depend_on_the_file_name_or_on_lines_before(
        before: list[tuple[str, str]], lines: list[tuple[str, str]], name: str) -> None:
    """Property: the same lines give the same ids under any file name; lines put in
    front keep the ids of the lines that follow only when they repeat none of them
    (an identical earlier line makes a repeat the next occurrence); and no two lines
    of one log share an id, however often a line repeats."""
    rows = [{"role": r, "content": c} for r, c in lines]
    alone = _ids("chat.jsonl", rows)
    assert _ids(name, rows) == alone
    assert len(set(alone)) == len(alone)
    grown = _ids(name, [{"role": r, "content": c} for r, c in before] + rows)
    assert len(set(grown)) == len(grown)
    if not set(before) & set(lines):
        assert grown[len(before):] == alone


def test_a_given_id_is_kept_and_a_time_makes_a_line_another_one() -> None:
    assert _ids("a.jsonl", [{"id": "chat-0123456789abcdef", "text": "kept"}]) == [
        "chat-0123456789abcdef"]  # an id from before 0.3.0 (or any given id) stays
    plain = _ids("a.jsonl", [{"role": "user", "content": "ok"}])
    dated = _ids("a.jsonl", [{"role": "user", "content": "ok", "timestamp": "2025-01-01"}])
    assert plain != dated and plain[0].startswith("log-")


@given(st.lists(st.one_of(st.none(), st.integers(0, 10_000)), max_size=12))
def test_a_missing_time_is_the_previous_one_or_the_first_given(
        minutes: list[int | None]) -> None:
    """Property: given times are kept; a missing one takes the nearest given time
    before it, or the first given time when none comes before; with no time at
    all, every record gets the default."""
    stamps = [None if m is None else NOW + timedelta(minutes=m) for m in minutes]
    filled = fill_times(stamps, NOW - timedelta(days=1))
    given_times = [s for s in stamps if s is not None]
    assert len(filled) == len(stamps)
    for i, (stamp, out) in enumerate(zip(stamps, filled, strict=True)):
        earlier = [s for s in stamps[:i] if s is not None]
        expected = stamp or (earlier[-1] if earlier else
                             given_times[0] if given_times else NOW - timedelta(days=1))
        assert out == expected


def test_the_python_reader_fills_or_refuses_and_lists_what_it_filled(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two", "timestamp": "2025-03-01T08:00:00Z"},
        {"role": "system", "content": "not counted"},
        {"role": "user", "content": "three"},
    ]))
    [conv] = read_file(path, None, OPTS)
    assert conv.filled_times == ("message 1", "message 4")
    assert {o.timestamp for o in conv.observations} == {datetime(2025, 3, 1, 8, tzinfo=UTC)}
    strict = ReadOptions(default_time=NOW, tz=UTC, require_timestamps=True)
    with pytest.raises(InputError, match=r"2 of 3 records have no time \(message 1, "
                                         r"message 4\)"):
        read_file(path, None, strict)
