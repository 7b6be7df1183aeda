"""The offline pair rules: restatement (Merge), revision (Update), calibration."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labile.plugin import Node
from labile_allmem.consolidate.calibration import calibrated
from labile_allmem.consolidate.relate import (
    DATED_PLAN_REALISED,
    phatic_act,
    profile,
    restatement,
    revision,
)

T0 = datetime(2024, 3, 4, 10, 0, tzinfo=UTC)


def unit(text: str, *, speaker: str = "Ann", session: int = 1, days: int = 0) -> Node:
    """A unit node as the writer makes it (only what the rules read)."""
    return Node(id=f"u:{session}:{abs(hash(text)) % 10_000}", kind="allmem.unit", content=text,
                time_start=T0 + timedelta(days=days),
                attrs={"speaker": speaker, "session": str(session)})


PLAN = "Thanks! I'm going to a pottery workshop next week. I can't wait."
DONE = "Guess what, I went to the pottery workshop last Saturday and made two bowls."
CAREER = "Lately I've been looking into nursing as a career, I want to help sick kids."
CAREER_AGAIN = "I'm looking into nursing as a career because I want to help kids who are sick."
COMPLIMENT = "Wow, your painting is awesome! Those colours are so vivid."
COMPLIMENT_2 = "Wow, that painting is awesome! The colours are so vivid and bright."


def test_plan_then_report_is_a_revision():
    """A plan followed, in a later session, by the report of it is an Update candidate."""
    older, newer = profile(unit(PLAN)), profile(unit(DONE, session=2, days=14))
    found = revision(newer, older, cos=0.7)
    # "next week" (11-17 March) and "last Saturday" said on 18 March (the 16th): inside.
    assert found is not None and found.kind == DATED_PLAN_REALISED
    undated = profile(unit("I'm going to a pottery workshop soon, I can't wait."))
    found = revision(newer, undated, cos=0.7)
    assert found is not None and found.kind == "plan realised"


def test_a_report_dated_outside_the_plans_window_is_another_occasion():
    """"Next week" then, two months later, "last Saturday": not the planned workshop."""
    older, newer = profile(unit(PLAN)), profile(unit(DONE, session=5, days=60))
    assert revision(newer, older, cos=0.7) is None


@pytest.mark.parametrize(("text", "act"), [
    ("Hey Mel! Good to see you! How have you been?", "greeting"),
    ("Hi Jon, what's up? Anything new?", "greeting"),
    ("Bye Caroline! Take care!", "farewell"),
    ("Thanks, Mel! Talk to you later!", "farewell"),
    ("Hey Mel! I got the job at the bakery last week.", ""),  # it tells something
    ("Hi! Bye!", ""),  # both at once
    ("Wow, that's great!", ""),  # small talk, but no ritual
    ("Hey Jo! How have you been? Hope your knee is better.", ""),  # the listener's affairs
    ("Hey Jo! What's new in your life?", "greeting"),  # asked, not told
])
def test_phatic_act_names_a_turn_that_only_greets_or_takes_leave(text: str, act: str) -> None:
    """Only turns that do nothing but greet, or nothing but take leave, get an act."""
    assert profile(unit(text)).act == act
    assert phatic_act(text, ((text, "statement"),)) == ""


def test_revision_needs_another_session_the_same_speaker_and_a_shared_subject():
    """Same session, another speaker, or an unrelated report: no Update."""
    older = profile(unit(PLAN))
    assert revision(profile(unit(DONE, session=1)), older, cos=0.7) is None
    assert revision(profile(unit(DONE, speaker="Bob", session=2)), older, cos=0.7) is None
    other = "I went to the dentist last Saturday and it was fine."
    assert revision(profile(unit(other, session=2)), older, cos=0.7) is None


def test_a_subject_term_common_everywhere_does_not_name_a_subject():
    """When the shared head is generic across the namespace, nothing is proposed."""
    older, newer = profile(unit(PLAN)), profile(unit(DONE, session=2))
    generic = older.terms | newer.terms
    assert revision(newer, older, cos=0.7, generic=generic) is None


def test_restatement_of_a_fact_merges_but_compliments_do_not():
    """Two first-person statements of one fact are a restatement; two compliments
    to the listener are not, however similar."""
    a, b = profile(unit(CAREER)), profile(unit(CAREER_AGAIN, session=3))
    found = restatement(a, b, cos=0.8)
    assert found is not None and 0.0 < found.strength <= 1.0
    assert restatement(profile(unit(COMPLIMENT)), profile(unit(COMPLIMENT_2)), cos=0.9) is None


def test_restatement_rejects_different_numbers_and_disjoint_dates():
    """The same kind of statement with another value or on another day is not a duplicate."""
    a = profile(unit("I ran 5 miles at the lake with my dog, it was great."))
    b = profile(unit("I ran 8 miles at the lake with my dog, it was great."))
    assert restatement(a, b, cos=0.95) is None
    c = profile(unit("Yesterday I baked bread with my grandma in her kitchen."))
    d = profile(unit("Yesterday I baked bread with my grandma in her kitchen.", days=30))
    assert restatement(c, d, cos=1.0) is None


sentences = st.sampled_from([PLAN, DONE, CAREER, CAREER_AGAIN, COMPLIMENT, COMPLIMENT_2,
                             "Thanks so much!", "Are you coming?", "I moved to Denver in May."])


@settings(max_examples=40, deadline=None)
@given(sentences, sentences, st.floats(min_value=-1.0, max_value=1.0))
def test_restatement_is_symmetric(a: str, b: str, cos: float) -> None:
    """Property: whether two units restate each other does not depend on their order,
    and neither does the strength."""
    pa, pb = profile(unit(a)), profile(unit(b, session=2))
    one, two = restatement(pa, pb, cos), restatement(pb, pa, cos)
    assert (one is None) == (two is None)
    if one is not None and two is not None:
        assert one.strength == pytest.approx(two.strength)


@settings(max_examples=40, deadline=None)
@given(sentences, sentences, st.floats(min_value=-1.0, max_value=1.0))
def test_revision_never_within_one_session(a: str, b: str, cos: float) -> None:
    """Property: a unit never revises another of its own session."""
    assert revision(profile(unit(a)), profile(unit(b)), cos) is None


@given(st.integers(min_value=0, max_value=50), st.integers(min_value=0, max_value=50))
def test_calibration_is_the_posterior_mean_of_a_kinds_precision(correct: int, wrong: int) -> None:
    """Property: a kind's confidence lies strictly between 0 and 1, rises with one
    more correct judgement, falls with one more wrong one, and reaches 0.9 only
    after at least eight judgements."""
    key = ("merge", "k")
    p = calibrated("merge", "k", {key: (correct, correct + wrong)})
    assert 0.0 < p < 1.0
    assert calibrated("merge", "k", {key: (correct + 1, correct + wrong + 1)}) > p
    assert calibrated("merge", "k", {key: (correct, correct + wrong + 1)}) < p
    if p >= 0.9:
        assert correct + wrong >= 8


def test_an_unjudged_kind_is_a_coin_toss() -> None:
    """A kind nobody judged gets 0.5, far below θ = 0.9."""
    assert calibrated("update", "never judged", {}) == 0.5
