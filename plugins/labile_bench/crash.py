"""``labile bench crash``: kill -9 a writer at random points, inside commits and inside
operations, then verify.

Each trial starts a writer subprocess (`labile_bench.crash_child`) on one store
(a directory, or ``s3://`` on moto's S3 server), which adds batches of turns (a
feedback every third batch) and, after each, runs the operation under test
(``--op``: forget, purge, either with erase, erase, consolidate, import) until
the bench kills it with SIGKILL: at a random moment, just after the writer
announced a commit, or at a random point of the operation's usual duration. The
bench then opens the store itself, as any later process would, and checks:

* every namespace opens and reads (observations, nodes, edges, a search); no id
  appears twice; every edge's ends and every node's sources exist; every weight
  is in [0, 1]; nothing is pending;
* every acknowledged batch is stored, whole, unless its forget was acknowledged
  (then it is gone); a batch whose forget was in flight is whole or gone; every
  stored batch was begun; an import is whole, or absent if it was in flight; the
  purged namespace holds whole batches only;
* adding the in-flight batch again is idempotent: it adds nothing if the batch
  survived, exactly its turns if it was rolled back, and a re-add of the last
  acknowledged batch adds nothing.

A *rollback* is a trial whose in-flight batch (begun, not acknowledged) left
nothing behind; a batch that was committed but killed before its
acknowledgement is counted apart. Any broken check, or any error raised by a
check (a raw engine error included), is a *failure*.
"""

from __future__ import annotations

import contextlib
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import attrs

from labile import LabileError, Memory
from labile_bench.crash_child import AUX, BATCH, IMPORTED, NAMESPACE, OPS, batch_of, batch_turns
from labile_bench.progress import progress

__all__ = ["OPS", "CrashTally", "run_crash"]

#: How long a writer may take to start (open the memory) before the trial fails.
START_TIMEOUT_S: Final = 300.0
#: How long the bench waits for a writer to announce a commit.
COMMIT_TIMEOUT_S: Final = 120.0


@attrs.define
class CrashTally:
    """The outcome of the trials of one preset and operation."""

    preset: str
    op: str = "add"
    store: str = "local"
    trials: int = 0
    in_commit: int = 0
    in_op: int = 0
    rollbacks: int = 0
    committed_unacked: int = 0
    acked_batches: int = 0
    ops_acked: int = 0
    failures: int = 0
    problems: list[str] = attrs.field(factory=list)

    def row(self) -> dict[str, Any]:
        """The tally as a table row."""
        return {"preset": self.preset, "op": self.op, "store": self.store,
                "trials": self.trials, "killed in commit": self.in_commit,
                "killed in op": self.in_op, "rollbacks": self.rollbacks,
                "committed, not acknowledged": self.committed_unacked,
                "batches acknowledged": self.acked_batches, "ops acknowledged": self.ops_acked,
                "failures": self.failures}


class _Writer:
    """One writer subprocess and the lines it printed (read by a thread)."""

    def __init__(self, table: dict[str, Any], first: int, op: str, op_first: int) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "labile_bench.crash_child", json.dumps(table), str(first),
             op, str(op_first)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self.timed: list[tuple[float, str]] = []  # (monotonic time read, line)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.timed.append((time.monotonic(), line.strip()))
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


@attrs.define
class _History:
    """What the writers of one store were told was done, across its trials."""

    acked: set[int] = attrs.field(factory=set)  # batches whose add returned
    forgotten: set[int] = attrs.field(factory=set)  # batches whose forget returned
    imports: dict[str, list[int]] = attrs.field(factory=dict)  # namespace: expected counts
    imports_acked: set[str] = attrs.field(factory=set)
    next_op: int = 0
    op_seconds: list[float] = attrs.field(factory=list)  # op line to done line, as seen


def _ids(store: Any, namespace: str) -> list[str]:
    return [o.id for o in store.iter_observations(namespace)]


def _check_namespace(memory: Memory, namespace: str) -> tuple[int, int, int]:
    """Assert one namespace's invariants (ids unique, no dangling reference, weights in
    range, a search answers); returns its observation, node and edge counts."""
    store = memory.store
    obs_ids = _ids(store, namespace)
    assert len(obs_ids) == len(set(obs_ids)), f"{namespace}: an observation id is stored twice"
    node_ids = [n.id for n in store.iter_nodes(namespace)]
    assert len(node_ids) == len(set(node_ids)), f"{namespace}: a node id is stored twice"
    known = set(obs_ids)
    for node in store.iter_nodes(namespace):
        assert set(node.sources) <= known, f"{namespace}: node {node.id} cites missing turns"
    nodes = set(node_ids)
    edge_ids = []
    for edge in store.iter_edges(namespace):
        edge_ids.append(edge.id)
        assert edge.src in nodes and edge.dst in nodes, f"edge {edge.id} has a missing end"
        assert 0.0 <= edge.weight <= 1.0, f"edge {edge.id} weight {edge.weight}"
    assert len(edge_ids) == len(set(edge_ids)), f"{namespace}: an edge id is stored twice"
    assert memory.search("Where did they move?", namespace=namespace, k=3) is not None
    return len(obs_ids), len(node_ids), len(edge_ids)


def _whole_batches(obs_ids: list[str], where: str) -> set[int]:
    by_batch: dict[int, set[str]] = defaultdict(set)
    for oid in obs_ids:
        by_batch[batch_of(oid)].add(oid)
    for batch, members in by_batch.items():
        assert len(members) == BATCH, f"{where}: batch {batch} is stored in part: {sorted(members)}"
    return set(by_batch)


def _check(memory: Memory, begun: set[int], history: _History,
           forgetting: frozenset[int] = frozenset()) -> set[int]:
    """Assert the store's invariants, in every namespace; returns the batches stored.
    ``forgetting``: batches whose forget was in flight (stored whole, or gone)."""
    counts = {ns: _check_namespace(memory, ns) for ns in memory.store.namespaces()}
    for ns, expected in history.imports.items():
        got = list(counts.get(ns, (0, 0, 0)))
        whole = got == expected or (ns not in history.imports_acked and got == [0, 0, 0])
        assert whole, f"import into {ns} is half-applied: {got}, expected {expected}"
    _whole_batches(_ids(memory.store, AUX), AUX)
    stored = _whole_batches(_ids(memory.store, NAMESPACE), NAMESPACE)
    lost = history.acked - history.forgotten - forgetting - stored
    assert not lost, f"acknowledged batches lost: {sorted(lost)}"
    kept = stored & history.forgotten
    assert not kept, f"batches whose forget was acknowledged are still stored: {sorted(kept)}"
    assert stored <= begun, f"batches stored but never begun: {sorted(stored - begun)}"
    assert memory.stats(NAMESPACE)["pending"] == 0, "observations left pending"
    return stored


def _kill_point(writer: _Writer, rng: random.Random, first: int, op: str,
                history: _History, tally: CrashTally) -> None:
    """Wait for the moment to kill: a random one, just after a commit line, or (with an
    operation) a random moment within the operation's usual duration."""
    ways = ["random", "commit"] + (["op", "op"] if op != "add" else [])
    way = rng.choice(ways)
    if way == "commit":
        target = first + rng.randint(0, 2)
        hit = writer.wait_for(lambda line: line.startswith("commit ")
                              and int(line.split()[1]) >= target, COMMIT_TIMEOUT_S)
        time.sleep(rng.uniform(0.0, 0.03))
        tally.in_commit += hit
    elif way == "op":
        hit = writer.wait_for(lambda line: line.startswith("op "), COMMIT_TIMEOUT_S)
        usual = sorted(history.op_seconds)[len(history.op_seconds) // 2] \
            if history.op_seconds else 0.5
        time.sleep(rng.uniform(0.0, 1.2 * usual))
        tally.in_op += hit
    else:
        time.sleep(rng.uniform(0.05, 1.5))


def _op_times(lines: list[tuple[float, str]]) -> list[float]:
    started: dict[str, float] = {}
    out = []
    for at, line in lines:
        word, _, rest = line.partition(" ")
        if word == "op":
            started[rest.split()[0]] = at
        elif word == "done" and rest in started:
            out.append(at - started[rest])
    return out


def _trial(table: dict[str, Any], rng: random.Random, first: int, op: str,
           history: _History, tally: CrashTally) -> int:
    """One kill and its checks; returns the next batch to write."""
    writer = _Writer(table, first, op, history.next_op)
    if not writer.wait_for(lambda line: line == "ready", START_TIMEOUT_S):
        writer.kill()
        raise RuntimeError(f"the writer did not start (exit {writer.proc.returncode})")
    _kill_point(writer, rng, first, op, history, tally)
    lines = writer.kill()
    history.op_seconds += _op_times(writer.timed)
    begun = set(range(first)) | _numbers(lines, "begin")
    new_acks = _numbers(lines, "ack")
    history.acked |= new_acks
    tally.acked_batches = len(history.acked)
    in_flight = sorted(_numbers(lines, "begin") - new_acks)
    ops = {int(line.split()[1]): line.split()[2:] for line in lines if line.startswith("op ")}
    done = _numbers(lines, "done")
    tally.ops_acked += len(done)
    if ops:
        history.next_op = max(ops) + 1
    forgetting: frozenset[int] = frozenset()
    if op in ("forget", "forget-erase"):
        history.forgotten |= {int(ops[n][0]) - 1 for n in done}
        forgetting = frozenset(int(ops[n][0]) - 1 for n in set(ops) - done)
    if op == "import":
        for n, counts in ops.items():
            history.imports[f"{IMPORTED}{n}"] = [int(c) for c in counts]
        history.imports_acked |= {f"{IMPORTED}{n}" for n in done}
    with Memory.open(table) as memory:
        stored = _check(memory, begun, history, forgetting)
        # Settle what the kill left in flight, as its caller would on a retry.
        for n in sorted(set(ops) - done):
            if op in ("forget", "forget-erase"):
                target = int(ops[n][0]) - 1
                memory.forget(NAMESPACE, [o.id for o in batch_turns(target)])
                history.forgotten.add(target)
        if op in ("purge", "purge-erase"):
            memory.purge(AUX)
        for batch in in_flight:
            survived = batch in stored
            tally.rollbacks += not survived
            tally.committed_unacked += survived
            report = memory.add(batch_turns(batch), namespace=NAMESPACE)
            expected = [] if survived else [o.id for o in batch_turns(batch)]
            assert report.added == expected, f"re-adding batch {batch} added {report.added}"
            history.acked.add(batch)
        live = history.acked - history.forgotten
        if live:
            again = memory.add(batch_turns(max(live)), namespace=NAMESPACE)
            assert again.added == [], "re-adding an acknowledged batch added turns"
        stored = _check(memory, begun | history.acked, history)
    return max(begun | stored, default=-1) + 1


def run_crash(preset: str, trials: int, *, directory: Path, seed: int = 0,
              embedder: str | None = "hashing", op: str = "add",
              store: dict[str, Any] | None = None,
              show_progress: bool | None = None) -> CrashTally:
    """Run ``trials`` kills of a ``preset`` writer running ``op`` (`OPS`) on a fresh store:
    under ``directory``, or the ``[store]`` table ``store`` (an ``s3://`` path, say)."""
    if op not in OPS:
        raise ValueError(f"unknown operation {op!r}; known: {', '.join(OPS)}")
    table: dict[str, Any] = {"preset": preset,
                             "store": store or {"path": str(directory / f"{preset}-{op}")}}
    if embedder:
        table["embedder"] = {"type": embedder}
    rng = random.Random(seed)
    tally = CrashTally(preset=preset, op=op,
                       store="s3" if str(table["store"]["path"]).startswith("s3://") else "local")
    history = _History()
    first = 0
    for _ in progress(range(trials), label=f"crash {preset} {op}", enabled=show_progress):
        tally.trials += 1
        try:
            first = _trial(table, rng, first, op, history, tally)
        except Exception as exc:  # any broken check, or a raw error where none belongs
            tally.failures += 1
            tally.problems.append(f"{type(exc).__name__}: {exc}"[:500])
            with Memory.open(table) as memory:  # carry on after the last stored batch
                stored = {batch_of(i) for i in _ids(memory.store, NAMESPACE)}
            first = max(stored | {first}, default=first) + 1
    return tally


@contextlib.contextmanager
def moto_s3(prefix: str) -> Iterator[dict[str, Any]]:
    """A ``[store]`` table for ``s3://`` + a bucket on moto's S3 server, run on loopback
    for the block (needs ``pip install 'labile[test]'``: moto, obstore).

    The server runs in a process of its own: in this one, a store call that waits for
    the server while holding the interpreter lock would wait for ever. The fake
    credentials go to the environment, by variable name, as a deployment passes real
    ones; the writers inherit them.
    """
    import importlib.util
    import socket
    import urllib.request

    if importlib.util.find_spec("moto") is None:
        raise LabileError("an s3 crash run needs moto's S3 server: pip install 'labile[test]'")
    with socket.socket() as probe:  # a free loopback port for the server
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                               "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                req = urllib.request.Request(f"{endpoint}/labile-crash", method="PUT")
                with urllib.request.urlopen(req, timeout=10):  # loopback only
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise LabileError("moto's S3 server did not start") from None
                time.sleep(0.2)
        os.environ.update(LABILE_CRASH_S3_KEY="testing", LABILE_CRASH_S3_SECRET="testing")
        yield {"path": f"s3://labile-crash/{prefix}",
               # moto's server has been seen to leave a request unanswered: time it out
               # rather than wait for ever.
               "storage_options": {"aws_endpoint": endpoint, "aws_region": "us-east-1",
                                   "allow_http": "true", "timeout": "60s",
                                   "connect_timeout": "10s"},
               "storage_options_env": {"aws_access_key_id": "LABILE_CRASH_S3_KEY",
                                       "aws_secret_access_key": "LABILE_CRASH_S3_SECRET"}}
    finally:
        server.terminate()
        server.wait()
