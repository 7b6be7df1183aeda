"""``labile bench serve``: what serving over MCP costs, measured against in-process search.

One run, one store, four phases of ``seconds`` each after a synthetic
conversation is stored:

1. in process, one caller: ``Memory.search`` in a loop (latency baseline);
2. in process, ``clients`` callers: ``AsyncMemory.search`` from that many tasks;
3. the server (``labile serve mcp --http`` on a loopback port, a subprocess,
   with a bearer token), one MCP client;
4. the same server, ``clients`` MCP clients at once, each its own session.

Each phase reports requests/s and p50/p95 latency; the summary gives the MCP
figures as ratios of the in-process ones (the protocol's overhead). The queries
cycle through a fixed list, so every phase asks the same questions.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from labile import AsyncMemory, Memory
from labile.plugin import Observation

NAMESPACE = "bench"
_PEOPLE = ("Maya", "Tom", "Lena", "Ravi", "Ines", "Kofi")
_DOINGS = ("went hiking", "baked bread", "started a pottery class", "adopted a dog",
           "ran a half marathon", "visited her grandmother", "fixed the old bike",
           "planted tomatoes", "read a novel about whales", "learned to sail")
_PLACES = ("in Lisbon", "near the lake", "at the community centre", "in the Alps",
           "downtown", "at the beach", "in the garden", "at the library")


@attrs.frozen(kw_only=True)
class BenchSettings:
    """What to measure: the memory (as for ``Memory.open``), the load, the corpus size."""

    config: str | None = None
    preset: str | None = None
    path: str | None = None
    clients: int = 4
    seconds: float = 5.0
    turns: int = 300
    k: int = 5


def corpus(turns: int) -> tuple[list[Observation], list[str]]:
    """A deterministic synthetic conversation of ``turns`` turns, and questions about it."""
    start = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
    obs = []
    for i in range(turns):
        who, what = _PEOPLE[i % len(_PEOPLE)], _DOINGS[(i * 7) % len(_DOINGS)]
        where = _PLACES[(i * 3) % len(_PLACES)]
        obs.append(Observation(id=f"t{i}", speaker=who, timestamp=start + timedelta(hours=5 * i),
                               text=f"Last weekend I {what} {where} with a friend.",
                               session=f"s{i // 20}"))
    questions = [f"When did {p} {d.split(' ', 1)[1]}?" for p in _PEOPLE for d in _DOINGS[:4]]
    return obs, questions


def _summary(latencies_ms: list[float], elapsed_s: float) -> dict[str, float]:
    arr = np.asarray(latencies_ms, dtype=np.float64)
    return {"requests": len(latencies_ms), "req_per_s": round(len(arr) / elapsed_s, 2),
            "p50_ms": round(float(np.percentile(arr, 50)), 2) if arr.size else float("nan"),
            "p95_ms": round(float(np.percentile(arr, 95)), 2) if arr.size else float("nan")}


async def _load(callers: int, seconds: float, questions: list[str],
                call: Callable[[int, str], Awaitable[object]]) -> dict[str, float]:
    """``callers`` tasks calling ``call(caller, question)`` in a loop for ``seconds``."""
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def caller(c: int) -> None:
        i = c
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            await call(c, questions[i % len(questions)])
            latencies.append((time.perf_counter() - t0) * 1000)
            i += callers

    t0 = time.perf_counter()
    await asyncio.gather(*(caller(c) for c in range(callers)))
    return _summary(latencies, time.perf_counter() - t0)


def _in_process(memory: Memory, s: BenchSettings, questions: list[str]) -> dict[str, Any]:
    latencies = []
    t_end = time.perf_counter() + s.seconds
    t0 = time.perf_counter()
    i = 0
    while time.perf_counter() < t_end:
        q0 = time.perf_counter()
        memory.search(questions[i % len(questions)], namespace=NAMESPACE, k=s.k)
        latencies.append((time.perf_counter() - q0) * 1000)
        i += 1
    one = _summary(latencies, time.perf_counter() - t0)

    async def many() -> dict[str, float]:
        async with AsyncMemory(memory, max_workers=s.clients) as amem:  # closes the memory
            return await _load(s.clients, s.seconds, questions, lambda _c, q: amem.search(
                q, namespace=NAMESPACE, k=s.k))

    return {"1": one, str(s.clients): asyncio.run(many())}


def _server_argv(s: BenchSettings, path: str, port: int) -> list[str]:
    argv = [sys.executable, "-m", "labile_cli", "serve", "mcp", "--path", path,
            "-n", NAMESPACE, "--http", f"127.0.0.1:{port}"]
    if s.config:
        argv += ["-c", s.config]
    if s.preset:
        argv += ["--preset", s.preset]
    return argv


async def _over_mcp(url: str, token: str, callers: int, s: BenchSettings,
                    questions: list[str]) -> dict[str, float]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with AsyncExitStack() as stack:
        sessions = []
        for _ in range(callers):
            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(120.0)))
            read, write = await stack.enter_async_context(
                streamable_http_client(url, http_client=http))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions.append(session)

        async def call(c: int, q: str) -> None:
            result = await sessions[c].call_tool("search_memory", {"query": q, "k": s.k})
            if result.is_error:
                raise RuntimeError(f"search failed over MCP: {result.content}")

        await call(0, questions[0])  # warm-up: the first call pays for lazy setup
        return await _load(callers, s.seconds, questions, call)


def _wait_listening(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the MCP server exited with status {proc.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"the MCP server did not listen on port {port} within {timeout_s:.0f} s")


def run_bench(s: BenchSettings) -> dict[str, Any]:
    """Run the four phases (see the module docstring) and return the summary."""
    with tempfile.TemporaryDirectory(prefix="labile-bench-serve-") as tmp:
        path = s.path or str(Path(tmp) / "store")
        observations, questions = corpus(s.turns)
        with Memory.open(s.config, preset=s.preset, path=path) as memory:
            t0 = time.perf_counter()
            memory.add(observations, namespace=NAMESPACE)
            ingest_s = time.perf_counter() - t0
            memory.search(questions[0], namespace=NAMESPACE, k=s.k)  # warm-up
            pipeline = memory.stats(NAMESPACE)["pipeline"]
            local = _in_process(memory, s, questions)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        token = secrets.token_urlsafe(24)
        env = {**os.environ, "LABILE_MCP_TOKEN": token}
        proc = subprocess.Popen(_server_argv(s, path, port), env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_listening(port, proc)
            url = f"http://127.0.0.1:{port}/mcp"
            remote = {str(n): asyncio.run(_over_mcp(url, token, n, s, questions))
                      for n in dict.fromkeys((1, s.clients))}
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    many = str(s.clients)
    return {
        "pipeline": pipeline, "turns": s.turns, "k": s.k, "clients": s.clients,
        "seconds_per_phase": s.seconds, "ingest_s": round(ingest_s, 2),
        "in_process": local, "mcp_http": remote,
        "overhead": {
            "p50_ratio_1_client": _ratio(remote["1"]["p50_ms"], local["1"]["p50_ms"]),
            "p95_ratio_1_client": _ratio(remote["1"]["p95_ms"], local["1"]["p95_ms"]),
            f"p50_ratio_{many}_clients": _ratio(remote[many]["p50_ms"], local[many]["p50_ms"]),
            f"throughput_ratio_{many}_clients": _ratio(remote[many]["req_per_s"],
                                                       local[many]["req_per_s"]),
        },
    }


def _ratio(a: float, b: float) -> float:
    return round(a / b, 2) if b else float("nan")
