"""Changes told in passing, and the retrieval rules for questions about now.

* `implied_supersession`: a statement that reports a change replaces the one
  earlier statement of its speaker closest to it in meaning, if close enough;
* `without_tense_cues`: "now" / "still" select a value, they are not matched;
* `demote_questions`: a turn that only asks states no value;
* `order_by_validity(fetch_present=True)`: a present-tense question gets what
  replaced a hit even when the search did not find it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from realm_helpers import T0, open_memory, session, turn_events

from labile._model import Node
from labile.plugin import Hit, Reach
from labile_realm.construct.change import reports_change
from labile_realm.construct.own_words import OwnWords
from labile_realm.construct.supersede import implied_supersession
from labile_realm.retrieve.validity import (
    demote_questions,
    order_by_validity,
    without_tense_cues,
)
from labile_realm.schema import EVENT, SUPERSEDES


def _event(nid: str, text: str, days: float, speaker: str = "Ann", **attrs: Any) -> Node:
    when = T0 + timedelta(days=days)
    return Node(id=nid, kind=EVENT, content=text, time_start=when, created_at=when,
                attrs={"speaker": speaker, "said_at": when.isoformat(), **attrs})


NEW = _event("new", "nope, down to one cup in the morning now", 60)


def _nearest(*pairs: tuple[Node, float]) -> Any:
    return lambda _event: list(pairs)


# -- implied supersession (unit) ----------------------------------------------------------
def test_a_reported_change_replaces_the_closest_earlier_statement_of_its_speaker() -> None:
    old = _event("old", "I'm at like 3 cups of coffee a day", 0)
    other = _event("other", "I run twice a week", 5)
    change = implied_supersession(NEW, _nearest((other, 0.45), (old, 0.6)))
    assert [n.id for n in change.nodes] == ["old"]
    marked = change.nodes[0]
    assert marked.superseded_by == ("new",) and marked.valid_to == NEW.learned_at
    assert [(e.src, e.dst, e.predicate) for e in change.edges] == [("new", "old", SUPERSEDES)]


@pytest.mark.parametrize("old", [
    _event("o", "I'm at 3 cups a day", 0, speaker="Bo"),                  # someone else
    _event("o", "are you still on 3 cups a day?", 0, act="question"),     # asks, states nothing
    _event("o", "I'm at 3 cups a day", 0, clause_of="x"),                 # a clause, not a turn
    _event("o", "I'm at 3 cups a day", 90),                               # said later
    _event("o", "I'm at 3 cups a day", 0, valid_to=T0.isoformat(),        # already replaced
           superseded_by=["z"]),
])
def test_only_an_earlier_current_statement_of_the_same_speaker_is_replaced(old: Node) -> None:
    assert implied_supersession(NEW, _nearest((old, 0.9))).edges == ()


def test_a_change_about_one_kind_of_value_ends_no_statement_about_another() -> None:
    """A choir "instead" of the band ends the band, not the flat found last month,
    even where the flat is closer in meaning."""
    flat = _event("flat", "I found a room! shared flat in Ruzafa, moving Sept 1", 0)
    band = _event("band", "rehearsal every Thursday, we have a gig on Friday", 0)
    choir = _event("choir", "it was time. I joined a choir instead, it meets Tuesdays", 60)
    change = implied_supersession(choir, _nearest((flat, 0.7), (band, 0.5)))
    assert [n.id for n in change.nodes] == ["band"]
    # a statement of no known kind can still be what the change is about
    plain = _event("plain", "Thursdays are my favourite night", 0)
    assert [n.id for n in implied_supersession(choir, _nearest((plain, 0.5))).nodes] \
        == ["plain"]


def test_a_change_told_again_in_the_same_session_does_not_end_the_first_telling() -> None:
    """ "ok change of plans, I'm deferring law school to January" and, a minute later,
    "the school lets me start in the spring term instead": one change told twice, and
    the first telling stays current; a plain statement of the same session can be
    ended ("keto breakfast" then "I'm done with keto")."""
    first = _event("first", "ok change of plans. I'm deferring law school to January", 30,
                   session="D4")
    a_minute = 1 / 1440
    again = _event("again", "the school lets me start in the spring term instead",
                   30 + a_minute, session="D4")
    assert reports_change(first.content or "")
    assert implied_supersession(again, _nearest((first, 0.8))).edges == ()
    keto = _event("keto", "eggs and bacon, water. Keto is going fine", 30, session="D4")
    done = _event("done", "I think I'm done with keto, I'll eat normal again", 30 + a_minute,
                  session="D4")
    assert [n.id for n in implied_supersession(done, _nearest((keto, 0.8))).nodes] == ["keto"]


def test_a_change_that_refers_back_is_read_with_the_speakers_turn_before() -> None:
    """ "we're pushing it to April": the trip was named in the speaker's turn before
    ("bad news on the Japan trip"); the change is read with that turn (its words and
    its kind) and ends the earlier plan, not the turn that named it."""
    plan = _event("plan", "two weeks, Tokyo, Kyoto and maybe Hiroshima", 0, session="S2")
    job = _event("job", "the company launch is in October", 1, session="S2")
    named = _event("named", "But first, bad news on the Japan trip", 60, session="S5")
    push = _event("push", "we're pushing it to April next year, the launch is in October",
                  60.001, session="S5")
    read: list[str] = []

    def words(event: Node, others: Any) -> list[float]:
        read.append(event.content or "")
        # without the turn before, the change is closer to the launch than to the trip
        trip = "Japan" in (event.content or "")
        return [{"plan": 0.6 if trip else 0.3, "job": 0.5, "named": 0.2}[n.id] for n in others]

    change = implied_supersession(push, _nearest((named, 0.9), (plan, 0.5), (job, 0.6)),
                                  own_words=words)
    assert [n.id for n in change.nodes] == ["plan"]
    assert read == ["But first, bad news on the Japan trip " + (push.content or "")]
    # without a reference back, the turn is read alone
    alone = _event("alone", "the launch is in April instead of October", 60.001,
                   session="S5")
    read.clear()
    implied_supersession(alone, _nearest((named, 0.9), (plan, 0.5), (job, 0.6)),
                         own_words=words)
    assert read == [alone.content]


@pytest.mark.parametrize("agent", ["assistant", "AI", "bot"])
def test_the_agents_own_turns_replace_nothing(agent: str) -> None:
    """Advice ("let's swap the night-walk cigarette for something else") reports no
    change in anyone's life, even with a cue and a close earlier turn of its own."""
    old = _event("old", "Have you tried cutting down gradually?", 0, speaker=agent)
    advice = _event("new", "Let's swap the night cigarette for a walk instead", 5,
                    speaker=agent)
    assert reports_change(advice.content or "")
    assert implied_supersession(advice, _nearest((old, 0.9))).edges == ()


def test_nothing_is_replaced_below_the_threshold_or_without_a_cue() -> None:
    old = _event("old", "I'm at 3 cups a day", 0)
    assert implied_supersession(NEW, _nearest((old, 0.39)), min_similarity=0.4).edges == ()
    plain = _event("plain", "one cup in the morning, green tea after lunch", 60)
    assert implied_supersession(plain, _nearest((old, 0.9))).edges == ()
    asked = _event("asked", "are you down to one cup now?", 60, act="question")
    assert implied_supersession(asked, _nearest((old, 0.9))).edges == ()


def test_the_turns_own_words_decide_when_given() -> None:
    """``own_words`` re-scores the licit candidates: close stored descriptions with
    unrelated words replace nothing, and the closest in words is the one replaced."""
    coffee = _event("coffee", "I'm at 3 cups of coffee a day", 0)
    run = _event("run", "I read twice a week", 5)
    asked: list[list[str]] = []

    def words(event: Node, others: Any) -> list[float]:
        asked.append([n.id for n in others])
        return [{"coffee": 0.55, "run": 0.1}[n.id] for n in others]

    change = implied_supersession(NEW, _nearest((run, 0.85), (coffee, 0.8)), own_words=words)
    assert [n.id for n in change.nodes] == ["coffee"]
    assert asked == [["run", "coffee"]]  # only licit candidates, in one call
    unrelated = implied_supersession(NEW, _nearest((run, 0.85)), own_words=words)
    assert unrelated.edges == ()
    # only the five licit candidates closest in the stored vectors are re-scored
    many = [(_event(f"c{i}", f"statement {i}", i), 0.5 + i / 100) for i in range(7)]
    implied_supersession(NEW, _nearest(*many), own_words=lambda e, o: asked.append(
        [n.id for n in o]) or [0.0] * len(o))
    assert asked[-1] == ["c6", "c5", "c4", "c3", "c2"]


def test_own_words_embeds_each_turn_once_and_keeps_a_bounded_cache() -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> Any:
        calls.append(list(texts))
        return np.array([[1.0, 0.0] if "cup" in t else [0.6, 0.8] for t in texts])

    cos = OwnWords(embed, capacity=3)
    a, b = _event("a", "one cup now", 9), _event("b", "3 cups a day", 0)
    c = _event("c", "I run", 1)
    assert cos(a, [b, c]) == pytest.approx([1.0, 0.6])
    assert cos(a, [b]) == pytest.approx([1.0])
    assert calls == [["one cup now", "3 cups a day", "I run"]]
    cos(_event("d", "a new cup", 10), [a])  # a fourth turn: the least recently used goes
    cos(c, [a])
    assert calls[-1] == ["I run"]


@pytest.mark.parametrize(("text", "change"), [
    ("nope, down to one cup", True), ("we outgrew the coworking space", True),
    ("I deferred Chicago to next year", True), ("sold the car!", True),
    ("I used to drink four cups, now one", False),  # about how things were
    ("are you still smoking?", False), ("the kitchen has blue tiles", False),
    ("I finally switched to day shifts", True), ("it's 20 minutes instead of 40", True),
    # words that also fill any friendly chat are no report of a change
    ("You found your true self and now you're helping others.", False),
    ("I'd love to see another painting of yours!", False),
    ("Excited for this new chapter!", False), ("I started looking into counseling", False),
    ("It's so peaceful waking up to the sound of birds", False),
    ("Nope, never been to something like that.", False),
    # a cue in a question is not a report, even before a photo's caption
    ("I'm in awe. Have you made any more art lately? [photo: a window]", False),
    # moving home is a change; moving things is not
    ("we're moving to Denver in May", True), ("moved out of the Ferndale place", True),
    ("new cabinets, and moving the sink under the window", False),
])
def test_what_reports_a_change(text: str, change: bool) -> None:
    assert reports_change(text) is change


_CANDIDATE = st.tuples(st.sampled_from(["Ann", "Bo"]), st.integers(-30, 30),
                       st.floats(0.0, 1.0), st.booleans())


@settings(max_examples=60, deadline=None)
@given(st.lists(_CANDIDATE, max_size=6), st.floats(0.0, 1.0))
def test_at_most_one_replacement_and_only_a_licit_one(cands: list[Any], floor: float) -> None:
    """Whatever the neighbours: one node at most, of the same speaker, said
    before, a statement, the most similar such one, and at or above the floor."""
    nodes = [(_event(f"n{i}", "I have three", 60 + d, speaker=who,
                     **({"act": "question"} if asks else {})), sim)
             for i, (who, d, sim, asks) in enumerate(cands)]
    change = implied_supersession(NEW, _nearest(*nodes), min_similarity=floor)
    assert len(change.nodes) == len(change.edges) <= 1
    licit = [(n, s) for n, s in nodes if n.attrs["speaker"] == "Ann"
             and n.learned_at < NEW.learned_at and n.attrs.get("act") != "question"]
    if change.nodes:
        best = max(s for _, s in licit)
        replaced = next(s for n, s in licit if n.id == change.nodes[0].id)
        assert replaced == best >= floor
    else:
        assert not licit or max(s for _, s in licit) < floor


# -- implied supersession (construction) ----------------------------------------------------
CHAT = [
    (1, [("Ann", "we rent four desks at a coworking space downtown for the team"),
         ("Bo", "how is the team doing?"),
         ("Ann", "the team loves the pottery class on Thursdays")]),
    (2, [("Ann", "we outgrew the coworking space downtown, the team has its own office now")]),
]


def _ingest(**extractor: Any) -> Any:
    mem = open_memory(extractor={"type": "realm.construct", **extractor}) if extractor \
        else open_memory()
    for n, turns in CHAT:
        mem.add(session(n, turns, start=T0 + timedelta(days=60 * (n - 1))), namespace="u")
    return mem


def test_a_change_told_in_passing_supersedes_what_it_is_about() -> None:
    ev = turn_events(_ingest())
    assert ev["D1:1"].superseded_by == (ev["D2:1"].id,)
    assert ev["D1:3"].is_current() and ev["D1:2"].is_current()
    assert ev["D2:1"].is_current()


def test_implied_supersession_can_be_turned_off() -> None:
    mem = _ingest(implied_supersession=False)
    assert all(n.is_current() for n in mem.store.iter_nodes("u"))
    assert not [e for e in mem.store.iter_edges("u") if e.predicate == SUPERSEDES]


# -- retrieval ----------------------------------------------------------------------------
@pytest.mark.parametrize(("question", "stripped"), [
    ("Is Diego still at the WeWork on Broadway?", "Is Diego at the WeWork on Broadway?"),
    ("What does Aiko do these days?", "What does Aiko do?"),
    ("Where is Ravi living at the moment?", "Where is Ravi living?"),
    ("Does she still run, right now?", "Does she run?"),
    ("Where does Ann live?", "Where does Ann live?"),
    ("Now?", "Now?"),  # nothing would be left: the question as it is
])
def test_the_words_that_ask_for_now_are_not_matched(question: str, stripped: str) -> None:
    assert without_tense_cues(question) == stripped


def _hit(node: Node, score: float) -> Hit:
    return Hit(node=node, score=score, via=Reach(atom="t"))


def test_a_turn_that_only_asks_is_demoted_for_a_question_about_a_value() -> None:
    asks = _hit(_event("q", "are you still on 3 cups?", 0, act="question"), 1.0)
    says = _hit(_event("s", "down to one cup", 0), 0.9)
    demote_questions([asks, says], "now", 0.3)
    assert asks.score == pytest.approx(0.7) and says.score == pytest.approx(0.9)
    for tense in ("any",):
        untouched = _hit(_event("q", "are you still on 3 cups?", 0, act="question"), 1.0)
        demote_questions([untouched], tense, 0.3)
        assert untouched.score == 1.0


def test_a_present_question_gets_what_replaced_a_hit_even_if_not_found() -> None:
    mem = _ingest()
    ev = turn_events(mem)
    late = T0 + timedelta(days=90)
    for fetch, expect in ((False, ["D1:1"]), (True, ["D2:1", "D1:1"])):
        hits = [_hit(ev["D1:1"], 1.0)]
        order_by_validity(mem.store, "u", hits, "present", late, fetch_present=fetch)
        hits.sort(key=lambda h: -h.score)
        assert [h.node.sources[0] for h in hits] == expect
