"""Shared helpers for the All-Mem tests: in-memory store, hashing embedder.

A plain module (not a conftest) with a unique name, imported by the test files.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from labile._memory import Memory
from labile._model import Observation
from labile_llm import ScriptedLLM

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)


def open_memory(
    preset: str = "allmem",
    *,
    atc: dict[str, Any] | None = None,
    write: dict[str, Any] | None = None,
    llm: ScriptedLLM | None = None,
    embed_date: bool = False,
    **table: Any,
) -> Memory:
    """A pipeline from ``preset`` on the memory store and the hashing embedder.

    Automatic consolidation is off unless ``atc`` sets ``every_n_sessions``.
    The gate is open (θ = 0 for every operator) unless ``atc`` sets it: these
    tests check what diagnosis proposes and what execution does on synthetic
    text; what passes θ = 0.9 on real conversations is the judged test's
    concern (``test_allmem_judged_atc.py``), since the confidences are the
    judged precision of each kind of rule.
    The date tag is not embedded by default here: the hashing embedder is purely
    lexical, so the tag's many tokens would dominate the short test sentences
    (with MiniLM, the default, it does not; see docs/allmem.md).
    """
    offline = {"embed_date": embed_date}
    extractor: dict[str, Any] = {"type": "allmem.write", "offline": offline}
    if preset == "allmem-llm":
        extractor["descriptor"] = "llm"
    for key, value in (write or {}).items():
        extractor[key] = {**offline, **value} if key == "offline" else value
    consolidator: dict[str, Any] = {
        "type": "allmem.atc", "every_n_sessions": 0, "descriptor_offline": offline,
        "split_threshold": 0.0, "merge_threshold": 0.0, "update_threshold": 0.0,
        **(_llm_atc() if preset == "allmem-llm" else {}), **(atc or {}),
    }
    config: dict[str, Any] = {
        "preset": preset,
        "store": {"type": "memory"},
        "embedder": {"type": "hashing"},
        "extractor": extractor,
        "consolidate": [consolidator],
        **table,
    }
    if preset == "allmem-llm":
        config["llm"] = {"type": "scripted"}
    return Memory.open(config, llm=llm) if llm is not None else Memory.open(config)


def _llm_atc() -> dict[str, Any]:
    return {"diagnoser": "llm", "planner": "llm", "descriptor": "llm"}


def session(
    number: int, turns: Sequence[tuple[str, str]], *, day: int | None = None,
    caption: dict[int, str] | None = None,
) -> list[Observation]:
    """Observations of one session: ids ``s<number>:<i>``, one minute apart."""
    start = T0 + timedelta(days=day if day is not None else 7 * number)
    return [
        Observation(id=f"s{number}:{i}", text=text, speaker=speaker,
                    timestamp=start + timedelta(minutes=i), session=str(number),
                    metadata={"caption": (caption or {}).get(i)} if caption else {})
        for i, (speaker, text) in enumerate(turns)
    ]
