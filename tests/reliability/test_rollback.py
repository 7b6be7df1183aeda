"""A failed batch leaves every component as it was.

For every offline preset: a failure injected at a random point of an ``add``,
a ``feedback`` or a ``consolidate`` (a store call that raises, Ctrl-C, or a
commit that fails) rolls back, and running the same calls again ends in
exactly the memory of a run that never failed: the same observations, nodes
(clock stamps aside), edges and search rankings.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from reliability_helpers import (
    OFFLINE_PRESETS,
    Injected,
    failing_store,
    graph,
    pick,
    ranking,
    turns,
)

from labile import Memory
from labile._model import AddReport
from labile._recovery import roll_back

BATCHES = [(0, 3), (3, 3), (6, 4), (10, 2)]
QUERIES = ["Where did we move?", "Who plays the cello?"]


def _open(preset: str) -> Memory:
    return Memory.open({"preset": preset, "store": {"type": "memory"}})


def _run(memory: Memory, rng: random.Random | None) -> list[str]:
    """Adds, a feedback and a consolidation; with ``rng``, each first fails once
    at a random point and is then run again. Returns the failures that fired."""
    fired: list[str] = []

    def attempt(call: Any) -> None:
        if rng is None:
            call()
            return
        kind, at = pick(rng)
        try:
            with failing_store(memory, at=at, kind=kind):
                call()  # the store call ``at`` may come after the last one: no failure
        except (Injected, KeyboardInterrupt):
            fired.append(f"{kind}@{at}")
            call()

    for start, count in BATCHES:
        attempt(lambda s=start, c=count: memory.add(turns(s, c), namespace="n"))
    result = memory.search("Lena's concert", namespace="n", k=5)
    attempt(lambda: memory.feedback(result, cited=[h.node.id for h in result.hits[:2]],
                                    useful=True))
    attempt(lambda: memory.consolidate(namespace="n"))
    return fired


#: One preset per write path (extractor, reconsolidators, consolidators) runs by
#: default; the ablations, which share those, run with ``-m slow``.
DEFAULT = ("realm", "allmem", "context", "bm25")


@pytest.mark.parametrize("preset", [
    p if p in DEFAULT else pytest.param(p, marks=pytest.mark.slow) for p in OFFLINE_PRESETS])
def test_a_failed_batch_then_a_retry_equals_a_run_without_failures(preset: str) -> None:
    seed = sum(map(ord, preset))
    with _open(preset) as clean:
        _run(clean, None)
        expected, expected_ranks = graph(clean, "n"), ranking(clean, "n", QUERIES)
    with _open(preset) as failing:
        fired = _run(failing, random.Random(seed))
        assert fired, "no injected failure fired: the test would prove nothing"
        assert graph(failing, "n") == expected, fired
        assert ranking(failing, "n", QUERIES) == expected_ranks, fired


def test_commit_failure_on_lancedb_rolls_realm_back(tmp_path: Path) -> None:
    """The real store: LanceDB's commit raises after writing the rows; the retry
    equals a clean run."""
    from labile_lancedb._txn import Journal

    with Memory.open(preset="realm", path=tmp_path / "clean") as clean:
        for start, count in BATCHES[:3]:
            clean.add(turns(start, count), namespace="n")
        expected = graph(clean, "n")
    real_commit = Journal.commit

    def commit_then_fail(self: Journal, txn: Any, seqs: dict[str, int]) -> None:
        self.write(txn, seqs)  # the rows reach LanceDB ...
        raise OSError("disk full")  # ... and the commit fails before it is final

    with Memory.open(preset="realm", path=tmp_path / "failing") as failing:
        failing.add(turns(*BATCHES[0]), namespace="n")
        Journal.commit = commit_then_fail  # type: ignore[method-assign]
        try:
            with pytest.raises(Exception, match="disk full"):
                failing.add(turns(*BATCHES[1]), namespace="n")
        finally:
            Journal.commit = real_commit  # type: ignore[method-assign]
        assert [o.id for o in failing.list("n").items] == ["t0", "t1", "t2"]
        for start, count in BATCHES[1:3]:
            failing.add(turns(start, count), namespace="n")
        assert graph(failing, "n") == expected


class _Stateful:
    """An extractor with in-memory state and no ``on_rollback``."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, 0

    def ingest(self, namespace: str, observations: Any, report: AddReport) -> None:
        self.calls += 1
        self.inner.ingest(namespace, observations, report)


def test_a_component_without_on_rollback_makes_the_memory_rebuild_every_component() -> None:
    with _open("realm") as memory:
        memory.extractor = _Stateful(memory.extractor)  # type: ignore[assignment]
        before = memory.components
        roll_back(memory, "n", [memory.extractor])
        assert memory.components is not before  # rebuilt from the store
        assert not isinstance(memory.extractor, _Stateful)


def test_a_component_with_on_rollback_is_restored_in_place() -> None:
    with _open("realm") as memory:
        memory.add(turns(0, 4), namespace="n")
        extractor, before = memory.extractor, memory.components
        with pytest.raises(Injected), failing_store(memory, at=0, kind="commit"):
            memory.add(turns(4, 4), namespace="n")
        assert memory.extractor is extractor and memory.components is before
        assert [o.id for o in memory.list("n").items] == ["t0", "t1", "t2", "t3"]


def test_the_hook_reference_example_restores_its_count() -> None:
    """``CountingTurns`` (docs/plugins/hook_examples.py): a batch that fails at commit
    leaves the count as it was, and the retry counts its turns once."""
    import importlib.util

    from labile._plugins import get_plugin_manager
    from labile.plugin import NoConfig

    path = Path(__file__).resolve().parents[2] / "docs/plugins/hook_examples.py"
    spec = importlib.util.spec_from_file_location("hook_examples_rollback", path)
    assert spec is not None and spec.loader is not None
    examples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(examples)
    pm = get_plugin_manager(extra=[examples])
    with Memory.open(preset="acme", plugin_manager=pm) as memory:
        counting = examples.CountingTurns(NoConfig(), memory.deps)
        memory.extractor = counting
        memory.add(turns(0, 2), namespace="n")
        with pytest.raises(Injected), failing_store(memory, at=0, kind="commit"):
            memory.add(turns(2, 3), namespace="n")
        assert counting.counts == {"n": 2}
        memory.add(turns(2, 3), namespace="n")
        assert counting.counts == {"n": 5}
        assert memory.extractor is counting  # restored in place, not rebuilt
