"""A question about now that asks for a kind of value leans towards the latest turn
*about that kind* (`labile_realm.retrieve.topic`, ``realm.aggregate``'s ``lean_on_topic``);
one in the present tense without a cue of time only reorders the head of the list
(``present_recency_weight``, ``present_head``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from realm_helpers import T0, open_memory, session

from labile_realm.retrieve.topic import question_topics, statement_topics


@pytest.mark.parametrize(("question", "kinds"), [
    ("Where does Ann live now?", {"home"}),
    ("What does Ann do these days?", {"work"}),
    ("What's Ann's job now?", {"work"}),
    ("Is Ann still vegetarian?", {"diet"}),
    ("Is Ann still married?", {"relationship"}),
    ("How many cats does Ann have now?", {"pet"}),
    ("How does Ann get to work these days?", {"transport", "work"}),
    ("Is Ann still injured?", {"health"}),
    ("Is Ann still at Google?", {"work"}),
    ("Does Ann climb any more?", {"exercise"}),
    ("How many miles a week is Ann running now?", {"exercise"}),
    ("Is Ann still going to Iceland?", {"trip"}),
    ("How many cigarettes does Ann smoke a day?", {"habit"}),
    ("What kind of music does Ann make these days?", {"music"}),
    # other everyday wordings of the same kinds
    ("What does Ann do for a living now?", {"work"}),
    ("How much does Ann earn now?", {"work"}),
    ("Where is Ann based now?", {"home"}),
    ("Is Ann still seeing Theo?", {"relationship"}),
    ("Is Ann still with Mark?", {"relationship"}),
    ("What does Ann have for breakfast nowadays?", {"diet"}),
    ("What instrument does Ann play these days?", {"music"}),
    ("How is Ann getting to school now?", {"transport"}),
    ("Is Ann still on keto?", {"diet"}),
    ("Is Ann still on medication?", {"health"}),
    ("Is Ann retired?", {"work"}),
    ("Does Ann still do pilates?", {"exercise"}),
    # no kind of value: the lean is left as it is
    ("When did the app go live?", set()),
    ("What does Ann do on Sundays now?", set()),
    ("What is Ann reading now?", set()),
])
def test_the_kind_of_value_a_question_asks_for(question: str, kinds: set[str]) -> None:
    assert question_topics(question) == kinds


@pytest.mark.parametrize(("text", "kind"), [
    ("We signed a lease on a two-bedroom near the park.", "home"),
    ("My first shift at the hospital is Monday.", "work"),
    ("I've gone pescatarian, fish twice a week.", "diet"),
    ("We got the keys and the landlord seems nice.", "home"),
    ("The vet says the puppy is healthy.", "pet"),
    ("I cycle to the office now, 20 minutes.", "transport"),
    ("Back on the wall, easy routes once a week.", "exercise"),
    ("Bad news. We cancelled Iceland.", "trip"),
    ("Day 19 with no cigarettes! Patches are working.", "habit"),
    ("I joined a choir instead, it meets on Tuesdays.", "music"),
])
def test_the_kinds_a_stored_text_talks_about(text: str, kind: str) -> None:
    assert kind in statement_topics(text)


def test_small_talk_talks_about_no_kind() -> None:
    assert statement_topics("Haha yes, see you soon!") == frozenset()


@pytest.mark.parametrize(("text", "kind"), [
    # work as a place or a time, not the job
    ("The canteen at work has a good veggie set.", "work"),
    ("I joined the climbing gym near work, we go after work.", "work"),
    # somewhere one is, not where one lives
    ("Dinner at a little Italian place downtown.", "home"),
    ("The cat is thrilled I'm home more.", "home"),
    # someone else's occupation
    ("Found a new piano teacher though!", "work"),
    # a value named as a former one
    ("I miss the lake. I don't miss my old landlord", "home"),
    ("My ex-boss called, weird.", "work"),
])
def test_words_of_a_kind_used_for_something_else(text: str, kind: str) -> None:
    assert kind not in statement_topics(text)


@pytest.mark.parametrize(("text", "kind"), [
    ("I work as a paramedic now.", "work"),
    ("Some news at work: they made me team lead.", "work"),
    ("less code, more people. no more on-call weekends for me", "work"),
    ("I retired in March, the pension is fine", "work"),
    ("I've been doing keto since last fall", "diet"),
    ("the GP upped my blood pressure tablets", "health"),
    ("pilates twice a week now", "exercise"),
    ("Greetings from our new place in Pittsburgh!", "home"),
    ("Yep, still a data analyst at the bank.", "work"),
    ("Looking at apartments this weekend.", "home"),
    ("I've been seeing Theo for a month, second date went great", "relationship"),
    # the old one still held, and "old" of an age
    ("yep, still in my old room in Benimaclet", "home"),
    ("I'm 30 years old and live in Lyon", "home"),
])
def test_the_same_words_that_do_talk_about_the_kind(text: str, kind: str) -> None:
    assert kind in statement_topics(text)


CHAT = [
    (1, [("Ann", "I work as a nurse at Mass General, night shifts mostly.")]),
    (2, [("Ann", "Big change: I got hired as a paramedic with the city, new job starts soon.")]),
    (3, [("Ann", "I bake bread every weekend these days, sourdough mostly."),
         ("Ann", "And I still do yoga on Sundays.")]),
]


def _memory(**aggregate: Any) -> Any:
    mem = open_memory()
    if aggregate:
        table = mem.config.to_table()
        table["retrieval"]["filter"][0].update(aggregate)
        mem = open_memory(retrieval=table["retrieval"])
    for n, turns in CHAT:
        mem.add(session(n, turns, start=T0 + timedelta(days=60 * (n - 1))), namespace="u")
    return mem


def test_a_question_about_now_leans_to_the_latest_turn_about_what_it_asks() -> None:
    mem = _memory()
    hits = mem.search("What does Ann do for work these days?", namespace="u", k=4).hits
    sources = [h.node.sources[0] for h in hits]
    assert sources.index("D2:1") < sources.index("D1:1")
    # the later small talk got no lean: it is not about work
    lean = {h.node.sources[0]: h.scores.get("recency", 0.0) for h in hits}
    assert lean.get("D3:1", 0.0) == 0.0 and lean["D2:1"] > 0.0


def test_without_lean_on_topic_the_lean_goes_to_the_latest_turn_of_all() -> None:
    mem = _memory(lean_on_topic=False)
    hits = mem.search("What does Ann do for work these days?", namespace="u", k=4).hits
    lean = {h.node.sources[0]: h.scores.get("recency", 0.0) for h in hits}
    assert max(lean, key=lambda s: lean[s]).startswith("D3:")



PRESENT_CHAT = [
    (1, [("Ann", "I work as a nurse at Mass General, night shifts mostly.")]),
    (2, [("Ann", "Big news, my first paramedic shift with the city is on Monday.")]),
    (3, [("Ann", "I bake bread every weekend these days, sourdough mostly.")]),
]
# the second turn talks about work without a statement of it, so no supersession orders
# the two: only the lean does
PRESENT_QUESTION = "What does Ann do for work?"  # present tense, no cue of time


def _present_turns(**aggregate: Any) -> list[str]:
    """The turns of ``PRESENT_QUESTION``'s hits, best first, each once."""
    table = open_memory().config.to_table()
    table["retrieval"]["filter"][0].update(aggregate)
    mem = open_memory(retrieval=table["retrieval"])
    for n, turns in PRESENT_CHAT:
        mem.add(session(n, turns, start=T0 + timedelta(days=60 * (n - 1))), namespace="u")
    hits = mem.search(PRESENT_QUESTION, namespace="u", k=4).hits
    return list(dict.fromkeys(h.node.sources[0] for h in hits))


def test_a_present_question_orders_its_head_latest_first_about_what_it_asks() -> None:
    """The later turn about work comes first; the turns are the ones found without
    the lean, in another order."""
    plain = _present_turns(present_recency_weight=0.0)
    leaned = _present_turns()
    assert plain[0] == "D1:1"  # the nurse turn matches the question best
    assert leaned[:2] == ["D2:1", "D1:1"]
    assert set(leaned) == set(plain)


def test_the_present_lean_never_brings_a_hit_into_the_head() -> None:
    """With a head of one the lean may only lift the best hit: the order stays."""
    assert _present_turns(present_head=1) == _present_turns(present_recency_weight=0.0)


Chat = list[tuple[int, list[tuple[str, str]]]]


def _leans(chat: Chat, question: str, k: int = 4) -> dict[str, float]:
    """The lean (``scores["recency"]``) each event hit of ``question`` got, by turn, over a
    memory of ``chat`` (its sessions 60 days apart)."""
    mem = open_memory()
    for n, turns in chat:
        mem.add(session(n, turns, start=T0 + timedelta(days=60 * (n - 1))), namespace="u")
    hits = mem.search(question, namespace="u", k=k).hits
    return {h.node.sources[0]: h.scores.get("recency", 0.0)
            for h in hits if h.node.kind == "realm.event"}


def test_turns_that_only_ask_and_the_agents_own_turns_get_no_lean() -> None:
    """The lean is towards the latest *statement* of a person: a later "and the job?"
    or the assistant's advice about work gain nothing, the person's turn does."""
    chat = [
        (1, [("Ann", "I work as a nurse at Mass General, night shifts mostly.")]),
        (2, [("Ann", "Big news, I got hired as a paramedic with the city.")]),
        (3, [("Bo", "and the new job?"),
             ("assistant", "For your new job, try to keep a regular sleep schedule at work.")]),
    ]
    lean = _leans(chat, "What does Ann do for work these days?", k=6)
    assert {"D3:1", "D3:2"} <= set(lean)  # both found
    assert lean["D3:1"] == 0.0 and lean["D3:2"] == 0.0
    assert lean["D2:1"] > 0.0


def test_a_search_or_an_intention_gets_no_lean() -> None:
    """A later turn that tells a search ("I'm looking at flats in Pankow") gets no lean:
    the home is still the one the earlier turn found."""
    chat = [
        (1, [("Ann", "Found a flat! Kreuzberg, two rooms, so happy.")]),
        (2, [("Ann", "I'm looking at flats in Pankow too, leaning toward a bigger one.")]),
    ]
    lean = _leans(chat, "Where does Ann live now?")
    assert lean["D2:1"] == 0.0
    assert "D1:1" in lean


def test_a_turn_that_tells_how_things_used_to_be_gets_no_lean_about_now() -> None:
    """ "Ten minutes! I used to do two miles" names the old value: a question about now
    leans to the earlier turn that states the new one, a question about then still
    leans to the turn that tells the past."""
    chat = [
        (1, [("Ann", "Walking two miles before breakfast every day.")]),
        (2, [("Bo", "the physio wants you walking 10 minutes twice a day for now"),
             ("Ann", "Ten minutes! I used to do two miles before breakfast")]),
    ]
    now = _leans(chat, "How much walking is Ann doing these days?")
    assert now["D2:2"] == 0.0 and now["D2:1"] > 0.0
    assert "D2:2" in _leans(chat, "How far did Ann use to walk before?")
