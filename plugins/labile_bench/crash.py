"""``labile bench crash``: kill -9 a writer at random points and inside commits, then verify.

Each trial starts a writer subprocess (`labile_bench.crash_child`) on one store
directory, which adds batches of turns (and a feedback every third batch)
until the bench kills it with SIGKILL: in half of the trials at a random moment,
in the other half just after the writer announced a commit (so the kill lands
inside the store's commit). The bench then opens the store itself, as any
later process would, and checks:

* every acknowledged batch (its ``add`` returned) is stored, whole;
* every stored batch is whole (all of its turns or none), and was begun;
* no observation, node or edge id appears twice; every edge's ends and every
  node's sources exist; every weight is in [0, 1]; nothing is pending;
* a search works, and adding the in-flight batch again is idempotent: it adds
  nothing if the batch survived, exactly its turns if it was rolled back, and
  a re-add of the last acknowledged batch adds nothing.

A *rollback* is a trial whose in-flight batch (begun, not acknowledged) left
nothing behind; a batch that was committed but killed before its
acknowledgement is counted apart. Any broken check is a *failure*.
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import attrs

from labile import Memory
from labile_bench.crash_child import BATCH, NAMESPACE, batch_turns
from labile_bench.progress import progress

__all__ = ["CrashTally", "run_crash"]

#: How long a writer may take to start (open the memory) before the trial fails.
START_TIMEOUT_S: Final = 300.0
#: How long the bench waits for a writer to announce a commit.
COMMIT_TIMEOUT_S: Final = 120.0


@attrs.define
class CrashTally:
    """The outcome of the trials of one preset."""

    preset: str
    trials: int = 0
    in_commit: int = 0
    rollbacks: int = 0
    committed_unacked: int = 0
    acked_batches: int = 0
    failures: int = 0
    problems: list[str] = attrs.field(factory=list)

    def row(self) -> dict[str, Any]:
        """The tally as a table row."""
        return {"preset": self.preset, "trials": self.trials, "killed in commit": self.in_commit,
                "rollbacks": self.rollbacks, "committed, not acknowledged":
                self.committed_unacked, "batches acknowledged": self.acked_batches,
                "failures": self.failures}


class _Writer:
    """One writer subprocess and the lines it printed (read by a thread)."""

    def __init__(self, table: dict[str, Any], first: int) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "labile_bench.crash_child", json.dumps(table), str(first)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def wait_for(self, accept: Callable[[str], bool], timeout: float) -> bool:
        """Read lines until one is accepted (True) or the writer ends / times out."""
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return False
            if line is None:
                return False
            self.seen.append(line)
            if accept(line):
                return True
        return False

    def kill(self) -> list[str]:
        """SIGKILL the writer; every line it printed."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        while (line := self.lines.get()) is not None:
            self.seen.append(line)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.seen


def _numbers(lines: list[str], word: str) -> set[int]:
    return {int(line.split()[1]) for line in lines if line.startswith(word + " ")}


def _check(memory: Memory, begun: set[int], acked: set[int]) -> set[int]:
    """Assert the store's invariants; returns the batches stored."""
    store = memory.store
    obs_ids = [o.id for o in store.iter_observations(NAMESPACE)]
    assert len(obs_ids) == len(set(obs_ids)), "an observation id is stored twice"
    by_batch: dict[int, set[str]] = defaultdict(set)
    for oid in obs_ids:
        by_batch[int(oid.split("-")[0][1:])].add(oid)
    for batch, members in by_batch.items():
        assert len(members) == BATCH, f"batch {batch} is stored in part: {sorted(members)}"
    stored = set(by_batch)
    assert acked <= stored, f"acknowledged batches lost: {sorted(acked - stored)}"
    assert stored <= begun, f"batches stored but never begun: {sorted(stored - begun)}"
    node_ids = [n.id for n in store.iter_nodes(NAMESPACE)]
    assert len(node_ids) == len(set(node_ids)), "a node id is stored twice"
    known = set(obs_ids)
    for node in store.iter_nodes(NAMESPACE):
        assert set(node.sources) <= known, f"node {node.id} cites missing observations"
    nodes = set(node_ids)
    edge_ids = []
    for edge in store.iter_edges(NAMESPACE):
        edge_ids.append(edge.id)
        assert edge.src in nodes and edge.dst in nodes, f"edge {edge.id} has a missing end"
        assert 0.0 <= edge.weight <= 1.0, f"edge {edge.id} weight {edge.weight}"
    assert len(edge_ids) == len(set(edge_ids)), "an edge id is stored twice"
    assert memory.stats(NAMESPACE)["pending"] == 0, "observations left pending"
    return stored


def _trial(table: dict[str, Any], rng: random.Random, first: int, acked: set[int],
           tally: CrashTally) -> int:
    """One kill and its checks; returns the next batch to write."""
    writer = _Writer(table, first)
    if not writer.wait_for(lambda line: line == "ready", START_TIMEOUT_S):
        writer.kill()
        raise RuntimeError(f"the writer did not start (exit {writer.proc.returncode})")
    in_commit = rng.random() < 0.5
    if in_commit:
        target = first + rng.randint(0, 2)
        hit = writer.wait_for(lambda line: line.startswith("commit ")
                              and int(line.split()[1]) >= target, COMMIT_TIMEOUT_S)
        time.sleep(rng.uniform(0.0, 0.03))
        tally.in_commit += hit
    else:
        time.sleep(rng.uniform(0.05, 1.5))
    lines = writer.kill()
    begun = set(range(first)) | _numbers(lines, "begin")
    new_acks = _numbers(lines, "ack")
    acked |= new_acks
    tally.acked_batches = len(acked)
    in_flight = sorted(_numbers(lines, "begin") - new_acks)
    with Memory.open(table) as memory:
        stored = _check(memory, begun, acked)
        for batch in in_flight:
            survived = batch in stored
            tally.rollbacks += not survived
            tally.committed_unacked += survived
            report = memory.add(batch_turns(batch), namespace=NAMESPACE)
            expected = [] if survived else [o.id for o in batch_turns(batch)]
            assert report.added == expected, f"re-adding batch {batch} added {report.added}"
            acked.add(batch)
        if acked:
            again = memory.add(batch_turns(max(acked)), namespace=NAMESPACE)
            assert again.added == [], "re-adding an acknowledged batch added turns"
        assert memory.search("Where did they move?", namespace=NAMESPACE, k=3) is not None
        stored = _check(memory, begun | acked, acked)
    return max(stored, default=-1) + 1


def run_crash(preset: str, trials: int, *, directory: Path, seed: int = 0,
              embedder: str | None = "hashing",
              show_progress: bool | None = None) -> CrashTally:
    """Run ``trials`` kills of a ``preset`` writer on a fresh store under ``directory``."""
    table: dict[str, Any] = {"preset": preset, "store": {"path": str(directory / preset)}}
    if embedder:
        table["embedder"] = {"type": embedder}
    rng = random.Random(seed)
    tally = CrashTally(preset=preset)
    acked: set[int] = set()
    first = 0
    for _ in progress(range(trials), label=f"crash {preset}", enabled=show_progress):
        tally.trials += 1
        try:
            first = _trial(table, rng, first, acked, tally)
        except AssertionError as exc:
            tally.failures += 1
            tally.problems.append(str(exc))
            with Memory.open(table) as memory:  # carry on after the last stored batch
                stored = {int(o.id.split("-")[0][1:]) for o in
                          memory.store.iter_observations(NAMESPACE)}
            first = max(stored, default=first) + 1
    return tally
