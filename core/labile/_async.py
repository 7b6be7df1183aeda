"""`AsyncMemory`: `Memory` for asyncio programs (agent frameworks, the MCP server).

Every call runs the blocking `Memory` method in a worker thread of the
facade's own pool, so the event loop never waits on the store, the embedder
or an LLM. Reads (``search``, ``answer``, ``get``, ``list``, ``stats``, …) run
side by side; writes (``add``, ``feedback``, ``consolidate``, ``forget``,
``purge``) queue on one `asyncio.Lock` and run one at a time, in the order
they were awaited.

``forget`` and ``purge`` run alone: they wait for the reads in flight, and
reads wait for them, so no search sees a namespace half-forgotten.

Cancellation: a call cancelled before its work starts never runs. Once started,
the work runs to its end in its thread (a batch is never left half-written);
the caller gets its `CancelledError` at once, and the next write waits for the
cancelled one to finish. `aclose` waits for every started call.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent import futures
from datetime import datetime
from typing import Any, TypeVar

from labile._errors import InputError
from labile._memory import ConfigLike, Memory
from labile._model import (
    AddReport,
    Answer,
    Node,
    NodeFilter,
    Observation,
    OperationReport,
    RetrievalResult,
)
from labile._page import Page

T = TypeVar("T")

__all__ = ["AsyncMemory"]


class AsyncMemory:
    """An asyncio facade over one `Memory`, with the same methods and errors.

    Build one with ``await AsyncMemory.open(...)`` (same arguments as
    `Memory.open`) or wrap an open `Memory`: ``AsyncMemory(memory)``. Share
    one instance per store: writes are serialised per instance.
    """

    def __init__(self, memory: Memory, *, max_workers: int | None = None) -> None:
        """Wrap ``memory``; ``max_workers`` bounds the concurrent calls (default: CPUs + 4)."""
        self.memory = memory
        workers = max_workers or min(32, (os.cpu_count() or 1) + 4)
        self._pool = futures.ThreadPoolExecutor(workers, thread_name_prefix="labile-async")
        self._write_lock = asyncio.Lock()
        self._started: set[futures.Future[Any]] = set()
        self._reads: set[futures.Future[Any]] = set()
        self._no_exclusive = asyncio.Event()
        self._no_exclusive.set()
        self._closed = False

    @classmethod
    async def open(cls, config: ConfigLike = None, *, max_workers: int | None = None,
                   **kwargs: Any) -> AsyncMemory:
        """`Memory.open` in a worker thread (opening loads models), wrapped."""
        memory = await asyncio.to_thread(Memory.open, config, **kwargs)
        return cls(memory, max_workers=max_workers)

    # -- the calls ------------------------------------------------------------
    async def add(self, observations: Iterable[Observation], *, namespace: str) -> AddReport:
        """`Memory.add`, serialised with the other writes."""
        batch = list(observations)  # materialise here: a generator must not run in a thread
        return await self._write(self.memory.add, batch, namespace=namespace)

    async def search(self, query: str, *, namespace: str, k: int = 10,
                     as_of: datetime | None = None) -> RetrievalResult:
        """`Memory.search`; searches run concurrently."""
        return await self._read(self.memory.search, query, namespace=namespace, k=k,
                                as_of=as_of)

    async def answer(self, question: str, *, namespace: str, k: int = 10,
                     as_of: datetime | None = None, budget_tokens: int = 2000) -> Answer:
        """`Memory.answer`: runs alongside searches (its LLM call can be slow); the
        reconsolidation at its end takes the memory's own write lock."""
        return await self._read(self.memory.answer, question, namespace=namespace, k=k,
                                as_of=as_of, budget_tokens=budget_tokens)

    async def feedback(self, result: RetrievalResult, *, answer: str | None = None,
                       cited: Sequence[str] = (), useful: bool | None = None,
                       ) -> list[OperationReport]:
        """`Memory.feedback`, serialised with the other writes."""
        return await self._write(self.memory.feedback, result, answer=answer,
                                 cited=tuple(cited), useful=useful)

    async def consolidate(self, *, namespace: str) -> list[OperationReport]:
        """`Memory.consolidate`, serialised with the other writes."""
        return await self._write(self.memory.consolidate, namespace=namespace)

    async def get(self, namespace: str, ids: Sequence[str]) -> Sequence[Observation]:
        """`Memory.get`."""
        return await self._read(self.memory.get, namespace, list(ids))

    async def get_nodes(self, namespace: str, ids: Sequence[str]) -> Sequence[Node]:
        """`Memory.get_nodes`."""
        return await self._read(self.memory.get_nodes, namespace, list(ids))

    async def list(self, namespace: str, *, offset: int = 0,
                   limit: int = 100) -> Page[Observation]:
        """`Memory.list`."""
        return await self._read(self.memory.list, namespace, offset=offset, limit=limit)

    async def list_nodes(self, namespace: str, *, offset: int = 0, limit: int = 100,
                         where: NodeFilter | None = None) -> Page[Node]:
        """`Memory.list_nodes`."""
        return await self._read(self.memory.list_nodes, namespace, offset=offset, limit=limit,
                                where=where)

    async def forget(self, namespace: str, observation_ids: Sequence[str], *,
                     erase: bool = False) -> dict[str, Any]:
        """`Memory.forget`, run alone: after the reads in flight, before any new one (no
        search sees a half-forgotten namespace)."""
        return await self._write(self.memory.forget, namespace, list(observation_ids),
                                 erase=erase, exclusive=True)

    async def purge(self, namespace: str, *, erase: bool = False) -> None:
        """`Memory.purge`, run alone like `forget`."""
        await self._write(self.memory.purge, namespace, erase=erase, exclusive=True)

    async def run_exclusive(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(*args, **kwargs)`` in the pool alone, like `forget`: after the calls in
        flight, before any new one. For a write of the application's own that also
        rebuilds components (an HTTP undo of an edge's edit): no search runs beside it."""
        return await self._write(fn, *args, exclusive=True, **kwargs)

    async def stats(self, namespace: str | None = None) -> dict[str, Any]:
        """`Memory.stats`."""
        return await self._read(self.memory.stats, namespace)

    async def aclose(self) -> None:
        """Wait for every started call, then close the memory and the pool. Idempotent."""
        async with self._write_lock:  # no write starts after this point
            self._closed = True
            await asyncio.to_thread(futures.wait, list(self._started))
            await asyncio.to_thread(self.memory.close)
        self._pool.shutdown(wait=False)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- machinery ---------------------------------------------------------------
    def _start(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> futures.Future[T]:
        """Submit ``fn`` to the pool, with the caller's context variables, and track it."""
        if self._closed:
            raise InputError("this AsyncMemory is closed")
        call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
        job = self._pool.submit(call)
        self._started.add(job)
        job.add_done_callback(self._started.discard)
        return job

    async def _read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        await self._no_exclusive.wait()  # a forget or purge runs alone
        job = self._start(fn, *args, **kwargs)
        self._reads.add(job)
        job.add_done_callback(self._reads.discard)
        # A caller cancelled while the job still waits in the pool drops it (wrap_future
        # cancels the pool's future); a job already running ends in its thread.
        return await asyncio.wrap_future(job)

    async def _write(self, fn: Callable[..., T], *args: Any, exclusive: bool = False,
                     **kwargs: Any) -> T:
        await self._write_lock.acquire()  # cancelled while waiting here: never starts
        try:
            if exclusive:  # after the reads in flight, and no read until it is done
                self._no_exclusive.clear()
                await asyncio.to_thread(futures.wait, list(self._reads))
            job = self._start(fn, *args, **kwargs)
        except BaseException:
            self._release()
            raise
        loop = asyncio.get_running_loop()
        # Released when the job ends, not when the caller stops waiting: the next
        # write waits for a cancelled one's batch to be complete.
        job.add_done_callback(lambda _: loop.call_soon_threadsafe(self._release))
        try:
            return await asyncio.shield(asyncio.wrap_future(job))
        except asyncio.CancelledError:
            job.cancel()  # succeeds only while the job has not started: then it never runs
            raise

    def _release(self) -> None:
        self._no_exclusive.set()
        self._write_lock.release()
