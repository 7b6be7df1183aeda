"""Speakers are people (`labile_io.speakers`, #28 item 3): self-introductions, the
name-likeness check, the caller's mapping, and how names flow through a log."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile import InputError, Observation
from labile.text.tokenize import STOPWORDS
from labile_io.formats import ReadOptions, read_file
from labile_io.speakers import (
    NAMED_BY_KEY,
    ROLE_KEY,
    SpeakerNames,
    introduced_name,
    is_name_like,
    parse_speakers,
    stored_names,
)
from labile_text.entity_vocab import COMMON

T0 = datetime(2025, 1, 5, 10, tzinfo=UTC)


@pytest.mark.parametrize(("text", "name"), [
    ("Hi! I'm Elena.", "Elena"),
    ("hi, I'm Elena and I work at Acme", "Elena"),
    ("I’m Elena", "Elena"),
    ("Hello there, I am Jean-Luc!", "Jean-Luc"),
    ("I'm Elena Ruiz, nice to meet you", "Elena Ruiz"),
    ("my name is elena", "Elena"),
    ("My name's Elena Ruiz.", "Elena Ruiz"),
    ("You can call me Liz.", "Liz"),
    ("Hi, I'm Elena. I'm tired today.", "Elena"),
    ("Hi I'm Elena\nWhat should I cook tonight?", "Elena"),
    ("I'm tired", None),
    ("I'm Tired", None),
    ("I'm Going to Rome", None),
    ("I'm Going", None),
    ("I'm Canadian", None),
    ("I am Back!", None),
    ("I'm So Happy", None),
    ("I'm Really Happy Today", None),
    ("I'm OK", None),
    ("I'm Elena's sister", None),
    ("I'm at Acme", None),
    ("I'm in Denver", None),
    ("call me tomorrow", None),
    ("call me back when you can", None),
    ("I'm Vegetarian now", None),
    ("I'm Going To The Store", None),
    ("My sister is Elena", None),
    ("Tim Elena", None),
])
def test_self_introductions_and_false_positives(text: str, name: str | None) -> None:
    assert introduced_name(text) == name


@given(st.sampled_from(sorted(STOPWORDS | COMMON)))
def test_no_stopword_or_chat_word_is_a_name_even_capitalised(word: str) -> None:
    """Property: "I'm <Word>" names nobody when the word is a stopword or a chat word."""
    cap = word[:1].upper() + word[1:]
    assert not is_name_like(cap)
    assert introduced_name(f"Hey, I'm {cap}!") is None


@given(st.from_regex(r"[a-z]{2,10}", fullmatch=True))
def test_a_lower_case_word_after_im_is_never_a_name(word: str) -> None:
    """Property: only a capitalised word after "I'm" can be a name ("I'm elena" is not
    taken; "my name is elena" is a stronger cue)."""
    assert introduced_name(f"I'm {word} today") is None


@given(st.from_regex(r"[A-Z][a-z]{1,8}", fullmatch=True), st.sampled_from(
    ["Hi! I'm {}.", "my name is {}", "Call me {}, everyone does.", "Hello, I am {}"]))
def test_a_found_name_is_name_like_and_in_the_text(word: str, template: str) -> None:
    """Property: whatever is found is words of the text, each of them name-like."""
    text = template.format(word)
    found = introduced_name(text)
    assert found is None or (found in text and all(is_name_like(w) for w in found.split()))
    assert (found == word) == is_name_like(word)


def test_parse_speakers_reads_pairs_and_refuses_bad_ones() -> None:
    assert parse_speakers(["user=Elena", "Assistant = Kit "]) == {"user": "Elena",
                                                                  "assistant": "Kit"}
    assert parse_speakers({"USER": "Elena  Ruiz"}) == {"user": "Elena Ruiz"}
    for bad, message in ((["user"], "expected ROLE=NAME"), (["=Elena"], "needs a role"),
                         (["user="], "needs a role and a name"),
                         (["user=A", "user=B"], "given two names"),
                         ({"user": 3}, "must be strings")):
        with pytest.raises(InputError, match=message):
            parse_speakers(bad)


def _turn(i: int, speaker: str, text: str, **metadata: str) -> Observation:
    return Observation(id=f"t{i}", text=text, speaker=speaker, metadata=metadata,
                       timestamp=T0.replace(minute=i))


def test_an_introduction_names_its_role_from_that_turn_on() -> None:
    turns = [_turn(0, "user", "Can you help me plan a trip?"),
             _turn(1, "user", "Oh, I'm Elena, by the way."),
             _turn(2, "assistant", "Nice to meet you, Elena! I'm Kit."),
             _turn(3, "user", "I live in Denver."), _turn(4, "Bo", "I'm Max now")]
    names = SpeakerNames()
    named = names.apply(turns)
    assert [o.speaker for o in named] == ["user", "Elena", "Kit", "Elena", "Bo"]
    assert named[3].metadata == {ROLE_KEY: "user", NAMED_BY_KEY: "introduction"}
    assert names.known == {"user": "Elena", "assistant": "Kit"}  # a named speaker ("Bo")
    assert named[4] == turns[4]                                   # is never renamed


def test_the_callers_names_win_and_a_role_named_as_itself_stays_a_role() -> None:
    turns = [_turn(0, "user", "Hi! I'm Elena."), _turn(1, "USER", "I live in Denver."),
             _turn(2, "assistant", "Hello, I am Kit.")]
    named = SpeakerNames(given={"user": "Lena", "assistant": "assistant"}).apply(turns)
    assert [o.speaker for o in named] == ["Lena", "Lena", "assistant"]
    assert named[1].metadata == {ROLE_KEY: "USER", NAMED_BY_KEY: "caller"}
    assert named[2].metadata[ROLE_KEY] == "assistant"  # recorded, so the undo persists
    assert stored_names(named) == {"user": "Lena"}


def test_stored_turns_carry_the_mapping_and_the_latest_word_wins() -> None:
    stored = [_turn(0, "Elena", "x", role="user"), _turn(1, "Kit", "y", role="assistant"),
              _turn(2, "user", "z", role="user")]  # undone later
    assert stored_names(stored) == {"assistant": "Kit"}
    assert stored_names(stored[:2]) == {"user": "Elena", "assistant": "Kit"}
    later = SpeakerNames(known=stored_names(stored[:2])).apply([_turn(3, "user", "hello")])
    assert later[0].speaker == "Elena"


def test_the_reader_names_speakers_and_keeps_the_openai_name_field(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([
        {"role": "system", "content": "be nice"},
        {"role": "user", "name": "Elena", "content": "Where should I run?"},
        {"role": "assistant", "content": "Try the river path."},
        {"role": "user", "content": "Thanks!"},
    ]))
    [conv] = read_file(path, None, ReadOptions(default_time=T0, tz=UTC))
    assert [o.speaker for o in conv.observations] == ["Elena", "assistant", "Elena"]
    assert conv.observations[0].metadata == {ROLE_KEY: "user", NAMED_BY_KEY: "log"}
    [conv] = read_file(path, None, ReadOptions(default_time=T0, tz=UTC,
                                               speakers={"assistant": "Kit"}))
    assert [o.speaker for o in conv.observations] == ["Elena", "Kit", "Elena"]


def test_the_reader_refuses_a_bad_mapping() -> None:
    with pytest.raises(InputError, match="expected ROLE=NAME"):
        ReadOptions(default_time=T0, tz=UTC, speakers=["user"])


def test_the_namespace_remembers_names_and_a_forget_or_another_writer_is_seen() -> None:
    from labile import Memory
    from labile_io.speakers import name_with_stored

    config = {"preset": "bm25", "store": {"type": "memory"}, "embedder": {"type": "hashing"}}
    with Memory.open(config) as memory:
        def add(i: int, text: str, speaker: str = "user") -> str | None:
            [obs] = name_with_stored(memory, "ns", [_turn(i, speaker, text)])
            memory.add([obs], namespace="ns")
            return obs.speaker

        assert add(0, "Hi, I'm Elena!") == "Elena"
        assert add(1, "I run.") == "Elena"           # learned from the stored turns
        memory.forget("ns", ["t0", "t1"])            # the turns that named her: gone
        assert add(2, "I swim.") == "user"
        # a turn stored behind this function's back (another process, say) is read too
        memory.add([_turn(3, "Kim", "hello", role="user")], namespace="ns")
        assert add(4, "I cycle.") == "Kim"
        assert add(5, "Call me Jo.") == "Jo"
        assert add(6, "bye", "user") == "Jo"
