"""Change as a first-class fact: slot statements, supersession at construction, as_of.

The offline reading (`labile_realm.construct.change`), the turn-level
supersession that writes the validity contract (`labile_realm.construct.supersede`),
the LLM edge decision's ``supersedes`` (same outcome, fail-closed), and what
`Memory.search(as_of=…)` and the hit helpers report.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from realm_helpers import EDGE, EXTRACT, NODE, T0, open_memory, reply, session, turn_events

from labile._model import Node, NodeFilter, superseded
from labile_llm import ScriptedLLM
from labile_realm.construct.change import CLASSES, SlotStatement, read_slots, replaces
from labile_realm.schema import FACT, SUPERSEDES


def _slots(sentence: str) -> dict[str, SlotStatement]:
    return {s.slot: s for s in read_slots([sentence], "Ann")}


@pytest.mark.parametrize(("sentence", "slot"), [
    ("I live in Somerville with my roommate.", "home"),
    ("We're moving to Denver in March!", "home"),
    ("We're in Denver now!", "home"),
    ("Our new apartment in Lisbon is tiny.", "home"),
    ("I work as a nurse at Mass General.", "work"),
    ("I'm a nurse at Mass General, night shifts mostly.", "work"),
    # a chat answer states a job without a subject: the speaker's
    ("Yep, still a data analyst at Lakeshore Bank.", "work"),
    # and a home the same way
    ("working from home in East Legon", "home"),
    ("still living in Leeds, with the cat", "home"),
    ("I quit my job at the bank.", "work"),
    ("I got promoted to senior engineer.", "role"),
    ("I'm pescatarian now.", "diet"),
    ("I stopped eating meat in spring.", "diet"),
    ("We got engaged last weekend!", "relationship"),
    ("I drink four cups of coffee a day.", "amount:cup"),
    # how many we are: a team, a household
    ("We're 9 people now, we hired a designer.", "amount:people"),
    ("Shaken. We're 7 again.", "amount:people"),
    ("We have two cats, Miso and Tofu.", "pet:cat"),
    ("We're going to Japan in October.", "plan"),
    ("We cancelled the Japan trip.", "plan"),
])
def test_statements_of_one_at_a_time_values_are_read(sentence: str, slot: str) -> None:
    assert slot in _slots(sentence)


@pytest.mark.parametrize("sentence", [
    "I used to live in Boston.",          # history, not a current value
    "I grew up in Ohio.",
    "Where do you live now?",             # a question
    "She lives in Paris.",                # not the speaker's own statement
    "My sister is a nurse at the clinic.",
    "Found a new piano teacher at the school.",
    "The weather was lovely today.",      # no slot
    "We're 30 minutes away.",             # a distance, not how many we are
    "Living in Paris was amazing.",       # about living there, not that one does
    "living in the moment!",
])
def test_history_questions_and_other_people_give_no_statement(sentence: str) -> None:
    assert read_slots([sentence], "Ann") == []


def test_no_subject_no_statement() -> None:
    assert read_slots(["I live in Somerville."], None) == []


def test_a_different_home_replaces_the_old_one_the_same_home_told_again_does_not() -> None:
    old = _slots("I live in Somerville.")["home"]
    assert replaces(_slots("We moved to Denver.")["home"], old, 0.0)
    assert not replaces(_slots("I still live in Somerville, love it.")["home"], old, 0.0)


def test_loose_classes_need_a_cue_or_closeness() -> None:
    """Two amounts can be about two things: no cue and far apart is no replacement."""
    old = _slots("I drink four cups of coffee a day.")["amount:cup"]
    new_cued = _slots("I'm down to one cup a day now.")["amount:cup"]
    new_plain = _slots("I had two cups of tea with Mia.")["amount:cup"]
    assert replaces(new_cued, old, 0.0)
    assert not replaces(new_plain, old, 0.1)
    assert replaces(new_plain, old, 0.9)


def test_how_many_we_are_changes_when_told_again_differently() -> None:
    """ "We're 9 people now" → "we're 7 again": "again" says it changed back."""
    nine = _slots("We're 9 people now, we hired a designer.")["amount:people"]
    seven = _slots("Shaken. We're 7 again.")["amount:people"]
    assert replaces(seven, nine, 0.0)
    assert not replaces(_slots("We're 9 people, it's a lot.")["amount:people"], nine, 0.0)


def test_a_plan_is_replaced_by_its_cancellation_only() -> None:
    plan = _slots("We're going to Japan in October.")["plan"]
    assert replaces(_slots("We cancelled the Japan trip.")["plan"], plan, 0.0)
    assert not replaces(_slots("We cancelled the gym membership.")["plan"], plan, 0.0)
    assert not replaces(_slots("We're going to Peru in May.")["plan"], plan, 0.0)


_STATEMENTS = st.builds(
    SlotStatement,
    subject=st.sampled_from(["Ann", "Bo"]), cls=st.sampled_from(sorted(CLASSES)),
    key=st.sampled_from(["", "cat", "cup"]),
    value=st.frozensets(st.sampled_from(["denver", "paris", "nurs", "cat", "coffe"]),
                        max_size=3),
    cue=st.booleans(), cancels=st.booleans(),
    numbers=st.frozensets(st.sampled_from(["one", "two", "4"]), max_size=2),
)


@given(_STATEMENTS, st.floats(0.0, 1.0))
@settings(max_examples=200, deadline=None)
def test_a_statement_never_replaces_itself_and_round_trips(s: SlotStatement, sim: float) -> None:
    """Property: in a one-value class (and for plans) a statement never replaces
    itself; any statement survives its stored form unchanged."""
    assert not replaces(s, s, sim) or (s.cls not in {"home", "work", "role", "diet",
                                                     "relationship", "plan"})
    back = SlotStatement.from_attr(s.to_attr())
    assert back is not None and (back.slot, back.value, back.numbers) == (
        s.slot, s.value, s.numbers)


@given(_STATEMENTS, _STATEMENTS, st.floats(0.0, 1.0))
@settings(max_examples=200, deadline=None)
def test_replacement_stays_within_one_subject_and_class(
    a: SlotStatement, b: SlotStatement, sim: float,
) -> None:
    """Property: a replacement is always of the same subject's same class."""
    if replaces(a, b, sim):
        assert a.subject == b.subject and a.cls == b.cls


@pytest.mark.parametrize("raw", [None, "home", {"cls": "home"}, {"subject": "Ann", "cls": "x",
                                 "value": []}, {"subject": "Ann", "cls": "home", "value": "x"}])
def test_malformed_stored_statements_read_as_none(raw: Any) -> None:
    assert SlotStatement.from_attr(raw) is None


# -- construction ---------------------------------------------------------------------
CHAT = [
    (1, [("Ann", "I live in Somerville with my roommate, close to the river."),
         ("Bo", "Nice! How's the coffee habit?"),
         ("Ann", "I drink four cups of coffee a day, night shifts."),
         ("Ann", "We're going to Japan in October with my sister!")]),
    (2, [("Ann", "Big news: we moved to Denver last month."),
         ("Ann", "I'm down to only one cup a day now, sleeping much better."),
         ("Ann", "Sadly we cancelled the Japan trip, money is tight.")]),
]


def _ingest(preset: str = "realm") -> Any:
    mem = open_memory(preset)
    for n, turns in CHAT:
        mem.add(session(n, turns, start=T0 + timedelta(days=60 * (n - 1))), namespace="u")
    return mem


def test_a_new_value_supersedes_the_old_turn_which_stays_as_history() -> None:
    mem = _ingest()
    ev = turn_events(mem)
    moved_at = T0 + timedelta(days=60)
    for old, new in (("D1:1", "D2:1"), ("D1:3", "D2:2"), ("D1:4", "D2:3")):
        assert ev[old].superseded_by == (ev[new].id,), old
        assert ev[old].valid_to == ev[new].learned_at and ev[old].valid_to >= moved_at
        assert ev[old].visible and not ev[old].is_current()
        assert ev[new].is_current()
    supersedes = {(e.src, e.dst) for e in mem.store.iter_edges("u") if e.predicate == SUPERSEDES}
    assert (ev["D2:1"].id, ev["D1:1"].id) in supersedes
    # the small talk in between is untouched
    assert ev["D1:2"].is_current() and ev["D1:2"].superseded_by == ()


def test_facts_of_a_superseded_turn_carry_the_contract_too() -> None:
    mem = _ingest()
    ev = turn_events(mem)
    facts = [f for f in mem.store.iter_nodes("u", NodeFilter(kinds={FACT}))
             if f.sources == ("D1:1",)]
    assert facts and all(f.superseded_by == (ev["D2:1"].id,) for f in facts)


def test_the_ablation_records_no_supersession() -> None:
    mem = _ingest("realm-no-supersede")
    assert all(n.is_current() for n in mem.store.iter_nodes("u"))
    assert not [e for e in mem.store.iter_edges("u") if e.predicate == SUPERSEDES]


def test_the_slot_index_is_rebuilt_from_the_store() -> None:
    """A new process (empty construction state) still knows which value is current."""
    mem = open_memory()
    n, turns = CHAT[0]
    mem.add(session(n, turns), namespace="u")
    extractor = mem.extractor
    extractor._states.clear()  # what a restart loses
    mem.add(session(2, CHAT[1][1], start=T0 + timedelta(days=60)), namespace="u")
    ev = turn_events(mem)
    assert not ev["D1:1"].is_current() and ev["D2:1"].is_current()


def test_now_and_then_questions_and_as_of() -> None:
    mem = _ingest()
    ev = turn_events(mem)
    late = T0 + timedelta(days=90)
    now = mem.search("Where does Ann live now?", namespace="u", k=5, as_of=late)
    ranks = [h.node.sources[0] for h in now.hits]
    assert ranks.index("D2:1") < ranks.index("D1:1")
    top = now.hits[ranks.index("D1:1")]
    assert not top.is_current and top.superseded_by == (ev["D2:1"].id,)
    then = mem.search("Where did Ann use to live?", namespace="u", k=5, as_of=late)
    ranks = [h.node.sources[0] for h in then.hits]
    assert "D1:1" in ranks and ranks.index("D1:1") < ranks.index("D2:1") \
        if "D2:1" in ranks else "D1:1" in ranks
    # as known before the move: nothing from session 2, and Somerville is current
    early = mem.search("Where does Ann live now?", namespace="u", k=5,
                       as_of=T0 + timedelta(days=30))
    assert all(h.node.learned_at <= T0 + timedelta(days=30) for h in early.hits)
    assert all(h.is_current for h in early.hits)
    assert "D1:1" in [h.node.sources[0] for h in early.hits]
    # the store itself is unchanged by an as_of search
    assert not turn_events(mem)["D1:1"].is_current()


def test_as_of_keeps_a_full_list_when_later_turns_would_outrank_the_early_ones() -> None:
    """Nodes learned after ``as_of`` are left out before ranking, not after: twelve later
    turns about the same thing must not fill the top of the list and leave it empty."""
    mem = open_memory()
    mem.add(session(1, [("Ann", "I live in Somerville with my roommate, close to the river."),
                        ("Ann", "Our flat in Somerville has a tiny kitchen.")]), namespace="u")
    later = [("Ann", f"We live in Denver now, week {i}: the flat in Denver is great.")
             for i in range(12)]
    mem.add(session(2, later, start=T0 + timedelta(days=60)), namespace="u")
    cut = T0 + timedelta(days=30)
    for k in (1, 3):
        hits = mem.search("Where does Ann live now?", namespace="u", k=k, as_of=cut).hits
        assert len(hits) == k
        assert all(h.node.learned_at <= cut for h in hits)
        assert hits[0].node.sources[0].startswith("D1:")


def test_superseded_helper_keeps_the_earliest_end_and_rejects_bad_input() -> None:
    node = Node(id="a", kind="realm.event", content="x")
    one = superseded(node, "b", T0 + timedelta(days=2))
    two = superseded(one, "c", T0 + timedelta(days=1))
    assert two.superseded_by == ("b", "c") and two.valid_to == T0 + timedelta(days=1)
    assert two.content == "x" and two.visible
    with pytest.raises(ValueError, match="timezone-aware"):
        superseded(node, "b", T0.replace(tzinfo=None))
    with pytest.raises(ValueError, match="cannot be replaced"):
        superseded(node, "a", T0)
    bad = Node(id="d", kind="realm.event", attrs={"valid_to": "not a time"})
    assert bad.valid_to is None and bad.is_current()


# -- the LLM edge decision ------------------------------------------------------------
FACT_UNIT = {"type": "fact", "name": "Ann lives in Somerville",
             "statement": "Ann lives in Somerville", "description": "Ann's home",
             "keywords": ["Somerville"]}
ADD = reply({"operation": "add", "related": []})
LLM_CONSTRUCT = {"type": "realm.construct", "units": "llm",
                 "decisions": {"type": "realm.write_decider.llm", "min_similarity": 0.0}}


def _llm_pair(edge_reply: str) -> Any:
    llm = ScriptedLLM(rules=[
        (EXTRACT, [reply({"units": [FACT_UNIT], "summary": "Ann's home."}),
                   reply({"units": [{**FACT_UNIT, "name": "Ann lives in Denver",
                                     "statement": "Ann lives in Denver"}],
                          "summary": "Ann moved."})]),
        (NODE, [ADD, reply({"operation": "add", "related": [1]})]),
        (EDGE, edge_reply),
    ])
    mem = open_memory(llm=llm, extractor=LLM_CONSTRUCT)
    mem.add(session(1, [("Ann", "Somerville is home.")]), namespace="u")
    mem.add(session(2, [("Ann", "Denver is home now.")]), namespace="u")
    return mem


def _facts(mem: Any) -> dict[str, Node]:
    return {f.sources[0]: f for f in mem.store.iter_nodes("u", NodeFilter(kinds={FACT}))}


def test_an_llm_supersedes_decision_writes_the_same_contract() -> None:
    """The new fact (the node decided on) replaces the candidate: ``from_target`` is
    the edge new -> old in the decider's wording."""
    mem = _llm_pair(reply({"edges": [{"candidate": 1, "operation": "add",
                                      "predicate": "supersedes", "direction": "from_target",
                                      "description": "moved", "weight": 0.8}]}))
    facts = _facts(mem)
    assert facts["D1:1"].superseded_by == (facts["D2:1"].id,)
    assert facts["D1:1"].valid_to == facts["D2:1"].learned_at and facts["D2:1"].is_current()


def test_an_llm_supersedes_pointing_at_a_newer_node_is_dropped() -> None:
    """The model says the old fact replaces the new one: fail-closed, nothing marked,
    and the edge is not written."""
    mem = _llm_pair(reply({"edges": [{"candidate": 1, "operation": "add",
                                      "predicate": "supersedes", "direction": "to_target",
                                      "description": "moved", "weight": 0.8}]}))
    assert all(f.is_current() for f in _facts(mem).values())
    assert not [e for e in mem.store.iter_edges("u") if e.predicate == SUPERSEDES]


@pytest.mark.parametrize("bad", [
    "{edges: [oops",
    reply({"edges": [{"candidate": 9, "operation": "add", "predicate": "supersedes",
                      "direction": "to_target", "weight": 0.8}]}),
    reply({"edges": [{"candidate": 1, "operation": "add", "predicate": "supersedes",
                      "direction": "sideways", "weight": 0.8}]}),
])
def test_a_malformed_llm_supersedes_marks_nothing(bad: str) -> None:
    mem = _llm_pair(bad)
    assert all(f.is_current() for f in _facts(mem).values())


def test_known_at_drops_what_was_learned_later() -> None:
    from labile._memory import known_at
    from labile._model import Hit, Reach

    cut = T0 + timedelta(days=10)
    later = T0 + timedelta(days=20)
    said_later = Node(id="s", kind="realm.event", attrs={"said_at": later.isoformat()},
                      created_at=later)
    entity = Node(id="e", kind="realm.entity", created_at=T0)  # no time but its creation
    replaced = superseded(Node(id="r", kind="realm.event", time_start=T0, created_at=T0),
                          "s", later)
    hits = [Hit(node=n, score=1.0, via=Reach(atom="t")) for n in (said_later, entity, replaced)]
    out = known_at(hits, cut)
    assert [h.node.id for h in out] == ["e", "r"]
    assert out[1].is_current and out[1].superseded_by == ()
    assert not replaced.is_current()  # the stored node is not touched
    assert [h.node.id for h in known_at(hits, later)] == ["s", "e", "r"]


@pytest.mark.parametrize(("question", "tense"), [
    ("Where does Ann live now?", "now"), ("Does Ann still eat fish?", "now"),
    ("What does Ann do these days?", "now"), ("Where does Ann live?", "present"),
    ("Where did Ann use to live?", "then"), ("What did Ann drink before?", "then"),
    ("Where did Ann live previously?", "then"), ("Where did Ann live in 2022?", "dated"),
    ("What did Ann buy?", "any"), ("When did Ann move?", "any"),
    # a duration, an instrument, a time located by an event: not a question about
    # an old value
    ("How long has Ann had her current job?", "any"),
    # a measure that holds now, asked without a cue of time
    ("How long is Ann's commute?", "present"), ("How long does Ann's run take now?", "now"),
    ("What did Ann use to fix the bike chain?", "any"),
    ("What did Ann do before meeting Bo?", "any"),
    # the date of a plan as it stands now
    ("When is Ann flying to Japan?", "planned"), ("When will Ann start the new job?", "planned"),
    ("What is Ann doing in September?", "planned"), ("What happened to Ann in 2022?", "dated"),
])
def test_the_tense_of_a_question(question: str, tense: str) -> None:
    from labile_realm.retrieve.validity import read_tense

    assert read_tense(question) == tense
