"""Tests for labile_io.locomo: synthetic samples plus the real dev file."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest

from labile_io.locomo import (
    LOCOMO_ENV_VAR,
    Conversation,
    EvidenceCleaning,
    Question,
    Turn,
    clean_evidence,
    default_locomo_path,
    load_locomo,
    turn_document,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
DEV_PATH = default_locomo_path(REPO_ROOT)
needs_dev = pytest.mark.skipif(
    not DEV_PATH.is_file(),
    reason=f"LoCoMo dev file not found at {DEV_PATH} (set ${LOCOMO_ENV_VAR} to its path)",
)

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _turn(dia_id: str, speaker: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


def _sample(qa: list[dict[str, Any]] | None = None, **conv_overrides: Any) -> dict[str, Any]:
    """A small sample; keys deliberately out of order (session_10 before session_2)."""
    conv: dict[str, Any] = {
        "speaker_a": "Ann",
        "speaker_b": "Bob",
        "session_10_date_time": "9:00 am on 3 March, 2023",
        "session_10": [_turn("D10:1", "Ann", "Tenth session."), _turn("D10:2", "Bob", "Yes.")],
        "session_1_date_time": "1:56 pm on 8 May, 2022",
        "session_1": [
            _turn("D1:1", "Ann", "Hi Bob!"),
            _turn(
                "D1:2",
                "Bob",
                "Look at my dog.",
                img_url=["http://example.invalid/x.jpg"],
                blip_caption="a photo of a dog on a beach",
                query="dog beach",
            ),
            _turn("D1:3", "Ann", "Cute!", blip_caption="  "),
        ],
        "session_2_date_time": "12:06 am on 11 November 2022",
        "session_2": [_turn("D2:1", "Bob", "Midnight chat."), _turn("D2:5", "Ann", "Odd id.")],
        "session_9_date_time": "12:30 pm on 1 February, 2023",
        "session_9": [_turn("D9:1", "Ann", "Ninth.")],
        "session_11_date_time": "10:00 am on 4 March, 2023",  # orphan: no session_11 list
    }
    conv.update(conv_overrides)
    if qa is None:
        qa = [{"question": "Q?", "answer": "A", "evidence": ["D1:1"], "category": 4}]
    return {"sample_id": "conv-x", "conversation": conv, "qa": qa, "event_summary": {}}


def _write(tmp_path: Path, samples: list[dict[str, Any]]) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(samples), encoding="utf-8")
    return path


def _load_one(tmp_path: Path, sample: dict[str, Any]) -> tuple[Conversation, EvidenceCleaning]:
    convs, stats = load_locomo(_write(tmp_path, [sample]))
    assert len(convs) == 1
    return convs[0], stats


def test_bad_session_date_names_sample_and_string(tmp_path: Path) -> None:
    sample = _sample(session_9_date_time="sometime in spring")
    with pytest.raises(ValueError, match=r"conv-x.*session_9_date_time.*'sometime in spring'"):
        load_locomo(_write(tmp_path, [sample]))


def test_session_without_date_is_an_error(tmp_path: Path) -> None:
    sample = _sample()
    del sample["conversation"]["session_9_date_time"]
    with pytest.raises(ValueError, match="conv-x: session_9 has no session_9_date_time"):
        load_locomo(_write(tmp_path, [sample]))


@pytest.mark.parametrize("bad_id", ["D3:1", "D2:01", "d2:1", "2:1", "D1:9", "D2:1"])
def test_unexpected_dia_ids_are_errors(tmp_path: Path, bad_id: str) -> None:
    sample = _sample()
    # D2:1 already exists -> duplicate; the others are non-canonical or misplaced
    sample["conversation"]["session_2"].append(_turn(bad_id, "Ann", "x"))
    with pytest.raises(ValueError, match=r"conv-x: (unexpected|duplicate) dia_id"):
        load_locomo(_write(tmp_path, [sample]))


# ---------------------------------------------------------------------------
# Structure: sessions, turns, captions, answers
# ---------------------------------------------------------------------------


def test_sessions_sorted_numerically_with_timestamps(tmp_path: Path) -> None:
    conv, _ = _load_one(tmp_path, _sample())
    assert conv.sample_id == "conv-x"
    assert conv.speakers == ("Ann", "Bob")
    assert [s.number for s in conv.sessions] == [1, 2, 9, 10]  # orphan session_11 date ignored
    number, timestamp, turns = conv.sessions[2]
    assert (number, timestamp) == (9, datetime(2023, 2, 1, 12, 30, tzinfo=UTC))
    assert [t.id for t in turns] == ["D9:1"]
    assert [t.id for t in conv.turns] == [
        "D1:1",
        "D1:2",
        "D1:3",
        "D2:1",
        "D2:5",
        "D9:1",
        "D10:1",
        "D10:2",
    ]
    assert conv.turn_ids == frozenset(t.id for t in conv.turns)
    t = conv.turn("D2:1")
    assert t == Turn(
        id="D2:1",
        session=2,
        speaker="Bob",
        text="Midnight chat.",
        timestamp=datetime(2022, 11, 11, 0, 6, tzinfo=UTC),
        caption=None,
        date_text="12:06 am on 11 November 2022",
    )
    with pytest.raises(KeyError):
        conv.turn("D7:7")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        t.text = "changed"  # type: ignore[misc]


def test_captions_and_turn_document(tmp_path: Path) -> None:
    conv, _ = _load_one(tmp_path, _sample())
    photo, blank = conv.turn("D1:2"), conv.turn("D1:3")
    assert photo.caption == "a photo of a dog on a beach"
    assert blank.caption is None  # blank caption counts as none
    assert turn_document(conv.turn("D1:1")) == "[1:56 pm on 8 May, 2022] Ann: Hi Bob!"
    assert turn_document(photo) == (
        "[1:56 pm on 8 May, 2022] Bob: Look at my dog. "
        "[shares a photo: a photo of a dog on a beach]"
    )
    assert turn_document(blank) == "[1:56 pm on 8 May, 2022] Ann: Cute!"


def test_answers_and_questions(tmp_path: Path) -> None:
    qa = [
        {"question": "How many?", "answer": 3, "evidence": ["D1:1"], "category": 1},
        {"question": "Adv?", "adversarial_answer": "trap", "evidence": ["D2:1"], "category": 5},
        {
            "question": "Both?",
            "adversarial_answer": "Yes",
            "answer": "No",
            "evidence": [],
            "category": 5,
        },
        {"question": "Year?", "answer": 2022, "evidence": ["D9:1"], "category": "2"},
    ]
    conv, stats = _load_one(tmp_path, _sample(qa=qa))
    q0, q1, q2, q3 = conv.questions
    assert q0 == Question(
        index=0,
        question="How many?",
        answer="3",
        category=1,
        evidence=("D1:1",),
        raw_evidence=("D1:1",),
    )
    assert (q1.answer, q1.adversarial_answer, q1.category) == ("trap", "trap", 5)
    assert (q2.answer, q2.adversarial_answer) == ("No", "Yes")
    assert (q3.index, q3.answer, q3.category) == (3, "2022", 2)
    assert q0.has_evidence and not q2.has_evidence
    assert stats.flagged == [("conv-x", 2)]


def test_question_without_any_answer_is_an_error(tmp_path: Path) -> None:
    qa = [{"question": "?", "evidence": [], "category": 5}]
    with pytest.raises(ValueError, match=r"conv-x: qa\[0\] has neither"):
        load_locomo(_write(tmp_path, [_sample(qa=qa)]))


@pytest.mark.parametrize(
    ("field", "value", "pattern"),
    [
        ("category", "x", r"qa\[0\] bad question/category"),
        ("question", None, r"qa\[0\] bad question.*KeyError"),
    ],
)
def test_bad_question_fields_name_sample(
    tmp_path: Path, field: str, value: Any, pattern: str
) -> None:
    qa: list[dict[str, Any]] = [{"question": "?", "answer": "a", "evidence": [], "category": 1}]
    if value is None:
        del qa[0][field]
    else:
        qa[0][field] = value
    with pytest.raises(ValueError, match=f"conv-x: {pattern}"):
        load_locomo(_write(tmp_path, [_sample(qa=qa)]))


def test_turn_without_text_names_sample(tmp_path: Path) -> None:
    sample = _sample()
    del sample["conversation"]["session_9"][0]["text"]
    with pytest.raises(ValueError, match="conv-x: turn D9:1 lacks"):
        load_locomo(_write(tmp_path, [sample]))


def test_limit(tmp_path: Path) -> None:
    second = _sample()
    second["sample_id"] = "conv-y"
    path = _write(tmp_path, [_sample(), second])
    assert [c.sample_id for c in load_locomo(path)[0]] == ["conv-x", "conv-y"]
    assert [c.sample_id for c in load_locomo(path, limit=1)[0]] == ["conv-x"]
    assert load_locomo(path, limit=0)[0] == []
    with pytest.raises(ValueError):
        load_locomo(path, limit=-1)


def test_not_a_list(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="JSON list"):
        load_locomo(path)


def test_default_path_env_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(LOCOMO_ENV_VAR, raising=False)
    assert default_locomo_path(tmp_path) == (
        tmp_path / ".." / "shared" / "data" / "locomo" / "locomo_dev.json"
    )
    monkeypatch.setenv(LOCOMO_ENV_VAR, "/abs/loco.json")
    assert default_locomo_path(tmp_path) == Path("/abs/loco.json")
    monkeypatch.setenv(LOCOMO_ENV_VAR, "rel/loco.json")
    assert default_locomo_path(tmp_path) == tmp_path / "rel" / "loco.json"


# ---------------------------------------------------------------------------
# Evidence cleaning, one rule at a time
# ---------------------------------------------------------------------------

IDS = frozenset({"D1:3", "D2:5", "D11:26", "D30:5"})


def _clean(raw: list[Any]) -> tuple[tuple[str, ...], dict[str, int]]:
    stats = EvidenceCleaning()
    kept = clean_evidence(raw, IDS, stats)
    counts = {k: v for k, v in stats.counts().items() if v and k not in ("raw_entries", "kept")}
    assert stats.raw_entries == len(raw)
    assert stats.kept == len(kept)
    return kept, counts


def test_clean_passthrough() -> None:
    assert _clean(["D1:3", "D2:5"]) == (("D1:3", "D2:5"), {})


@pytest.mark.parametrize("raw", ["D1:3; D2:5", "D1:3 D2:5", "D1:3,D2:5", "D1:3 ;, D2:5 "])
def test_rule_a_split(raw: str) -> None:
    assert _clean([raw]) == (("D1:3", "D2:5"), {"split": 1})


@pytest.mark.parametrize("raw", ["D30:05", "d1:3", " D1:3 ", "D1 : 3", "D 1:3", "D01:003"])
def test_rule_b_normalised(raw: str) -> None:
    kept, counts = _clean([raw])
    assert counts == {"normalised": 1}
    assert kept in (("D30:5",), ("D1:3",))


def test_rule_b_split_then_normalised() -> None:
    assert _clean(["d1:3;D30:05"]) == (("D1:3", "D30:5"), {"split": 1, "normalised": 2})


def test_rule_b_recovered_missing_session() -> None:
    assert _clean(["D:11:26"]) == (("D11:26",), {"recovered": 1})
    # not recoverable when the implied turn does not exist -> malformed
    assert _clean(["D:11:27"]) == ((), {"malformed": 1})


@pytest.mark.parametrize("raw", ["D", "", "  ", "D11", "D:26", "11:26", "D1-3", "S1:3", 13])
def test_rule_b_malformed_dropped(raw: Any) -> None:
    assert _clean([raw, "D1:3"]) == (("D1:3",), {"malformed": 1})


def test_rule_c_absent_dropped() -> None:
    assert _clean(["D10:19", "D1:3", "D30:50", "D0:3"]) == (("D1:3",), {"absent": 3})


def test_rule_d_duplicates() -> None:
    assert _clean(["D1:3", "D2:5", "d1:3", "D1:3; D2:5"]) == (
        ("D1:3", "D2:5"),
        {"duplicates": 3, "normalised": 1, "split": 1},
    )


def test_rule_e_empty_flagged(tmp_path: Path) -> None:
    qa = [
        {"question": "none", "answer": "x", "evidence": [], "category": 3},
        {"question": "all bad", "answer": "x", "evidence": ["D", "D99:1"], "category": 1},
        {"question": "fine", "answer": "x", "evidence": ["D1:1"], "category": 4},
    ]
    conv, stats = _load_one(tmp_path, _sample(qa=qa))
    assert [q.evidence for q in conv.questions] == [(), (), ("D1:1",)]
    assert [q.raw_evidence for q in conv.questions] == [(), ("D", "D99:1"), ("D1:1",)]
    assert stats.empty_questions == 2
    assert stats.flagged == [("conv-x", 0), ("conv-x", 1)]
    assert stats.counts() == {
        "raw_entries": 3,
        "split": 0,
        "normalised": 0,
        "recovered": 0,
        "malformed": 1,
        "absent": 1,
        "duplicates": 0,
        "kept": 1,
        "empty_questions": 2,
    }


def test_cleaning_against_conversation_ids(tmp_path: Path) -> None:
    qa = [
        {
            "question": "q",
            "answer": "a",
            "category": 1,
            "evidence": ["D2:05", "D:10:2", "D2:2", "D1:1; D9:1", "D"],
        }
    ]
    conv, stats = _load_one(tmp_path, _sample(qa=qa))
    assert conv.questions[0].evidence == ("D2:5", "D10:2", "D1:1", "D9:1")
    assert (stats.normalised, stats.recovered, stats.absent, stats.split, stats.malformed) == (
        1,
        1,
        1,
        1,
        1,
    )


# ---------------------------------------------------------------------------
# The real dev file
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dev() -> tuple[list[Conversation], EvidenceCleaning]:
    return load_locomo(DEV_PATH)


@needs_dev
def test_dev_file_shape(dev: tuple[list[Conversation], EvidenceCleaning]) -> None:
    convs, _ = dev
    assert [c.sample_id for c in convs] == [
        "conv-26",
        "conv-30",
        "conv-41",
        "conv-42",
        "conv-43",
        "conv-44",
        "conv-47",
    ]
    cats = Counter(q.category for c in convs for q in c.questions)
    assert cats == {1: 192, 2: 214, 3: 66, 4: 563, 5: 312}
    assert sum(cats.values()) == 1347
    assert sum(len(c.turns) for c in convs) == 4124
    assert sum(len(c.sessions) for c in convs) == 187
    assert sum(1 for c in convs for t in c.turns if t.caption is not None) == 867
    for c in convs:
        numbers = [s.number for s in c.sessions]
        assert numbers == list(range(1, len(numbers) + 1))
        stamps = [s.timestamp for s in c.sessions]
        assert stamps == sorted(stamps)
        assert all(t.speaker in c.speakers for t in c.turns)
        assert all(isinstance(q.answer, str) and q.answer for q in c.questions)


@needs_dev
def test_dev_evidence_cleaning(dev: tuple[list[Conversation], EvidenceCleaning]) -> None:
    convs, stats = dev
    for c in convs:
        ids = c.turn_ids
        for q in c.questions:
            assert set(q.evidence) <= ids, (c.sample_id, q.index)
            assert len(set(q.evidence)) == len(q.evidence)
    assert stats.counts() == {
        "raw_entries": 1834,
        "split": 1,
        "normalised": 0,
        "recovered": 1,
        "malformed": 1,
        "absent": 2,
        "duplicates": 0,
        "kept": 1832,
        "empty_questions": 2,
    }
    assert stats.flagged == [("conv-26", 30), ("conv-26", 46)]
    by_id = {c.sample_id: c for c in convs}
    assert by_id["conv-26"].questions[37].evidence == ("D8:6", "D9:17")
    assert by_id["conv-43"].questions[18].evidence[4] == "D11:26"
    assert by_id["conv-42"].questions[88].evidence == ("D1:18", "D1:20")
    scorable = Counter(q.category for c in convs for q in c.questions if q.has_evidence)
    assert scorable == {1: 192, 2: 214, 3: 64, 4: 563, 5: 312}


@needs_dev
def test_dev_limit_and_documents() -> None:
    convs, _ = load_locomo(DEV_PATH, limit=1)
    assert [c.sample_id for c in convs] == ["conv-26"]
    first = convs[0].turns[0]
    assert turn_document(first).startswith("[1:56 pm on 8 May, 2023] Caroline: ")
