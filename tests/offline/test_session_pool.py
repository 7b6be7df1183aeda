"""A Memory per request is safe (issue #27 item 7): ONNX sessions are shared per
process, and open / search / close cycles do not grow the process's threads."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from labile_bench.cycles import run_cycles
from labile_offline.minilm import MiniLMConfig, MiniLMEmbedder
from labile_offline.pool import SessionKey, pooled_sessions, shared_session


def test_embedders_of_one_model_and_settings_share_a_session() -> None:
    first = MiniLMEmbedder(MiniLMConfig(), None)
    second = MiniLMEmbedder(MiniLMConfig(batch_size=2), None)  # batch size: not the session's
    other = MiniLMEmbedder(MiniLMConfig(threads=1), None)
    first.load()
    second.load()
    other.load()
    assert first._session is second._session and first._tokenizer is second._tokenizer
    assert other._session is not first._session
    assert pooled_sessions() == 2
    assert (first.embed(["violin"]) == second.embed(["violin"])).all()


def test_a_failed_load_is_not_pooled_and_is_tried_again() -> None:
    key = SessionKey(model="fake", threads=1, max_tokens=8)
    calls: list[int] = []

    def load() -> tuple[Any, Any]:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk hiccup")
        return "session", "tokenizer"

    with pytest.raises(OSError):
        shared_session(key, load)
    assert pooled_sessions() == 0
    assert shared_session(key, load) == ("session", "tokenizer")
    assert shared_session(key, load) == ("session", "tokenizer") and len(calls) == 2


def test_concurrent_first_loads_load_once() -> None:
    key = SessionKey(model="fake", threads=1, max_tokens=8)
    calls: list[int] = []
    barrier = threading.Barrier(4)
    got: list[tuple[Any, Any]] = []

    def load() -> tuple[Any, Any]:
        calls.append(1)
        return object(), object()

    def work() -> None:
        barrier.wait()
        got.append(shared_session(key, load))

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(calls) == 1 and all(g is got[0] for g in got)


@pytest.mark.parametrize("embedder", ["hashing", "minilm"])
def test_open_close_cycles_keep_threads_flat(embedder: str) -> None:
    # threads are counted by the kernel (/proc/self/task): onnxruntime's and LanceDB's
    # own count too. The first cycles start what lives for good (the checkpoint at 10);
    # the slack covers the async runtime's blocking pool, which starts threads on
    # demand and retires them when idle.
    marks = list(run_cycles(60, config={"embedder": {"type": embedder}}, preset="realm",
                            every=30))
    warm, last = marks[0], marks[-1]
    assert (warm.cycle, last.cycle) == (10, 60)
    assert last.os_threads <= warm.os_threads + 4, marks
    assert last.python_threads <= warm.python_threads
    if embedder == "minilm":
        assert pooled_sessions() == 1


@pytest.mark.slow
def test_open_close_cycles_keep_memory_flat_with_minilm() -> None:
    # before the pool every open loaded its own session: about +0.36 MB per cycle
    # (RSS 433.6 -> 439.0 MB from cycle 10 to 25, `labile bench cycles --no-session-pool`)
    marks = list(run_cycles(60, config={"embedder": {"type": "minilm"}}, preset="realm",
                            every=50))
    assert marks[-1].rss_mb - marks[0].rss_mb < 8.0, marks


def test_the_bench_command_reports_growth_after_the_warm_up(
        capsys: pytest.CaptureFixture[str]) -> None:
    from labile_cli import main

    assert main(["bench", "cycles", "--cycles", "12", "--every", "6", "--preset", "bm25",
                 "--embedder", "hashing"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cycle  os_threads") and "after the warm-up (cycle 10)" in out
    assert [line.split()[0] for line in out.splitlines()[1:4]] == ["6", "10", "12"]
    assert main(["bench", "cycles", "--cycles", "0"]) == 2
    assert "--cycles and --every must be at least 1" in capsys.readouterr().err
