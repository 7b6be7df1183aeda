"""``labile bench http``: what serving over HTTP costs, against in-process calls, in one run.

A synthetic conversation (`labile_bench.mcp_serve.corpus`) is stored once and the
store copied, so both sides start from the same data: the in-process side
calls `AsyncMemory` on one copy; ``labile serve http`` (a subprocess on a
loopback port, with a bearer token) serves the other. For each number of
concurrent clients (default 1, 8, 32), each side runs a search phase and then
an add phase (one new turn per request) of ``seconds`` each; every phase
reports requests/s and p50/p95 latency. Each HTTP client holds one keep-alive
connection (a minimal HTTP/1.1 client over asyncio streams, so the benchmark
needs nothing beyond the server's own extra). The server's resident memory is
read from ``/proc`` (Linux) after the last phase. Everything is bounded:
phases stop after ``seconds``, and the server is stopped at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import attrs

from labile import AsyncMemory, Memory
from labile.plugin import Observation
from labile_bench.mcp_serve import NAMESPACE, _summary, _wait_listening, corpus


@attrs.frozen(kw_only=True)
class HttpBenchSettings:
    """What to measure: the memory (as for ``Memory.open``), the load, the corpus size."""

    config: str | None = None
    preset: str | None = None
    clients: tuple[int, ...] = (1, 8, 32)
    seconds: float = 3.0
    turns: int = 200
    k: int = 5


class _Connection:
    """One keep-alive HTTP/1.1 connection to the server."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: Any = None) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        data = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {self.token}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n").encode()
        self.writer.write(head + data)
        await self.writer.drain()
        status = int((await self.reader.readline()).split()[1])
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        await self.reader.readexactly(length)
        if status != 200:
            raise RuntimeError(f"{method} {path} answered {status}")
        return status

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _phase(clients: int, seconds: float,
                 call: Callable[[int, int], Awaitable[object]]) -> dict[str, float]:
    """``clients`` tasks calling ``call(client, i)`` in a loop for ``seconds``."""
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def client(c: int) -> None:
        i = 0
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            await call(c, i)
            latencies.append((time.perf_counter() - t0) * 1000)
            i += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(client(c) for c in range(clients)))
    return _summary(latencies, time.perf_counter() - t0)


def _turn(side: str, clients: int, c: int, i: int) -> dict[str, str]:
    when = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=i)
    return {"id": f"{side}-{clients}-{c}-{i}", "role": "Maya", "time": when.isoformat(),
            "content": f"Note {i} from client {c}: I watered the tomatoes and read a chapter."}


async def _in_process(amem: AsyncMemory, s: HttpBenchSettings,
                      questions: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in s.clients:
        def search(c: int, i: int, n: int = n) -> Awaitable[object]:
            return amem.search(questions[(c + i * n) % len(questions)], namespace=NAMESPACE,
                               k=s.k)

        def add(c: int, i: int, n: int = n) -> Awaitable[object]:
            t = _turn("local", n, c, i)
            return amem.add([Observation(id=t["id"], text=t["content"], speaker=t["role"],
                                         timestamp=datetime.fromisoformat(t["time"]))],
                            namespace=NAMESPACE)

        out[str(n)] = {"search": await _phase(n, s.seconds, search),
                       "add": await _phase(n, s.seconds, add)}
    return out


async def _over_http(port: int, token: str, s: HttpBenchSettings,
                     questions: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in s.clients:
        conns = [_Connection(port, token) for _ in range(n)]
        await conns[0].request("GET", "/api/search?" + urlencode({"q": questions[0]}))

        def search(c: int, i: int, conns: list[_Connection] = conns,
                   n: int = n) -> Awaitable[int]:
            q = questions[(c + i * n) % len(questions)]
            return conns[c].request("GET", "/api/search?" + urlencode({"q": q, "k": s.k}))

        def add(c: int, i: int, conns: list[_Connection] = conns,
                n: int = n) -> Awaitable[int]:
            return conns[c].request("POST", "/api/add", {"messages": [_turn("http", n, c, i)]})

        try:
            out[str(n)] = {"search": await _phase(n, s.seconds, search),
                           "add": await _phase(n, s.seconds, add)}
        finally:
            for conn in conns:
                await conn.close()
    return out


def _rss_mb(pid: int) -> dict[str, float] | None:
    """Resident and peak resident memory of process ``pid`` in MB (Linux ``/proc``)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {"rss_mb": round(int(fields["VmRSS"].split()[0]) / 1024, 1),
            "peak_rss_mb": round(int(fields["VmHWM"].split()[0]) / 1024, 1)}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_argv(s: HttpBenchSettings, path: str, port: int) -> list[str]:
    argv = [sys.executable, "-m", "labile_cli", "serve", "http", "--path", path, "-n",
            NAMESPACE, "--http", f"127.0.0.1:{port}", "--max-messages", "10"]
    if s.config:
        argv += ["-c", s.config]
    if s.preset:
        argv += ["--preset", s.preset]
    return argv


def _ratios(local: dict[str, Any], remote: dict[str, Any]) -> dict[str, Any]:
    def r(a: float, b: float) -> float:
        return round(a / b, 2) if b else float("nan")

    return {n: {op: {"p50_ratio": r(remote[n][op]["p50_ms"], local[n][op]["p50_ms"]),
                     "throughput_ratio": r(remote[n][op]["req_per_s"],
                                           local[n][op]["req_per_s"])}
                for op in ("search", "add")} for n in local}


def run_bench(s: HttpBenchSettings) -> dict[str, Any]:
    """Run every phase (see the module docstring) and return the summary."""
    with tempfile.TemporaryDirectory(prefix="labile-bench-http-") as tmp:
        local_path, served_path = str(Path(tmp) / "local"), str(Path(tmp) / "served")
        observations, questions = corpus(s.turns)
        with Memory.open(s.config, preset=s.preset, path=local_path) as memory:
            t0 = time.perf_counter()
            memory.add(observations, namespace=NAMESPACE)
            ingest_s = time.perf_counter() - t0
            pipeline = memory.stats(NAMESPACE)["pipeline"]
        shutil.copytree(local_path, served_path)

        async def local_run() -> dict[str, Any]:
            amem = AsyncMemory(Memory.open(s.config, preset=s.preset, path=local_path),
                               max_workers=max(s.clients))
            async with amem:  # closes the memory
                await amem.search(questions[0], namespace=NAMESPACE, k=s.k)  # warm-up
                return await _in_process(amem, s, questions)

        local = asyncio.run(local_run())
        port, token = _free_port(), secrets.token_urlsafe(24)
        env = {**os.environ, "LABILE_HTTP_TOKEN": token}
        proc = subprocess.Popen(_server_argv(s, served_path, port), env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_listening(port, proc)
            remote = asyncio.run(_over_http(port, token, s, questions))
            memory_held = _rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    return {"pipeline": pipeline, "turns": s.turns, "k": s.k, "clients": list(s.clients),
            "seconds_per_phase": s.seconds, "ingest_s": round(ingest_s, 2),
            "in_process": local, "http": remote, "server_memory": memory_held,
            "http_vs_in_process": _ratios(local, remote)}
