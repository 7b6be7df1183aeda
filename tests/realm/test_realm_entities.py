"""Entity identity in the REALM graph (issue #28 item 5): typed, one node per referent, undoable.

The rules are in `labile_realm.construct.identity`: the same name or short form
is one node unless both mentions have evidence for different types; a guessed
type gives way to evidence; a speaker's self-introduction makes the name an
alias of the speaker's node, logged so that `undo_merge` takes it back.
"""

from __future__ import annotations

import attrs
import pytest
from realm_helpers import open_memory, session

from labile._memory import Memory
from labile._model import Node, NodeFilter, Observation
from labile_realm.construct.identity import (
    INTRODUCTION,
    ROLE_NAMED,
    adopt_type,
    types_conflict,
    undo_merge,
)
from labile_realm.construct.units import ConversationState
from labile_realm.schema import ENTITY


def _entities(mem: Memory, ns: str = "u") -> list[Node]:
    return list(mem.store.iter_nodes(ns, NodeFilter(kinds={ENTITY})))


def _named(mem: Memory, name: str, ns: str = "u") -> list[Node]:
    key = name.casefold()
    return [n for n in _entities(mem, ns)
            if key in {str(n.attrs["name"]).casefold(),
                       *(str(a).casefold() for a in n.attrs.get("aliases", ()))}]


def test_a_pet_named_in_two_sessions_is_one_animal() -> None:
    mem = open_memory()
    mem.add(session(1, [("Elena", "We adopted a puppy! Our dog Biscuit barked at the mailman."),
                        ("Sam", "So cute.")]), namespace="u")
    mem.add(session(2, [("Elena", "Yesterday I took Biscuit to the beach, and Biscuit loved it."),
                        ("Sam", "Did you walk Biscuit's whole route?")]), namespace="u")
    nodes = _named(mem, "Biscuit")
    assert len(nodes) == 1
    assert nodes[0].attrs["category"] == "animal"
    assert {"D1:1", "D2:1", "D2:2"} <= set(nodes[0].sources)


def test_a_guessed_person_becomes_an_animal_on_evidence() -> None:
    mem = open_memory()
    mem.add(session(1, [("Elena", "Yesterday I walked with Pepper for an hour.")]),
            namespace="u")
    first = _named(mem, "Pepper")
    assert [n.attrs["category"] for n in first] == ["person"]
    mem.add(session(2, [("Elena", "My cat Pepper knocked a glass over again.")]), namespace="u")
    nodes = _named(mem, "Pepper")
    assert len(nodes) == 1 and nodes[0].id == first[0].id
    assert nodes[0].attrs["category"] == "animal"
    assert "(animal)" in nodes[0].description and "(person)" not in nodes[0].description


def test_a_preposition_outranks_a_bare_guess() -> None:
    mem = open_memory()
    mem.add(session(1, [("Elena", "Honestly Osaka and Kenji keep me sane.")]), namespace="u")
    assert [n.attrs["category"] for n in _named(mem, "Osaka")] == ["person"]
    mem.add(session(2, [("Elena", "Kenji comes up from Osaka once a month.")]), namespace="u")
    assert [n.attrs["category"] for n in _named(mem, "Osaka")] == ["place"]
    assert [n.attrs["category"] for n in _named(mem, "Kenji")] == ["person"]


def test_same_spelling_with_different_evidence_stays_two_nodes() -> None:
    mem = open_memory()
    mem.add(session(1, [("Elena", "I had an interview at Jordan yesterday, a small studio."),
                        ("Elena", "Next year we are moving to Jordan for good.")]), namespace="u")
    kinds = sorted(n.attrs["category"] for n in _named(mem, "Jordan"))
    assert kinds == ["organization", "place"]


def test_short_form_of_a_titled_name_is_the_same_person() -> None:
    mem = open_memory()
    mem.add(session(1, [("Elena", "My knee hurts so I saw Dr. Lee this morning.")]),
            namespace="u")
    mem.add(session(2, [("Elena", "I told Lee the pain was gone, so I can run again.")]),
            namespace="u")
    nodes = _named(mem, "Dr. Lee")
    assert len(nodes) == 1
    assert "D2:1" in nodes[0].sources
    assert not [n for n in _entities(mem) if n.attrs["name"] == "Lee"]


def test_family_titles_are_not_dropped() -> None:
    mem = open_memory()
    mem.add(session(1, [("Elena", "Yesterday I met Mr. Park and then Mrs. Park at the bakery."),
                        ("Elena", "I also called Park about the lease.")]), namespace="u")
    names = {n.attrs["name"] for n in _entities(mem)}
    assert {"Mr. Park", "Mrs. Park"} <= names


def test_the_speaker_role_and_the_introduced_name_are_one_node() -> None:
    mem = open_memory()
    mem.add(session(1, [("user", "Hi! I'm Elena. I just moved to Denver."),
                        ("assistant", "Welcome! How is Denver so far?")]), namespace="u")
    mem.add(session(2, [("assistant", "Last time Elena's sister was visiting, right?"),
                        ("user", "Yes, she left on Sunday.")]), namespace="u")
    user = _named(mem, "user")
    assert len(user) == 1
    assert user[0].attrs["aliases"] == ["Elena"]
    assert "D2:1" in user[0].sources
    assert not [n for n in _entities(mem) if n.attrs["name"] == "Elena"]
    assert user[0].attrs["merges"][0]["reason"] == INTRODUCTION


def test_an_earlier_name_node_is_linked_not_rewritten() -> None:
    mem = open_memory()
    mem.add(session(1, [("user", "Can you help me plan a weekend?"),
                        ("assistant", "Your friend said you are going to see Elena in Rome?"),
                        ("user", "Hi, my name is Elena, by the way.")]), namespace="u")
    mem.add(session(2, [("assistant", "Is Elena's trip to Rome still on?")]), namespace="u")
    elena = next(n for n in _entities(mem) if n.attrs["name"] == "Elena")
    user = next(n for n in _entities(mem) if n.attrs["name"] == "user")
    assert elena.sources == ("D1:2",)  # the absorbed node keeps its id and evidence
    assert user.attrs["same_as"] == [elena.id]
    assert "D2:1" in user.sources and "D2:1" not in elena.sources
    restored = undo_merge(user, "Elena")
    assert restored.attrs["aliases"] == [] and restored.attrs["same_as"] == []
    state = ConversationState()
    state.index_entity(elena)
    state.index_entity(restored)
    assert state.entity_index["elena"] == elena.id


def test_a_first_turn_introduction_joins_an_existing_name_node() -> None:
    mem = open_memory()
    mem.add(session(1, [("assistant", "Is this Elena? Your brother said you would write."),
                        ("user", "Yes, I'm Elena.")]), namespace="u")
    nodes = _named(mem, "Elena")
    assert len(nodes) == 1 and nodes[0].attrs["aliases"] == ["user"]
    assert _named(mem, "user") == nodes


def test_undo_merge_takes_back_exactly_what_the_merge_added() -> None:
    mem = open_memory()
    mem.add(session(1, [("user", "Working late again."), ("user", "Hi, I'm Elena by the way.")]),
            namespace="u")
    user = _named(mem, "user")[0]
    entry = user.attrs["merges"][0]
    assert entry["alias"] == "Elena" and entry["sources"] == ["D1:2"]
    restored = undo_merge(user, "Elena")
    assert restored.sources == ("D1:1",)
    assert "Elena" not in restored.attrs["aliases"] and "Elena" not in restored.keywords
    assert restored.content == user.content and restored.id == user.id
    with pytest.raises(KeyError, match="logs no merge.*'Elena'"):
        undo_merge(restored, "Elena")


def test_not_an_introduction() -> None:
    mem = open_memory()
    mem.add(session(1, [("user", "I'm Elena's sister, she told me about you.")]), namespace="u")
    user = _named(mem, "user")[0]
    assert user.attrs["aliases"] == []


def test_type_rules() -> None:
    assert types_conflict(("person", "name-word"), ("animal", "animal-noun"))
    assert not types_conflict(("person", ""), ("animal", "animal-noun"))  # a guess gives way
    assert not types_conflict(("place", "form"), ("organization", "work-relation"))
    assert not types_conflict(None, ("animal", "animal-noun"))
    node_attrs = {"category": "place", "category_cue": "form"}
    desc = adopt_type(node_attrs, "Globex (place), mentioned",
                      {"category": "organization", "category_cue": "work-relation"})
    assert node_attrs["category"] == "organization" and desc == "Globex (organization), mentioned"
    kept = {"category": "organization", "category_cue": "name-word"}
    moved = {"category": "place", "category_cue": "home-or-travel"}
    assert adopt_type(kept, "X (organization)", moved) == "X (organization)"
    assert kept["category"] == "organization"


def test_the_index_rebuilt_in_any_order_sends_the_name_to_the_merged_node() -> None:
    """Reopening a store indexes nodes in store order; either order gives the same index."""
    mem = open_memory()
    mem.add(session(1, [("user", "Can you help me plan a weekend?"),
                        ("assistant", "Your friend said you are going to see Elena in Rome?"),
                        ("user", "Hi, my name is Elena, by the way.")]), namespace="u")
    nodes = _entities(mem)
    user = next(n for n in nodes if n.attrs["name"] == "user")
    for order in (nodes, list(reversed(nodes))):
        state = ConversationState()
        for node in order:
            state.index_entity(node)
        assert state.entity_index["elena"] == user.id
        assert state.entity_index["user"] == user.id


def _named_turns(number: int, turns: list[tuple[str, str, str]]) -> list[Observation]:
    """Turns (role, speaker, text) as ingestion writes them once it knows a role's name."""
    obs = session(number, [(speaker, text) for _, speaker, text in turns])
    return [attrs.evolve(o, metadata={"role": role}) for o, (role, _, _) in zip(obs, turns,
                                                                              strict=True)]


def test_a_role_named_at_ingestion_joins_the_role_node() -> None:
    mem = open_memory()
    mem.add(session(1, [("user", "Can you help me plan meals this week?")]), namespace="u")
    mem.add(_named_turns(2, [("user", "Elena", "Yesterday I started at Acme Health."),
                             ("user", "Elena", "Biscuit loves the new park.")]), namespace="u")
    nodes = _named(mem, "user")
    assert len(nodes) == 1 and _named(mem, "Elena") == nodes
    entry = next(m for m in nodes[0].attrs["merges"] if m["alias"] in {"user", "Elena"})
    assert entry["reason"] in {ROLE_NAMED, "same normalised name or alias"}


def test_two_people_writing_as_user_stay_two() -> None:
    mem = open_memory()
    mem.add(_named_turns(1, [("user", "Elena", "I moved to Denver last week."),
                             ("user", "Sam", "I just started a new job at Globex.")]),
            namespace="u")
    assert len(_named(mem, "Elena")) == 1 and len(_named(mem, "Sam")) == 1
    assert _named(mem, "Elena") != _named(mem, "Sam")
