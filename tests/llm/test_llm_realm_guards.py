"""REALM's LLM extraction and edge decisions against reply shapes a real small model produced."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from labile.plugin import LLMOutputError, Observation
from labile_llm import ScriptedLLM
from labile_realm.construct.decide_llm import reply_predicate
from labile_realm.construct.extract_llm import LLMUnitExtractor, summary_problem
from labile_realm.construct.units import ConversationState

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _obs(text: str, oid: str = "D1:3", **meta: Any) -> Observation:
    return Observation(id=oid, text=text, speaker="Caroline", timestamp=WHEN, session="1",
                       metadata=meta)


def _reply(summary: str) -> str:
    return json.dumps({"summary": summary, "units": [
        {"type": "event", "name": "support group", "description": "Caroline went to an "
         "LGBTQ support group on 2023-05-07.", "time": "2023-05-07"}]})


def test_small_talk_never_reaches_the_model() -> None:
    """A greeting yields no unit and costs no call; a greeting with a photo still asks."""
    llm = ScriptedLLM(replies=[_reply("Caroline shared a photo.")])
    extractor = LLMUnitExtractor(llm)
    state = ConversationState()
    assert extractor.extract(_obs("Hey Mel! Good to see you!"), state).units == []
    assert llm.calls == [] and extractor.counts["small_talk_skipped"] == 1
    out = extractor.extract(_obs("Thanks!", caption="a rainbow flag"), state)
    assert len(llm.calls) == 1 and len(out.units) == 1
    assert "[shares a photo: a rainbow flag]" in llm.calls[0].prompt


def test_a_summary_copying_the_instructions_is_refused_and_the_old_one_kept() -> None:
    """SmolLM2 wrote the prompt's rules into the running summary; the units still count."""
    copied = ("Use as few units as cover everything new; one meaning per unit; every unit "
              "must be understandable without the others.")
    llm = ScriptedLLM(replies=[_reply("Caroline went to a support group."), _reply(copied),
                               _reply('{"type": "object"} Caroline')])
    extractor = LLMUnitExtractor(llm)
    state = ConversationState()
    extractor.extract(_obs("I went to a support group yesterday."), state)
    assert state.summary == "Caroline went to a support group."
    out = extractor.extract(_obs("It was really powerful.", "D1:4"), state)
    assert len(out.units) == 1 and state.summary == "Caroline went to a support group."
    extractor.extract(_obs("I want to study counseling.", "D1:5"), state)
    assert state.summary == "Caroline went to a support group."
    assert extractor.counts["summary_refused"] == 2
    # the refused summary never reaches the next prompt
    assert "as few units as cover" not in llm.calls[2].prompt.split("RUNNING SUMMARY:")[1]


@pytest.mark.parametrize(("summary", "refused"), [
    ("Caroline and Melanie talked about painting and a charity race.", False),
    ("Melanie asked who did what and with whom at the race.", False),
    ("Small talk (greetings, thanks, compliments) yields no unit.", True),
    ('Caroline. {"units": []}', True),
    ("See the schema above.", True),
    ("2023-05-08, Melanie, Caroline, Liam, Alejandro, Miriam, Jordan, Brian, Liam, Alejandro, "
     "Miriam, Jordan, Brian, Liam, Alejandro, Miriam, Jordan", True),
    ("Caroline went to the group; Melanie went to the group too.", False),
])
def test_summary_problem(summary: str, refused: bool) -> None:
    assert (summary_problem(summary) is not None) is refused


def test_long_context_lines_are_clipped_but_the_new_turn_is_not() -> None:
    llm = ScriptedLLM(replies=[_reply("Caroline talked.")] * 2)
    extractor = LLMUnitExtractor(llm)
    state = ConversationState()
    long_turn = "I went to the lake " + "and then to the hills " * 30
    extractor.extract(_obs(long_turn, "D1:1"), state)
    state.remember(_obs(long_turn, "D1:1"), (), None)
    extractor.extract(_obs(long_turn, "D1:2"), state)
    prompt = llm.calls[1].prompt
    context = prompt.split("RECENT CONTEXT (oldest first):")[1].split("NEW TURN")[0]
    assert "…" in context and len(context.strip()) <= 245
    assert long_turn.strip() in prompt


@pytest.mark.parametrize(("text", "expected"), [
    ("precedes", "realm.precedes"), ("realm.precedes", "realm.precedes"),
    ("causal/precedes", "realm.precedes"), (" Causal / precedes ", "realm.precedes"),
])
def test_reply_predicate_accepts_the_layer_name_form_of_the_table(text: str,
                                                                  expected: str) -> None:
    assert reply_predicate(text) == expected


@pytest.mark.parametrize("text", ["logical/precedes", "causal/loves", "loves", "/"])
def test_reply_predicate_refuses_unknown_names_and_wrong_layers(text: str) -> None:
    with pytest.raises(LLMOutputError):
        reply_predicate(text)


def test_realm_prompts_lose_their_schema_text_under_a_grammar() -> None:
    """Every REALM prompt ends with its schema on one line, which a grammar makes redundant."""
    from labile_llm.json_completion import SCHEMA_ENFORCED_TAIL, strip_schema_text
    from labile_realm import prompts

    for prompt in (prompts.extraction_prompt("", [], "Ann", WHEN, "I ran."),
                   prompts.node_decision_prompt("event: ran", [])):
        stripped = strip_schema_text(prompt)
        assert stripped.endswith(SCHEMA_ENFORCED_TAIL) and '"type"' not in stripped
        assert stripped.split("\n\n")[0] == prompt.split("\n\n")[0]
        assert len(stripped) < len(prompt) - 300
