"""All-Mem's LLM diagnosis against what a real small model did with small talk."""

from __future__ import annotations

import json

from labile.plugin import Node
from labile_allmem.consolidate.diagnose import LLMDiagnoser
from labile_allmem.consolidate.records import Neighbourhood
from labile_allmem.schema import UNIT
from labile_llm import ScriptedLLM


def _unit(nid: str, text: str) -> Node:
    return Node(id=nid, kind=UNIT, content=text, visible=True, attrs={"seq": 1})


def test_small_talk_anchors_are_not_sent_to_the_model() -> None:
    """Only the informative anchor costs a call; the greeting is counted as skipped."""
    greeting = _unit("u1", "Hey Mel! Good to see you!")
    news = _unit("u2", "I went to an LGBTQ support group yesterday and it was powerful.")
    llm = ScriptedLLM(replies=[json.dumps({"proposals": []})])
    diagnoser = LLMDiagnoser(llm, workers=1)
    out = diagnoser.diagnose([Neighbourhood(anchor=greeting, units=(greeting, news)),
                              Neighbourhood(anchor=news, units=(news, greeting))])
    assert out == [] and len(llm.calls) == 1 and "support group" in llm.calls[0].prompt
    assert (diagnoser.skipped, diagnoser.failures) == (1, 0)
