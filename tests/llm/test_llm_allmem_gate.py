"""All-Mem's LLM diagnosis behind its offline pre-gate, with scripted replies.

A real SmolLM2-135M consolidation asked the model about every buffered
neighbourhood and did not finish a two-session run in 76 minutes; the
pre-gate sends only neighbourhoods where an edit is plausible and counts why
the others were not sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from labile.plugin import Node
from labile_allmem.consolidate.diagnose import LLMDiagnoser as ReExported
from labile_allmem.consolidate.diagnose_llm import (
    LLMDiagnoser,
    LLMDiagnosisConfig,
    diagnose_schema,
)
from labile_allmem.consolidate.records import Neighbourhood, Proposal
from labile_allmem.schema import UNIT
from labile_llm import ScriptedLLM

LONG = ("I adopted a puppy from the shelter last weekend and named him Biscuit. "
        "Separately, my sister is moving to Denver in March for her new nursing job.")


def _vec(*xs: float) -> NDArray[np.float32]:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def _unit(nid: str, text: str, emb: NDArray[np.float32], speaker: str = "Ann") -> Node:
    return Node(id=nid, kind=UNIT, content=text, visible=True, embedding=emb,
                description=text[:40], attrs={"seq": int(nid[1:]), "speaker": speaker})


def _hood(*units: Node) -> Neighbourhood:
    return Neighbourhood(anchor=units[0], units=units)


def _diagnoser(llm: ScriptedLLM, **cfg: object) -> LLMDiagnoser:
    return LLMDiagnoser(llm, workers=1, config=LLMDiagnosisConfig(**cfg),  # type: ignore[arg-type]
                        min_similarity=0.45)


NONE = json.dumps({"proposals": []})
A = _unit("u1", "I started pottery classes on Tuesdays.", _vec(1, 0, 0))
B = _unit("u2", "My pottery class meets every Tuesday now.", _vec(0.9, 0.3, 0))
FAR = _unit("u3", "The weather in Lisbon was lovely.", _vec(0, 0, 1))


def test_the_re_export_is_the_same_class() -> None:
    """Callers importing from the offline module keep working."""
    assert ReExported is LLMDiagnoser


def test_a_short_anchor_with_no_close_neighbour_is_not_sent() -> None:
    llm = ScriptedLLM(replies=[NONE])
    d = _diagnoser(llm)
    assert d.diagnose([_hood(A, FAR)]) == []
    assert llm.calls == [] and d.counts["skipped:no_candidate"] == 1 and d.skipped == 1


def test_only_close_same_speaker_neighbours_are_shown_and_the_schema_is_narrowed() -> None:
    other = _unit("u4", "Your pottery class on Tuesdays sounds fun.", _vec(0.95, 0.2, 0), "Bob")
    reply = json.dumps({"proposals": [{"op": "merge", "target": ["U1", "U2"],
                                       "confidence": 0.95, "reason": "same class"}]})
    llm = ScriptedLLM(replies=[reply])
    d = _diagnoser(llm)
    out = d.diagnose([_hood(A, other, B, FAR)])
    assert out == [Proposal(op="merge", target=("u1", "u2"), confidence=0.95,
                            reason="same class", anchor="u1")]
    (call,) = llm.calls
    assert "Lisbon" not in call.prompt and "sounds fun" not in call.prompt
    assert "[U2]" in call.prompt and "[U3]" not in call.prompt
    assert call.json_schema is not None
    item = call.json_schema["properties"]["proposals"]["items"]["properties"]
    assert item["op"]["enum"] == ["merge", "update"]  # a short anchor cannot split
    assert item["target"]["items"]["enum"] == ["U1", "U2"]
    assert d.counts["neighbours_hidden"] == 2 and d.counts["asked"] == 1


def test_a_pair_is_asked_about_once() -> None:
    """A's neighbourhood holds B and B's holds A: the second shows nothing new."""
    llm = ScriptedLLM(replies=[NONE])
    d = _diagnoser(llm)
    d.diagnose([_hood(A, B), _hood(B, A)])
    assert len(llm.calls) == 1 and d.counts["skipped:covered"] == 1


def test_covered_neighbourhoods_are_asked_when_told_to() -> None:
    llm = ScriptedLLM(replies=[NONE, NONE])
    d = _diagnoser(llm, skip_covered=False)
    d.diagnose([_hood(A, B), _hood(B, A)])
    assert len(llm.calls) == 2 and d.skipped == 0


def test_a_long_anchor_alone_is_asked_about_a_split_only() -> None:
    long = _unit("u5", LONG, _vec(0, 1, 0))
    reply = json.dumps({"proposals": [{"op": "split", "target": ["U1"], "confidence": 0.9}]})
    llm = ScriptedLLM(replies=[reply])
    d = _diagnoser(llm)
    out = d.diagnose([_hood(long, FAR)])
    assert [(p.op, p.target) for p in out] == [("split", ("u5",))]
    schema = llm.calls[0].json_schema
    assert schema is not None
    item = schema["properties"]["proposals"]["items"]["properties"]
    assert item["op"]["enum"] == ["split"] and item["target"]["maxItems"] == 1


def test_the_budget_asks_the_strongest_neighbourhoods() -> None:
    c = _unit("u6", "I bake sourdough bread on Sundays.", _vec(0, 0.2, 1))
    d_ = _unit("u7", "Sourdough baking is my Sunday thing.", _vec(0, 0.8, 1))
    llm = ScriptedLLM(replies=[NONE])
    d = _diagnoser(llm, max_calls=1)
    d.diagnose([_hood(c, d_), _hood(A, B)])  # A-B (0.95) is closer than c-d (about 0.85)
    assert len(llm.calls) == 1 and "pottery" in llm.calls[0].prompt
    assert d.counts["skipped:budget"] == 1


class _Rules:
    """A stand-in offline diagnoser that proposes one fixed edit."""

    def __init__(self, proposals: list[Proposal]) -> None:
        self.proposals, self.seen = proposals, 0

    def diagnose(self, hoods: Sequence[Neighbourhood]) -> list[Proposal]:
        self.seen += len(hoods)
        return self.proposals


def test_the_offline_pre_gate_sends_only_what_the_rules_named() -> None:
    rules = _Rules([Proposal(op="update", target=("u2", "u1"), confidence=0.3, anchor="u2")])
    llm = ScriptedLLM(replies=[NONE])
    d = LLMDiagnoser(llm, workers=1, config=LLMDiagnosisConfig(prefilter="offline"),
                     offline=rules)
    d.diagnose([_hood(A, B, FAR), _hood(B, A, FAR)])
    assert rules.seen == 2 and len(llm.calls) == 1
    assert "Lisbon" not in llm.calls[0].prompt and llm.calls[0].prompt.count("[U") == 2
    assert d.counts["skipped:offline_nothing"] == 1


def test_the_offline_pre_gate_needs_the_offline_diagnoser() -> None:
    with pytest.raises(ValueError, match="offline"):
        LLMDiagnoser(ScriptedLLM(), config=LLMDiagnosisConfig(prefilter="offline"))


def test_no_pre_gate_shows_every_unit_as_the_paper_does() -> None:
    llm = ScriptedLLM(replies=[NONE])
    d = _diagnoser(llm, prefilter="none", max_units=2)
    d.diagnose([_hood(A, FAR, B)])
    assert llm.calls[0].prompt.count("[U") == 3


@pytest.mark.parametrize("bad", [
    '{"proposals": [{"op": "merge", "target": ["U1", "U7"], "confidence": 0.9}]}',  # invented id
    '{"proposals": [{"op": "split", "target": ["U1"], "confidence": 0.9}]}',  # op not offered
    '{"proposals": [{"op": "merge", "target": ["U1", "U2"], "confidence": 2.5}]}',
    ScriptedLLM.malformed('{"proposals": [{"op": "me'),
])
def test_a_reply_outside_the_narrowed_schema_fails_closed(bad: str) -> None:
    """Replies of the shape SmolLM2 gave without a grammar: no proposal, one failure."""
    llm = ScriptedLLM(replies=[bad, bad])
    d = _diagnoser(llm)
    assert d.diagnose([_hood(A, B)]) == []
    assert d.failures == 1 and len(llm.calls) == 2  # the first reply and one repair


def test_the_narrowed_schema_keeps_the_base_schema_intact() -> None:
    schema = diagnose_schema(3, ["merge"])
    from labile_allmem import prompts

    base = prompts.DIAGNOSE_SCHEMA["properties"]["proposals"]["items"]["properties"]
    assert base["target"]["items"] == {"type": "string", "minLength": 1}
    assert schema["properties"]["proposals"]["items"]["properties"]["target"]["maxItems"] == 3
    assert schema["properties"]["proposals"]["maxItems"] == 6


def test_the_registry_builds_the_gated_diagnoser_from_a_config() -> None:
    from labile import Memory

    memory = Memory.open({
        "preset": "allmem-llm", "store": {"type": "memory"}, "embedder": {"type": "hashing"},
        "llm": {"type": "scripted"},
        "consolidate": [{"type": "allmem.atc", "diagnoser": {
            "type": "allmem.diagnoser.llm", "prefilter": "offline", "max_units": 4}}],
    })
    (_, atc), = memory.consolidators
    diagnoser = atc.diagnoser  # type: ignore[attr-defined]
    assert isinstance(diagnoser, LLMDiagnoser)
    assert diagnoser.config == LLMDiagnosisConfig(prefilter="offline", max_units=4)


def test_a_close_neighbour_sharing_no_specific_term_is_not_shown() -> None:
    """Close vectors alone (a shared date and speaker) do not make a pair."""
    near = _unit("u8", "Lovely weather for a walk today.", _vec(0.99, 0.1, 0))
    llm = ScriptedLLM(replies=[NONE])
    d = _diagnoser(llm)
    d.diagnose([_hood(A, near)])
    assert llm.calls == [] and d.counts["skipped:no_candidate"] == 1


def test_a_term_most_units_hold_is_too_generic_to_pair_them() -> None:
    """'pottery' is in every unit of the pass, so it names no subject (the offline bar)."""
    units = [_unit(f"u{10 + i}", f"Pottery note number {w}.", _vec(1, 0.01 * i, 0))
             for i, w in enumerate(["one", "two", "three", "four", "five"])]
    llm = ScriptedLLM(replies=[NONE])
    d = _diagnoser(llm)
    d.diagnose([_hood(*units)])
    assert llm.calls == [] and d.counts["skipped:no_candidate"] == 1


def test_the_splitter_decides_which_units_may_split() -> None:
    long = _unit("u5", LONG, _vec(0, 1, 0))
    llm = ScriptedLLM(replies=[NONE])
    d = LLMDiagnoser(llm, workers=1, config=LLMDiagnosisConfig(), splitter=lambda us: set())
    d.diagnose([_hood(long, FAR)])
    assert llm.calls == [] and d.counts["skipped:no_candidate"] == 1
    d = LLMDiagnoser(llm, workers=1, config=LLMDiagnosisConfig(),
                     splitter=lambda us: {u.id for u in us})
    d.diagnose([_hood(A, FAR)])
    assert len(llm.calls) == 1


def test_without_the_narrowed_schema_an_unknown_target_reaches_norm_and_is_counted() -> None:
    reply = json.dumps({"proposals": [{"op": "merge", "target": ["U1", "U9"],
                                       "confidence": 0.9}]})
    llm = ScriptedLLM(replies=[reply])
    d = _diagnoser(llm, narrow_schema=False)
    (prop,) = d.diagnose([_hood(A, B)])
    assert prop.target == ("u1", "U9") and d.counts["proposal_unknown_target"] == 1
