"""Offline relations beyond the bookkeeping edges: causal clauses, plans, facts, analogies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from realm_helpers import open_memory, session

from labile._model import Node
from labile_realm.construct.neighbourhood import Candidate
from labile_realm.construct.relations import (
    analogies,
    fact_relations,
    plan_supersessions,
    session_highlights,
    shared_topic,
)
from labile_realm.schema import (
    ANALOGOUS_TO,
    COMPRISES,
    CONSTRAINS,
    CONTRADICTS,
    CORRELATES,
    ENABLES,
    EVENT,
    FACT,
    IMPLIES,
    INSTANTIATES,
    RESULTS_IN,
    SUMMARIZES,
    SUPERSEDES,
    TRIGGERS,
)
from labile_text.discourse import causal_links

T0 = datetime(2024, 3, 4, 10, 0, tzinfo=UTC)


# -- labile_text.discourse --------------------------------------------------------------


def test_explicit_markers_give_the_relation_they_state() -> None:
    links = causal_links([
        "I went to a support group yesterday.",
        "It made me feel accepted and brave.",
    ])
    assert [(lk.relation, lk.cause, lk.marker) for lk in links] == [
        ("results_in", "I went to a support group yesterday.", "made me"),
    ]
    (so,) = causal_links(["It really bugged me, so I tried to apologize to them."])
    assert so.relation == "triggers" and so.effect.startswith("I tried")
    (helped,) = causal_links(["Painting and drawing have helped me explore my identity."])
    assert helped.relation == "enables" and helped.cause == "Painting and drawing"
    (limit,) = causal_links(["Last month I got hurt and had to take a break from pottery."])
    assert limit.relation == "constrains" and limit.cause == "Last month I got hurt"
    (because,) = causal_links(["I painted the lake because the water looked so calming."])
    assert because.relation == "triggers" and because.cause == "the water looked so calming"


def test_no_link_without_content_or_antecedent() -> None:
    # An anaphoric opening with nothing before it in the turn: no cause to name.
    assert causal_links(["It made me so happy!"]) == []
    # Small talk before it is no antecedent either.
    assert causal_links(["Thanks, Mel!", "It really motivated me for sure."]) == []
    # Questions state no cause.
    assert causal_links(["Why did it make you change your plans?"]) == []
    # A one-word side carries no content.
    assert causal_links(["Yes, so I did."]) == []


def test_a_sibling_effect_is_not_a_cause() -> None:
    links = causal_links([
        "I read a book about a trans girl last month.",
        "It taught me self-acceptance and how to find support.",
        "It showed me that tough times don't last.",
    ])
    # The second "It" points at the book, not at the sentence before it.
    assert len(links) == 1 and links[0].cause.startswith("I read a book")


_WORDS = st.sampled_from([
    "I", "it", "made", "me", "so", "because", "helped", "happy", "the", "park", "ran",
    "painting", "and", "had", "to", "stop", "that's", "why", "we", "went", "hiking", ",",
    "?", "thanks", "group", "inspired", "feel",
])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_WORDS, min_size=1, max_size=14).map(" ".join), max_size=5))
def test_links_quote_the_turn(sentences: list[str]) -> None:
    """Property: every cause and effect is made of the turn's own words, neither is a
    question, and there is at most one link per sentence."""
    links = causal_links(sentences)
    assert len(links) <= len(sentences)
    said = " ".join(" ".join(s.split()) for s in sentences).casefold()
    for link in links:
        assert link.cause.casefold() in said and link.effect.casefold() in said
        assert not link.cause.endswith("?") and not link.effect.endswith("?")


# -- clause units through the constructor -------------------------------------------------


def test_a_stated_cause_becomes_two_linked_clause_events() -> None:
    mem = open_memory()
    mem.add(session(1, [
        ("Ann", "I went to a pride parade last week. It made me feel like I belonged."),
        ("Bob", "That sounds wonderful!"),
    ]), namespace="u")
    edges = list(mem.store.iter_edges("u"))
    (link,) = [e for e in edges if e.predicate == RESULTS_IN]
    nodes = {n.id: n for n in mem.store.get_nodes("u", [link.src, link.dst])}
    cause, effect = nodes[link.src], nodes[link.dst]
    assert cause.kind == effect.kind == EVENT
    assert cause.attrs["role"] == "cause" and effect.attrs["role"] == "effect"
    assert cause.sources == effect.sources == ("D1:1",)
    assert "Ann went to a pride parade" in cause.content
    assert "belonged" in link.description and 0 < link.weight < 1
    # The turn's event comprises both clauses; the clauses take no other edge.
    turn_event = cause.attrs["clause_of"]
    parts = {e.dst for e in edges if e.predicate == COMPRISES and e.dst in nodes}
    assert parts == {cause.id, effect.id}
    assert all(e.src != turn_event for e in edges if e.dst == turn_event)  # not self-linked
    clause_ids = {cause.id, effect.id}
    other = [e for e in edges if (e.src in clause_ids or e.dst in clause_ids)
             and e.predicate not in (COMPRISES, RESULTS_IN)]
    assert other == []


def test_clauses_can_be_switched_off() -> None:
    mem = open_memory(extractor={"type": "realm.construct",
                                 "extraction": {"clauses": False}})
    mem.add(session(1, [("Ann", "The support group helped me accept myself.")]), namespace="u")
    assert not [e for e in mem.store.iter_edges("u") if e.predicate in (ENABLES, COMPRISES)
                and e.src.startswith("ev")]


# -- relations between nodes -----------------------------------------------------------


def _event(key: str, text: str, speaker: str, session_: str, day: int, **attrs: object) -> Node:
    when = T0 + timedelta(days=day)
    return Node(id=key, kind=EVENT, content=text, description=text, created_at=when,
                updated_at=when, sources=(key,),
                attrs={"speaker": speaker, "session": session_, "said_at": when.isoformat(),
                       "act": "statement", **attrs})


def _fact(key: str, statement: str, subject: str, attribute: str, value: str) -> Node:
    return Node(id=key, kind=FACT, content=statement, description=statement, created_at=T0,
                updated_at=T0, sources=(key,),
                attrs={"statement": statement, "subject": subject, "attribute": attribute,
                       "value": value, "stated_at": T0.isoformat()})


def _cand(node: Node, sim: float = 0.7, previous: bool = False) -> Candidate:
    return Candidate(node=node, similarity=sim, source="similarity", previous_turn=previous)


def test_a_reported_plan_is_superseded_only_by_its_own_speaker() -> None:
    plan = _event("p", "I'm going to a transgender conference this month!", "Ann", "1", 0)
    done = _event("d", "I went to an LGBTQ conference two days ago.", "Ann", "2", 20)
    (op,) = plan_supersessions(done, [_cand(plan)])
    assert (op.src, op.dst, op.predicate) == ("d", "p", SUPERSEDES)
    other = _event("o", "I went to an LGBTQ conference two days ago.", "Bob", "2", 20)
    assert plan_supersessions(other, [_cand(plan)]) == []
    unrelated = _event("u", "I went hiking two days ago.", "Ann", "2", 20)
    assert plan_supersessions(unrelated, [_cand(plan)]) == []
    not_done = _event("n", "The conference sounds fun.", "Ann", "2", 20)
    assert plan_supersessions(not_done, [_cand(plan)]) == []


def test_fact_relations() -> None:
    likes = _fact("f1", "Ann loves pottery.", "Ann", "likes", "pottery")
    specific = _fact("f2", "Ann loves pottery classes.", "Ann", "likes", "pottery classes")
    hates = _fact("f3", "Ann hates pottery.", "Ann", "dislikes", "pottery")
    case = _event("e1", "Last Friday I took my kids to a pottery workshop.", "Ann", "2", 3)
    not_dated = _event("e2", "Pottery is such a calming hobby.", "Ann", "2", 3)
    by_other = _event("e3", "Last Friday I went to a pottery workshop.", "Bob", "2", 3)
    ops = fact_relations(likes, [_cand(specific), _cand(hates), _cand(case), _cand(not_dated),
                                 _cand(by_other)])
    found = {(o.src, o.predicate, o.dst) for o in ops}
    assert found == {("f2", IMPLIES, "f1"), ("f1", CONTRADICTS, "f3"),
                     ("f1", INSTANTIATES, "e1")}


def test_analogy_needs_an_explicit_parallel_and_the_other_speakers_turn() -> None:
    before = _event("b", "I went hiking in the Alps with my brother.", "Ann", "1", 0)
    reply = _event("r", "That reminds me of when I hiked in Norway.", "Bob", "1", 0)
    (op,) = analogies(reply, [_cand(before, previous=True)])
    assert (op.src, op.dst, op.predicate) == ("r", "b", ANALOGOUS_TO)
    assert analogies(reply, [_cand(before, previous=False)]) == []
    agreement = _event("a", "Same here, me too!", "Bob", "1", 0)
    assert analogies(agreement, [_cand(before, previous=True)]) == []


def test_shared_topic_ignores_names_and_small_talk() -> None:
    a = _event("a", "Wow Mel, thanks! Researching adoption agencies for my family dream.",
               "Caroline", "1", 0, listener="Melanie")
    b = _event("b", "Thanks Caroline! The adoption agencies sound great for your dream.",
               "Melanie", "2", 9, listener="Caroline")
    assert shared_topic(a, b) == {"adopt", "agenc", "dream", "research"} & shared_topic(a, b)
    assert {"mel", "carolin", "melani", "thank"}.isdisjoint(shared_topic(a, b))
    short = _event("c", "Thanks Caroline, great!", "Melanie", "2", 9)
    assert shared_topic(a, short) == set()


def test_highlights_skip_questions_and_captions() -> None:
    events = [
        _event("q", "What did you paint at the lake last weekend with the kids?", "A", "1", 0),
        _event("c", "Nice! [photo: a long caption about a painting of a sunset over a lake]",
               "B", "1", 0),
        _event("s", "I painted a sunset over the lake with my two kids last weekend.",
               "B", "1", 0),
    ]
    picked = session_highlights(events)
    assert [ev.id for ev, _, _ in picked] == ["s"]


def test_constructor_writes_plan_and_preference_relations() -> None:
    mem = open_memory()
    mem.add(session(1, [
        ("Ann", "I love pottery. I'm going to a pottery class next month with my sister."),
        ("Bob", "I went hiking in the Alps with my brother last week."),
    ]), namespace="u")
    mem.add(session(2, [
        ("Ann", "I finally went to the pottery class last Friday, it was great."),
    ]), namespace="u")
    found = {(e.src[:2], e.predicate, e.dst[:2]) for e in mem.store.iter_edges("u")}
    assert ("ev", SUPERSEDES, "ev") in found  # the report replaces the plan
    assert ("fa", INSTANTIATES, "ev") in found  # a dated case of the preference
    assert ("ep", SUMMARIZES, "ev") in found


def test_constructor_writes_analogies_and_stated_causes() -> None:
    mem = open_memory()
    mem.add(session(1, [
        ("Bob", "I went hiking in the Alps with my brother last week."),
        ("Ann", "That reminds me of when I hiked in Norway with my dad."),
        ("Bob", "My knee hurt and I had to stop running. My friends and family helped me "
                "stay positive."),
    ]), namespace="u")
    edges = list(mem.store.iter_edges("u"))
    predicates = {e.predicate for e in edges}
    assert {ANALOGOUS_TO, CONSTRAINS, ENABLES} <= predicates
    # Symmetric analogy: the store writes the reverse edge.
    analog = [e for e in edges if e.predicate == ANALOGOUS_TO]
    assert {(e.src, e.dst) for e in analog} == {(e.dst, e.src) for e in analog}


def test_correlates_needs_a_shared_subject() -> None:
    mem = open_memory()
    mem.add(session(1, [("Ann", "Thanks so much, that's awesome, love it!")]), namespace="u")
    mem.add(session(2, [("Ann", "Thanks so much, that's awesome, love it!!")]), namespace="u")
    assert not [e for e in mem.store.iter_edges("u") if e.predicate == CORRELATES]


def test_triggers_edges_point_from_cause_to_effect() -> None:
    mem = open_memory()
    mem.add(session(1, [("Ann", "The posters were amazing and full of pride. "
                                "It inspired me to make some art.")]), namespace="u")
    (edge,) = [e for e in mem.store.iter_edges("u") if e.predicate == TRIGGERS]
    src, dst = mem.store.get_nodes("u", [edge.src])[0], mem.store.get_nodes("u", [edge.dst])[0]
    assert src.attrs["role"] == "cause" and "posters" in src.content
    assert dst.attrs["role"] == "effect" and "art" in dst.content
