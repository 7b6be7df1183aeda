"""Tests for labile_io.longmemeval on a tiny hand-written fixture."""

from __future__ import annotations

import copy
import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labile_bench.metrics import (
    recall_at_k,
    session_hit_at_k,
    session_ndcg_at_k,
    session_recall_at_k,
)
from labile_io.longmemeval import LMEItem, LMESession, load_longmemeval, parse_lme_datetime

FIXTURE = Path(__file__).resolve().parent / "data" / "longmemeval_tiny.json"
L3 = math.log2(3)


def _raw() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def _write(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------
# Dates
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023/05/20 (Sat) 02:21", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
        ("2023/5/2 (Tue) 23:59", datetime(2023, 5, 2, 23, 59, tzinfo=UTC)),
        ("2023/05/20 02:21", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
        ("2023/05/20 (Mon) 02:21", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),  # weekday ignored
    ],
)
def test_parse_lme_datetime(text: str, expected: datetime) -> None:
    assert parse_lme_datetime(text) == expected


@pytest.mark.parametrize(
    "text", ["", "2023-05-20 02:21", "2023/05/20", "2023/13/01 (Sat) 00:00", "2023/05/20 24:00"]
)
def test_parse_lme_datetime_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="LongMemEval date"):
        parse_lme_datetime(text)


# ---------------------------------------------------------------------------
# Loader
# ---------------------------------------------------------------------------


def test_load_fixture() -> None:
    items = load_longmemeval(FIXTURE)
    assert [i.question_id for i in items] == ["tiny_q1", "tiny_q2", "tiny_q3_abs"]
    assert [len(i.sessions) for i in items] == [3, 4, 3]
    q1, q2, q3 = items
    assert q1.question_type == "single-session-user"
    assert q1.answer == "A border collie"
    assert q1.question_date == datetime(2023, 6, 2, 18, 45, tzinfo=UTC)
    assert q1.question_date_text == "2023/06/02 (Fri) 18:45"
    assert q1.answer_session_ids == ("s1_dog",)
    dog = q1.sessions[1]
    assert isinstance(dog, LMESession)
    assert dog.id == "s1_dog"
    assert dog.timestamp == datetime(2023, 5, 22, 9, 5, tzinfo=UTC)
    assert dog.date_text == "2023/05/22 (Mon) 09:05"
    assert dog.turns[0] == (
        "user",
        "I just adopted a border collie named Pixel and need tips on crate training.",
    )
    assert [role for role, _ in dog.turns] == ["user", "assistant", "user", "assistant"]
    assert dog.evidence_turns == (0,)  # has_answer false does not count
    assert q1.sessions[0].evidence_turns == ()
    assert q2.answer == "12"  # int answer converted to str
    assert q2.answer_session_ids == ("s2_pottery_start", "s2_kiln")
    assert [s.id for s in q2.sessions] == [
        "s2_pottery_start",
        "s2_garden",
        "s2_kiln",
        "s2_budget",
    ]
    assert not q1.is_abstention and q3.is_abstention
    for item in items:
        assert isinstance(item, LMEItem)
        stamps = [s.timestamp for s in item.sessions]
        assert stamps == sorted(stamps)
        assert all(s.timestamp < item.question_date for s in item.sessions)
        assert set(item.answer_session_ids) <= {s.id for s in item.sessions}


def test_limit() -> None:
    assert [i.question_id for i in load_longmemeval(FIXTURE, limit=2)] == ["tiny_q1", "tiny_q2"]
    assert load_longmemeval(FIXTURE, limit=0) == []
    with pytest.raises(ValueError):
        load_longmemeval(FIXTURE, limit=-1)


def test_length_mismatch_names_item(tmp_path: Path) -> None:
    items = _raw()
    items[1]["haystack_dates"].pop()
    with pytest.raises(ValueError, match=r"^tiny_q2: .*lengths differ \(4/3/4\)"):
        load_longmemeval(_write(tmp_path, items))


def test_duplicate_session_ids(tmp_path: Path) -> None:
    items = _raw()
    items[0]["haystack_session_ids"][2] = "s1_dog"
    with pytest.raises(ValueError, match="tiny_q1: duplicate"):
        load_longmemeval(_write(tmp_path, items))


def test_bad_date_names_item(tmp_path: Path) -> None:
    items = _raw()
    items[2]["haystack_dates"][0] = "yesterday"
    with pytest.raises(ValueError, match=r"^tiny_q3_abs: unparseable LongMemEval date 'yesterday'"):
        load_longmemeval(_write(tmp_path, items))


def test_missing_field_names_item(tmp_path: Path) -> None:
    items = _raw()
    broken = copy.deepcopy(items[0])
    del broken["answer_session_ids"]
    with pytest.raises(ValueError, match="tiny_q1: malformed item"):
        load_longmemeval(_write(tmp_path, [broken]))
    broken = copy.deepcopy(items[0])
    del broken["haystack_sessions"][0][0]["content"]
    with pytest.raises(ValueError, match="tiny_q1: malformed item"):
        load_longmemeval(_write(tmp_path, [broken]))


# ---------------------------------------------------------------------------
# Session-level metrics
# ---------------------------------------------------------------------------


def test_session_metrics_on_fixture() -> None:
    q2 = load_longmemeval(FIXTURE)[1]
    gold = q2.answer_session_ids
    ranked = ["s2_kiln", "s2_garden", "s2_pottery_start", "s2_budget"]
    assert session_recall_at_k(ranked, gold, 1) == 0.5
    assert session_recall_at_k(ranked, gold, 2) == 0.5
    assert session_recall_at_k(ranked, gold, 3) == 1.0
    assert session_ndcg_at_k(ranked, gold, 1) == 1.0
    assert session_ndcg_at_k(ranked, gold, 3) == pytest.approx((1 + 1 / 2) / (1 + 1 / L3))
    assert session_hit_at_k(ranked, gold, 1) == 1.0
    assert session_hit_at_k(["s2_budget"], gold, 5) == 0.0


def test_session_metrics_collapse_repeats() -> None:
    # several retrieved chunks from one session count as one ranked session
    ranked = ["s2_garden", "s2_garden", "s2_kiln", "s2_garden", "s2_pottery_start"]
    gold = ("s2_pottery_start", "s2_kiln")
    assert session_recall_at_k(ranked, gold, 2) == 0.5
    assert session_recall_at_k(ranked, gold, 3) == 1.0
    assert session_ndcg_at_k(ranked, gold, 3) == pytest.approx((1 / L3 + 1 / 2) / (1 + 1 / L3))


def test_session_metrics_errors() -> None:
    with pytest.raises(ValueError):
        session_recall_at_k(["a"], (), 1)
    with pytest.raises(ValueError):
        session_ndcg_at_k(["a"], ("a",), 0)
    with pytest.raises(TypeError):
        session_recall_at_k("abc", ("a",), 1)


SIDS = st.sampled_from(["s1", "s2", "s3", "s4", "s5"])


@settings(database=None, deadline=None, max_examples=200)
@given(st.lists(SIDS, max_size=12), st.sets(SIDS, min_size=1), st.integers(1, 8))
def test_session_metrics_properties(ranked: list[str], gold: set[str], k: int) -> None:
    """Session metrics lie in [0, 1]; recall grows with k and equals turn recall on distinct
    sessions; gold sessions first score NDCG 1."""
    r = session_recall_at_k(ranked, gold, k)
    n = session_ndcg_at_k(ranked, gold, k)
    assert 0.0 <= r <= 1.0
    assert 0.0 <= n <= 1.0
    assert session_recall_at_k(ranked, gold, k + 1) >= r
    distinct = list(dict.fromkeys(ranked))
    assert r == recall_at_k(distinct, gold, k)
    perfect = sorted(gold) + [s for s in distinct if s not in gold]
    assert session_ndcg_at_k(perfect, gold, k) == pytest.approx(1.0)
