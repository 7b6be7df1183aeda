"""`AsyncMemory` under real concurrency: many tasks at once on a real worker pool.

Overlap is proven with barriers (a test that needs N calls inside the memory at
once fails if they ran one by one), never with timings.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labile import AsyncMemory, InputError, Memory
from labile.testing import observations
from labile_offline.hashing import HashingEmbedder

TABLE: dict[str, Any] = {"preset": "hybrid", "store": {"type": "memory"},
                         "embedder": {"type": "hashing"}}
WAIT_S = 20.0  # generous: the machine may be loaded; only reached when a test is failing


class BarrierEmbedder(HashingEmbedder):
    """Hashing embedder whose query embeddings wait for ``parties`` callers at once."""

    def __init__(self) -> None:
        super().__init__()
        self.barrier: threading.Barrier | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.barrier is not None:
            self.barrier.wait(timeout=WAIT_S)  # BrokenBarrierError unless all arrive together
        return super().embed(texts)


def instrument(memory: Memory, name: str, gate: threading.Event | None = None,
               timeline: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Wrap ``memory.<name>``: record calls and their overlap; optionally wait on ``gate``."""
    original: Callable[..., Any] = getattr(memory, name)
    record: dict[str, Any] = {"calls": [], "active": 0, "max_active": 0,
                              "entered": threading.Event(), "order": []}
    lock = threading.Lock()

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with lock:
            record["active"] += 1
            record["max_active"] = max(record["max_active"], record["active"])
            record["calls"].append((args, kwargs))
            record["order"].append(("start", kwargs.get("namespace")))
            if timeline is not None:
                timeline.append((name, "start"))
        record["entered"].set()
        try:
            if gate is not None:
                assert gate.wait(WAIT_S), "test gate never opened"
            return original(*args, **kwargs)
        finally:
            with lock:
                record["active"] -= 1
                record["order"].append(("end", kwargs.get("namespace")))
                if timeline is not None:
                    timeline.append((name, "end"))

    setattr(memory, name, wrapper)
    return record


def stored_ids(memory: Memory, namespace: str, ids: list[str]) -> set[str]:
    return memory.store.existing_observation_ids(namespace, ids)


def test_searches_run_side_by_side_and_match_the_sync_results() -> None:
    embedder = BarrierEmbedder()
    memory = Memory.open(TABLE, embedder=embedder)
    memory.add(observations([f"note {i}: I like topic {i % 7}" for i in range(30)]),
               namespace="u1")
    queries = [f"topic {i % 7}" for i in range(24)]
    expected = [[h.node.id for h in memory.search(q, namespace="u1", k=5).hits]
                for q in queries]

    async def main() -> list[list[str]]:
        async with AsyncMemory(memory, max_workers=6) as amem:
            # Six query embeddings must be inside the embedder at the same moment.
            embedder.barrier = threading.Barrier(6)
            results = await asyncio.gather(*(amem.search(q, namespace="u1", k=5)
                                             for q in queries))
            embedder.barrier = None
        return [[h.node.id for h in r.hits] for r in results]

    assert asyncio.run(main()) == expected


def test_many_concurrent_writes_are_serialised_in_order_and_all_land() -> None:
    memory = Memory.open(TABLE)
    record = instrument(memory, "add")
    batches = {f"ns{i}": observations([f"batch {i} turn {j}" for j in range(3)])
               for i in range(25)}

    async def main() -> None:
        async with AsyncMemory(memory, max_workers=8) as amem:
            writes = [amem.add(obs, namespace=ns) for ns, obs in batches.items()]
            reads = [amem.search("turn", namespace=ns) for ns in batches]
            await asyncio.gather(*writes, *reads)

    asyncio.run(main())
    assert record["max_active"] == 1  # never two writes at once
    starts = [ns for event, ns in record["order"] if event == "start"]
    assert starts == list(batches)  # in the order they were awaited
    # The in-memory store keeps its data after close: read it back directly.
    for ns, obs in batches.items():
        ids = [o.id for o in obs]
        assert stored_ids(memory, ns, ids) == set(ids)
    assert sorted(memory.store.namespaces()) == sorted(batches)


def test_a_write_cancelled_while_waiting_never_runs() -> None:
    memory = Memory.open(TABLE)
    gate = threading.Event()
    record = instrument(memory, "add", gate)

    async def main() -> None:
        async with AsyncMemory(memory) as amem:
            first = asyncio.create_task(amem.add(observations(["first"]), namespace="a"))
            await asyncio.to_thread(record["entered"].wait, WAIT_S)
            second = asyncio.create_task(amem.add(observations(["second"]), namespace="b"))
            await asyncio.sleep(0)  # let it queue on the write lock
            second.cancel()
            with pytest.raises(asyncio.CancelledError):
                await second
            gate.set()
            await first

    asyncio.run(main())
    assert [kw["namespace"] for _, kw in record["calls"]] == ["a"]
    assert stored_ids(memory, "b", ["o1"]) == set()
    assert stored_ids(memory, "a", ["o1"]) == {"o1"}


def test_a_write_cancelled_while_running_completes_and_holds_back_the_next() -> None:
    memory = Memory.open(TABLE)
    gate = threading.Event()
    record = instrument(memory, "add", gate)
    batch = observations([f"turn {i}" for i in range(5)])

    async def main() -> None:
        async with AsyncMemory(memory) as amem:
            first = asyncio.create_task(amem.add(batch, namespace="a"))
            await asyncio.to_thread(record["entered"].wait, WAIT_S)
            first.cancel()
            with pytest.raises(asyncio.CancelledError):
                await first  # the caller is released at once, the batch goes on
            second = asyncio.create_task(amem.add(observations(["later"]), namespace="b"))
            await asyncio.sleep(0.01)
            assert not second.done()  # held back: the cancelled batch has not finished
            gate.set()
            await second

    asyncio.run(main())
    assert record["order"] == [("start", "a"), ("end", "a"), ("start", "b"), ("end", "b")]
    ids = [o.id for o in batch]
    assert stored_ids(memory, "a", ids) == set(ids)  # the whole batch, not part of it


def test_a_search_cancelled_while_queued_never_runs() -> None:
    memory = Memory.open(TABLE)
    memory.add(observations(["a cat named Pixel"]), namespace="u1")
    gate = threading.Event()
    record = instrument(memory, "search", gate)

    async def main() -> None:
        async with AsyncMemory(memory, max_workers=1) as amem:
            busy = asyncio.create_task(amem.search("cat", namespace="u1"))
            await asyncio.to_thread(record["entered"].wait, WAIT_S)
            queued = asyncio.create_task(amem.search("dog", namespace="u1"))
            await asyncio.sleep(0)
            queued.cancel()
            with pytest.raises(asyncio.CancelledError):
                await queued
            gate.set()
            assert (await busy).hits

    asyncio.run(main())
    assert [args[0] for args, _ in record["calls"]] == ["cat"]


def test_errors_are_memorys_errors_and_change_nothing() -> None:
    async def main() -> None:
        async with await AsyncMemory.open(TABLE) as amem:
            bad = observations(["fine", "   "])
            with pytest.raises(InputError, match="empty text"):
                await amem.add(bad, namespace="u1")
            with pytest.raises(InputError, match="k must be"):
                await amem.search("x", namespace="u1", k=0)
            assert (await amem.stats("u1"))["store"]["observations"] == 0
            report = await amem.add(observations(["I adopted a cat named Pixel"]),
                                    namespace="u1")
            assert report.added == ["o1"]
            result = await amem.search("Pixel", namespace="u1", k=1)
            assert result.hits[0].node.sources == ("o1",)
            assert await amem.feedback(result, useful=True) == []  # hybrid: no reconsolidator
            assert await amem.consolidate(namespace="u1") == []
        with pytest.raises(InputError, match="closed"):
            await amem.search("Pixel", namespace="u1")
        await amem.aclose()  # idempotent

    asyncio.run(main())


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(1, 4)),
                min_size=1, max_size=12))
def test_concurrent_adds_store_exactly_what_sequential_adds_would(
    plan: list[tuple[str, int]],
) -> None:
    """Property: however many adds run at once, each namespace ends with exactly the
    union of its batches (no batch lost, none partly written, nothing crosses over)."""
    memory = Memory.open(TABLE)
    batches = [(ns, observations([f"{ns} {i} {j}" for j in range(n)], prefix=f"b{i}-"))
               for i, (ns, n) in enumerate(plan)]

    async def main() -> None:
        async with AsyncMemory(memory, max_workers=4) as amem:
            await asyncio.gather(*(amem.add(obs, namespace=ns) for ns, obs in batches))

    asyncio.run(main())
    for ns in {"a", "b", "c"}:
        want = {o.id for n, obs in batches if n == ns for o in obs}
        got = {o.id for o in memory.store.iter_observations(ns)}
        assert got == want


def test_reading_back_forgetting_and_purging_mirror_memory() -> None:
    async def main() -> None:
        async with await AsyncMemory.open(TABLE) as amem:
            await amem.add(observations(["I adopted a cat named Pixel", "I like tea"]),
                           namespace="u1")
            await amem.add(observations(["other user"]), namespace="u2")
            assert [o.id for o in await amem.get("u1", ["o2", "o9", "o1"])] == ["o2", "o1"]
            page = await amem.list("u1", limit=1)
            assert [o.id for o in page.items] == ["o1"] and page.next_offset == 1
            nodes = await amem.list_nodes("u1")
            assert nodes.total == 2
            assert (await amem.get_nodes("u1", [nodes.items[0].id]))[0].sources
            counts = await amem.forget("u1", ["o1"])
            assert counts["observations"] == 1
            hits = (await amem.search("Pixel cat", namespace="u1")).hits
            assert all("o1" not in h.node.sources for h in hits)
            await amem.purge("u1")
            assert (await amem.list("u1")).total == 0
            assert (await amem.list("u2")).total == 1
            with pytest.raises(InputError, match="ids must be"):
                await amem.forget("u2", [""])

    asyncio.run(main())


async def _between_two_searches(
    amem: AsyncMemory, write: Callable[[], Awaitable[Any]], searches: dict[str, Any],
    gate: threading.Event, *, started: Callable[[], bool],
) -> tuple[Any, list[Any]]:
    """Start a search held at ``gate``, then ``write()``, then a second search; check the
    write has not ``started`` while the first search is held; release it. Returns the
    write's result and the second search's hits."""
    before = asyncio.create_task(amem.search("cat", namespace="u1"))
    await asyncio.to_thread(searches["entered"].wait, WAIT_S)
    task = asyncio.create_task(write())
    await asyncio.sleep(0.01)
    after = asyncio.create_task(amem.search("cat", namespace="u1"))
    await asyncio.sleep(0.01)
    assert not task.done() and not started()  # waits for the search in flight
    gate.set()
    result = await task
    await before
    return result, list((await after).hits)


def _two_pets() -> tuple[Memory, threading.Event, list[tuple[str, str]], dict[str, Any]]:
    """A memory of two turns in ``u1`` whose searches wait at the returned gate and log
    to the returned timeline (with the search instrument)."""
    memory = Memory.open(TABLE)
    memory.add(observations(["a cat named Pixel", "a dog named Rex"]), namespace="u1")
    gate = threading.Event()
    timeline: list[tuple[str, str]] = []
    return memory, gate, timeline, instrument(memory, "search", gate, timeline)


def test_forget_waits_for_searches_in_flight_and_holds_back_new_ones() -> None:
    memory, gate, timeline, searches = _two_pets()
    forgets = instrument(memory, "forget", timeline=timeline)

    async def main() -> None:
        async with AsyncMemory(memory) as amem:
            _, hits = await _between_two_searches(
                amem, lambda: amem.forget("u1", ["o1"]), searches, gate,
                started=lambda: bool(forgets["calls"]))
            assert all("o1" not in h.node.sources for h in hits)  # ran after the forget

    asyncio.run(main())
    assert timeline == [("search", "start"), ("search", "end"), ("forget", "start"),
                        ("forget", "end"), ("search", "start"), ("search", "end")]


def test_run_exclusive_waits_for_searches_in_flight_and_holds_back_new_ones() -> None:
    """An application's own write that rebuilds components (the HTTP undo) runs alone."""
    memory, gate, timeline, searches = _two_pets()

    def rebuild() -> str:
        timeline.append(("rebuild", "start"))
        memory.reload_components()
        timeline.append(("rebuild", "end"))
        return "done"

    async def main() -> None:
        async with AsyncMemory(memory) as amem:
            done, _ = await _between_two_searches(
                amem, lambda: amem.run_exclusive(rebuild), searches, gate,
                started=lambda: ("rebuild", "start") in timeline)
            assert done == "done"

    asyncio.run(main())
    assert timeline == [("search", "start"), ("search", "end"), ("rebuild", "start"),
                        ("rebuild", "end"), ("search", "start"), ("search", "end")]
