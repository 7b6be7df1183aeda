"""REALM feedback on the LanceDB store runs in a deferred block: no commit per feedback,
the same rankings as committing each one, and nothing lost by `Memory.close`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from realm_helpers import CHAT_1, CHAT_3, session

from labile import Memory

QUERIES = ["What does Caroline work as?", "Which book does Melanie like?",
           "Where did Melanie paint?", "What did Caroline research?"] * 2


def _open(path: Path, every: int) -> Memory:
    return Memory.open({"preset": "realm", "embedder": {"type": "hashing"},
                        "store": {"type": "lancedb", "path": str(path),
                                  "deferred_commit_every": every,
                                  "deferred_max_age_s": 86_400.0}})


def _loop(memory: Memory) -> list[list[tuple[str, float]]]:
    out = []
    for q in QUERIES:
        result = memory.search(q, namespace="n", k=5)
        out.append([(h.node.id, round(h.score, 9)) for h in result.hits])
        memory.feedback(result, cited=[h.node.id for h in result.hits[:2]], useful=True)
    return out


def _weights(memory: Memory) -> dict[str, float]:
    return {e.id: e.weight for e in memory.store.iter_edges("n")}


def test_deferred_feedback_ranks_as_committed_feedback(tmp_path: Path) -> None:
    runs: dict[int, Any] = {}
    for every in (1, 100):
        memory = _open(tmp_path / f"m{every}", every)
        for i, chat in enumerate((CHAT_1, CHAT_3)):
            memory.add(session(i + 1, chat), namespace="n")
        versions = memory.store._lance.meta_table.version  # type: ignore[attr-defined]
        learned_from = _weights(memory)
        ranked = _loop(memory)
        committed = memory.store._lance.meta_table.version  # type: ignore[attr-defined]
        runs[every] = (ranked, _weights(memory), committed > versions, learned_from)
        memory.close()
        with _open(tmp_path / f"m{every}", every) as again:
            assert _weights(again) == runs[every][1]  # close committed what waited
    assert runs[1][0] == runs[100][0]  # identical ranked lists and scores
    assert runs[1][1] == runs[100][1]  # and identical learned weights
    assert runs[1][1] != runs[1][3]  # feedback did re-weight edges
    assert runs[1][2] and not runs[100][2]  # committed per feedback vs. not at all
