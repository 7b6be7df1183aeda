"""A real model in the loop: SmolLM2-135M in-process, through REALM's LLM extraction.

Skips (with the install command) where llama-cpp-python or the SmolLM2
package is missing; CI installs both. The conversation is three short turns
and replies are capped; REALM asks the three turns in one batched call, so
the test costs a few model calls (tens of seconds on two cores). A 135M
model's judgement is weak: the test checks the machinery — replies parsed,
validated and turned into nodes, real token counts in the usage meter — not
the quality of what it extracted.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from realmodel import missing_model

from extras import REQUIRE
from labile._memory import Memory
from labile._model import Observation

pytestmark = [pytest.mark.extras,
              pytest.mark.skipif(missing_model() is not None and not REQUIRE,
                                 reason=str(missing_model()))]

TURNS = [
    ("Caroline", "Hey Mel! I adopted a golden retriever puppy named Max last week."),
    ("Melanie", "That's great! I'm swamped with the kids and my pottery class."),
    ("Caroline", "I also started a new job as a counselor at the youth center."),
]


def _observations() -> list[Observation]:
    start = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
    return [Observation(id=f"D1:{i + 1}", text=text, speaker=speaker,
                        timestamp=start + timedelta(minutes=i), session="1")
            for i, (speaker, text) in enumerate(TURNS)]


def _memory(**llm: Any) -> Memory:
    return Memory.open({
        "preset": "realm-llm",
        "store": {"type": "memory"},
        # no deadline that a loaded CI machine could trip: the test checks the machinery
        "llm": {"type": "llamacpp", "n_threads": 1, "n_ctx": 2048, "max_tokens": 256,
                "timeout_s": 900, **llm},
        # LLM extraction (the three turns in one batched call); node and edge decisions
        # offline keep the call count, and so the wall time, small. The slow test below
        # runs every decision.
        "extractor": {"type": "realm.construct", "units": "llm", "decisions": "offline"},
    })


def test_realm_llm_extraction_with_the_local_model_makes_nodes() -> None:
    """One ``add`` of three turns, asked in one batched extraction call: the reply is
    parsed, validated (or, cut at the token budget, its closed units kept) and turned
    into nodes."""
    from labile_llamacpp.client import LlamaCppClient

    with _memory() as memory:
        llm = memory.llm
        assert isinstance(llm, LlamaCppClient)
        report = memory.add(_observations(), namespace="ci")
        snapshot = memory.usage.snapshot()
        replies = llm.replies.snapshot()
        batch = replies.get("realm.extract_batch", {})
        # the three turns were asked together; the reply validated, or was cut at the
        # token budget and its closed units were kept (the turns after them asked again)
        salvaged = memory.extractor.units.counts["batch_reply_cut_salvaged"]
        assert batch.get("valid", 0) + batch.get("repaired", 0) + salvaged >= 1, replies
        assert report.details["realm"]["units"] > 0
        nodes = list(memory.store.iter_nodes("ci"))
        from_model = [n for n in nodes if n.kind != "realm.episode"]
        assert from_model, "no node came from the model's units"
        assert all(set(n.sources) <= {o.id for o in _observations()} for n in from_model)
        # real token counts: the batch prompt alone is hundreds of tokens
        usage = snapshot["realm.extract_batch"]
        assert usage["calls"] == sum(batch.values())
        assert usage["prompt_tokens"] > 300 * usage["calls"]
        assert 0 < usage["completion_tokens"] <= 256 * usage["calls"]


def test_usage_counts_the_models_own_tokens() -> None:
    with _memory() as memory:
        llm = memory.llm
        text = llm.complete_text("Say hello.", operation="probe", max_tokens=4)
        rendered = llm.model.formatter(messages=[{"role": "user", "content": "Say hello."}])
        usage = memory.usage.snapshot()["probe"]
        assert usage["prompt_tokens"] == len(llm.model.tokenize(rendered.prompt))
        assert 0 < usage["completion_tokens"] <= 4 and isinstance(text, str)


def test_memories_in_one_process_share_the_loaded_model() -> None:
    from labile_llamacpp.models import loaded_models

    with _memory() as first, _memory(max_tokens=64) as second:
        assert first.llm.model is second.llm.model  # max_tokens is per call, not per model
    assert len([k for k in loaded_models() if k.n_ctx == 2048]) == 1


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["realm-llm", "allmem-llm"])
def test_every_llm_decision_runs_on_the_local_model(preset: str) -> None:
    """Every LLM decision of the preset (and All-Mem's consolidation) on the real model.

    A 135M model fails often; what must hold is that every failure is a counted,
    fail-closed outcome: nothing escapes ``add`` or ``consolidate``, and each
    ``complete_json`` call ends valid, repaired or rejected with a reason.
    """
    with Memory.open({"preset": preset, "store": {"type": "memory"},
                      "llm": {"type": "llamacpp", "n_threads": 1, "max_tokens": 256,
                              "timeout_s": 900}}) as memory:
        memory.add(_observations(), namespace="slow")
        memory.consolidate(namespace="slow")
        replies = memory.llm.replies.snapshot()
        usage = memory.usage.snapshot()
        assert replies and usage["total"]["calls"] >= len(TURNS)
        outcomes = {k for counts in replies.values() for k in counts}
        assert outcomes <= {"valid", "repaired"} | {
            f"rejected:{r}" for r in ("invalid", "truncated", "timeout", "context_window", "other")}
        assert memory.store.count_nodes("slow") > 0
