"""Reading chat logs (`labile_io.formats`): every format, deterministic ids, times, bad input."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile import InputError
from labile_io.formats import ReadOptions, detect, read_file

DATA = Path(__file__).resolve().parents[1] / "bench" / "data"
NOW = datetime(2025, 1, 2, 3, 4, tzinfo=UTC)
OPTS = ReadOptions(default_time=NOW, tz=UTC)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_chat_jsonl_role_content_without_ids_or_times(tmp_path: Path) -> None:
    path = _write(tmp_path, "chat.jsonl", "\n".join(json.dumps(r) for r in [
        {"role": "user", "content": "I moved to Lyon."},
        {"role": "assistant", "content": "How do you like it?"},
        {"speaker": "Ann", "text": "Lovely.", "timestamp": "2024-05-01T10:00:00"},
    ]) + "\n\n")
    [conv] = read_file(path, None, ReadOptions(default_time=NOW, tz=ZoneInfo("Europe/Paris")))
    obs = conv.observations
    assert conv.namespace is None
    assert [o.speaker for o in obs] == ["user", "assistant", "Ann"]
    assert obs[0].timestamp == obs[1].timestamp == obs[2].timestamp  # the first time given
    assert conv.filled_times == ("line 1", "line 2")
    assert obs[2].timestamp == datetime(2024, 5, 1, 8, 0, tzinfo=UTC)  # naive: read in --tz
    assert len({o.id for o in obs}) == 3
    again = read_file(path, None, OPTS)[0].observations
    assert [o.id for o in again] == [o.id for o in obs]  # deterministic


def test_labile_jsonl_keeps_ids_sessions_and_metadata(tmp_path: Path) -> None:
    row = {"id": "x1", "text": "hi", "timestamp": "2024-01-01T00:00:00+02:00",
           "speaker": "Bo", "session": 3, "metadata": {"caption": "a cat"}}
    [conv] = read_file(_write(tmp_path, "a.jsonl", json.dumps(row)), None, OPTS)
    [obs] = conv.observations
    assert (obs.id, obs.session, obs.metadata) == ("x1", "3", {"caption": "a cat"})
    assert obs.timestamp == datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=2)))


def test_openai_messages_list_and_object(tmp_path: Path) -> None:
    msgs = [{"role": "system", "content": ""},
            {"role": "user", "content": [{"type": "text", "text": "Book a table"},
                                         {"type": "image_url", "image_url": {"url": "x"}}]},
            {"role": "assistant", "content": "Done."}]
    for name, text in (("m.json", json.dumps(msgs)), ("o.json", json.dumps({"messages": msgs}))):
        path = _write(tmp_path, name, text)
        assert detect(path, text) == "messages"
        [conv] = read_file(path, None, OPTS)
        assert [o.text for o in conv.observations] == ["Book a table", "Done."]


def test_locomo_and_longmemeval_give_one_namespace_per_conversation() -> None:
    convs = read_file(DATA / "locomo_tiny.json", None, OPTS)
    assert convs and all(c.namespace and c.observations for c in convs)
    assert len({c.namespace for c in convs}) == len(convs)
    items = read_file(DATA / "longmemeval_tiny.json", None, OPTS)
    assert items and all(c.namespace and c.observations for c in items)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("a.jsonl", '{"role": "user"}', "line 1: no 'text' or 'content'"),
    ("a.jsonl", '{"text": "x"}\nnot json', "line 2: not JSON"),
    ("a.jsonl", '{"text": "x", "timestamp": "yesterday"}', "line 1: Invalid isoformat"),
    ("a.jsonl", '{"text": "x", "metadata": 3}', "'metadata' must be an object"),
    ("a.json", '"just a string"', "expected a JSON list of messages"),
    ("a.txt", "hello", "neither JSON nor JSON lines"),
])
def test_bad_input_names_the_record_and_the_problem(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        read_file(_write(tmp_path, name, text), None, OPTS)


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_file(tmp_path / "nope.jsonl", None, OPTS)


@given(st.lists(st.text(min_size=1).filter(str.strip), min_size=1, max_size=8))
def test_ids_depend_on_content_and_repeats_only(texts: list[str]) -> None:
    """Property: reading a log twice gives the same ids; appending lines keeps the
    earlier lines' ids; no two lines of one file share an id (see also
    tests/io/test_io_content_ids.py)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.jsonl"
        lines = [json.dumps({"role": "user", "content": t}) for t in texts]
        path.write_text("\n".join(lines))
        first = [o.id for o in read_file(path, None, OPTS)[0].observations]
        path.write_text("\n".join([*lines, json.dumps({"role": "user", "content": "more"})]))
        grown = [o.id for o in read_file(path, None, OPTS)[0].observations]
    assert grown[:len(first)] == first
    assert len(set(grown)) == len(grown)
