"""Online writing: units, descriptors, temporal and capped semantic links, the buffer."""

from __future__ import annotations

import json

import pytest
from allmem_helpers import open_memory, session

from labile._errors import LLMError
from labile._model import NodeFilter
from labile.text.tokenize import words
from labile_allmem.describe import Evidence, OfflineDescriber, OfflineDescriptorConfig
from labile_allmem.schema import SEMANTIC, TEMPORAL, UNIT, is_active, unit_id
from labile_llm import ScriptedLLM


def units(mem, ns="n"):
    return {n.id: n for n in mem.store.iter_nodes(ns, NodeFilter(kinds=frozenset({UNIT})))}


def test_unit_evidence_is_exactly_the_turn_text():
    """content is the turn text byte for byte; speaker, time, caption live in fields."""
    text = "  I finally finished the 1,000-piece puzzle!!  \n  Took me 3 weeks 😅 "
    mem = open_memory()
    mem.add(session(1, [("Ann", text)], caption={0: "a completed jigsaw puzzle"}),
            namespace="n")
    (unit,) = units(mem).values()
    assert unit.content == text
    assert unit.id == unit_id("s1:0")
    assert unit.sources == ("s1:0",)
    assert unit.attrs["speaker"] == "Ann"
    assert unit.attrs["caption"] == "a completed jigsaw puzzle"
    assert "jigsaw" not in unit.content
    assert "[shares a photo: a completed jigsaw puzzle]" in unit.description
    assert unit.time_start is not None and unit.visible
    assert unit.attrs["buffered"] is True and unit.attrs["origin"] == "turn"
    assert unit.embedding is not None


def test_offline_descriptor_is_extractive():
    """Every summary word comes from the evidence, the speaker or the quoted context."""
    describer = OfflineDescriber(OfflineDescriptorConfig(summary_words=8))
    item = Evidence(
        text="Hey! I went hiking near Lake Tahoe with my brother last weekend. It rained "
             "a lot but the views were worth it. We also saw a bear.",
        speaker="Ann", previous=("Bob", "What did you do last weekend?"),
    )
    desc = describer.describe([item])[0]
    allowed = set(words(item.text)) | {"ann", "bob", "replying", "to"} | set(words(
        item.previous[1]))
    assert set(words(desc.summary)) <= allowed
    assert desc.summary.startswith("Ann: ")
    assert "(replying to Bob: What did you do last weekend?)" in desc.summary
    assert 1 <= len(desc.keywords) <= 5
    for kw in desc.keywords:
        assert set(words(kw)) <= set(words(item.text))


def test_short_answer_says_what_it_replies_to():
    """A short reply's descriptor quotes the question it answers; the evidence does not."""
    mem = open_memory()
    mem.add(session(1, [("Bob", "Did you ever go back to the pottery class?"),
                        ("Ann", "Yes, last Tuesday!")]), namespace="n")
    answer = units(mem)[unit_id("s1:1")]
    assert answer.content == "Yes, last Tuesday!"
    assert "pottery class" in answer.description
    assert answer.attrs["reply_to"] == unit_id("s1:0")
    hits = mem.search("When did Ann go back to the pottery class?", namespace="n", k=2)
    assert unit_id("s1:1") in [h.node.id for h in hits.hits]


def test_no_reply_context_for_the_same_speaker_or_long_statements():
    """Context is added only for answers to another speaker's question or short turns."""
    describer = OfflineDescriber()
    same = Evidence(text="Yes!", speaker="Ann", previous=("Ann", "Am I right?"))
    assert "replying" not in describer.describe([same])[0].summary
    long_statement = Evidence(
        text="I spent the whole afternoon repotting the tomato seedlings in the greenhouse "
             "because the old clay containers were cracked, then I watered the orchids, "
             "fixed the fence and cooked lentil soup.",
        speaker="Ann", previous=("Bob", "The weather was nice today."))
    assert "replying" not in describer.describe([long_statement])[0].summary


def test_temporal_link_to_previous_unit_of_the_same_session_across_adds():
    """Each turn links to the previous turn of its session, even across add calls."""
    mem = open_memory()
    turns = [("Ann", "First."), ("Bob", "Second."), ("Ann", "Third.")]
    mem.add(session(1, turns)[:2], namespace="n")
    mem.add(session(1, turns)[2:], namespace="n")
    mem.add(session(2, [("Ann", "New session.")]), namespace="n")
    temporal = {(e.src, e.dst) for e in mem.store.iter_edges("n") if e.predicate == TEMPORAL}
    assert temporal == {
        (unit_id("s1:1"), unit_id("s1:0")),
        (unit_id("s1:2"), unit_id("s1:1")),
    }


def test_semantic_links_respect_the_out_degree_cap():
    """Active semantic out-degree never exceeds d_σ, reverse links included."""
    mem = open_memory(write={"semantic_cap": 3, "semantic_threshold": 0.0})
    turns = [("Ann", f"My garden has {i} tomato plants and basil") for i in range(12)]
    mem.add(session(1, turns), namespace="n")
    out: dict[str, int] = {}
    for e in mem.store.iter_edges("n"):
        if e.predicate == SEMANTIC and is_active(e):
            out[e.src] = out.get(e.src, 0) + 1
            assert 0.0 <= e.weight <= 1.0
    assert out and max(out.values()) == 3
    inactive = [e for e in mem.store.iter_edges("n")
                if e.predicate == SEMANTIC and not is_active(e)]
    assert inactive and all(e.weight == 0.0 for e in inactive)


def test_semantic_threshold_filters_links():
    """No semantic link is written below the similarity threshold."""
    mem = open_memory(write={"semantic_threshold": 0.99})
    mem.add(session(1, [("Ann", "I like green tea."), ("Bob", "The train was late.")]),
            namespace="n")
    assert not [e for e in mem.store.iter_edges("n") if e.predicate == SEMANTIC]


def test_every_new_unit_enters_the_buffer():
    """The consolidation buffer is persisted as unit attrs."""
    mem = open_memory()
    report = mem.add(session(1, [("Ann", "One."), ("Bob", "Two.")]), namespace="n")
    assert report.nodes_written == 2
    assert report.details["allmem"]["units"] == 2
    assert all(u.attrs["buffered"] for u in units(mem).values())


DESCRIPTOR = json.dumps({"summary": "Ann adopted a beagle puppy called Rex.",
                         "keywords": ["beagle", "Rex", "adoption"]})


def test_llm_descriptor_used_when_valid():
    """The LLM descriptor becomes the unit's summary, keywords and embedding text."""
    llm = ScriptedLLM(rules=[("search descriptor", DESCRIPTOR)])
    mem = open_memory("allmem-llm", llm=llm)
    mem.add(session(1, [("Ann", "We got a beagle puppy! His name is Rex.")]), namespace="n")
    (unit,) = units(mem).values()
    assert unit.description == (
        f"[{unit.attrs['date_text']}] Ann adopted a beagle puppy called Rex.")
    assert unit.keywords == ("beagle", "Rex", "adoption")
    assert unit.content == "We got a beagle puppy! His name is Rex."
    assert len(llm.calls) == 1 and llm.calls[0].operation == "allmem.describe"
    assert "We got a beagle puppy!" in llm.calls[0].prompt


@pytest.mark.parametrize("reply", [
    "this is not JSON at all",
    json.dumps({"summary": "Ann has a dog.", "keywords": ["dog"]}),  # too few keywords
    json.dumps({"summary": "", "keywords": ["a", "b", "c"]}),  # empty summary
    json.dumps({"summary": "x", "keywords": ["a", "b", "c"], "extra": 1}),
])  # no answer at all (an outage) leaves the turn pending: tests/reliability/test_repair.py
def test_llm_descriptor_fails_closed_to_the_offline_descriptor(reply):
    """Invalid or failed replies are never applied; the offline descriptor is used."""
    llm = ScriptedLLM(rules=[("search descriptor", reply)])
    mem = open_memory("allmem-llm", llm=llm)
    report = mem.add(session(1, [("Ann", "We got a beagle puppy named Rex.")]), namespace="n")
    (unit,) = units(mem).values()
    assert "] Ann: We got a beagle puppy named Rex." in unit.description
    assert report.details["allmem"]["descriptor_fallbacks"] == 1


def test_no_answer_from_the_model_leaves_the_turn_pending():
    """A call that got no answer (not a bad one) builds nothing: the turn waits for a repair."""
    llm = ScriptedLLM(rules=[("search descriptor", LLMError("rate limited"))])
    mem = open_memory("allmem-llm", llm=llm)
    turns = session(1, [("Ann", "We got a beagle puppy named Rex.")])
    report = mem.add(turns, namespace="n")
    assert report.pending == [o.id for o in turns] and units(mem) == {}


def test_date_tag_is_stored_and_optionally_embedded():
    """The description carries the date for search; ``embed_date`` decides the embedding."""
    mem = open_memory(embed_date=True)
    mem.add(session(1, [("Ann", "I love hiking in the Alps.")]), namespace="n")
    mem.add(session(2, [("Ann", "I love hiking in the Alps.")]), namespace="n")
    a, b = units(mem)[unit_id("s1:0")], units(mem)[unit_id("s2:0")]
    assert not (a.embedding == b.embedding).all()
    mem = open_memory(embed_date=False)
    mem.add(session(1, [("Ann", "I love hiking in the Alps.")]), namespace="n")
    mem.add(session(2, [("Ann", "I love hiking in the Alps.")]), namespace="n")
    a, b = units(mem)[unit_id("s1:0")], units(mem)[unit_id("s2:0")]
    assert a.description.startswith(f"[{a.attrs['date_text']}] Ann: ")
    assert a.description != b.description
    assert (a.embedding == b.embedding).all()
    hits = mem.search("What did Ann say on 15 January, 2024?", namespace="n", k=1)
    assert hits.hits[0].node.id == unit_id("s2:0")
