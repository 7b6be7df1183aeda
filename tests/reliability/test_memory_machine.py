"""A hypothesis state machine over `Memory`: random sequences of add, search,
feedback, consolidate, forget, purge and reopen, each write sometimes failing at
a random point of its batch (a store call that raises, Ctrl-C, a failed
commit), for every bundled offline preset.

After every step these invariants hold:

* every acknowledged observation (an ``add`` that returned) is readable, byte for
  byte as it was given, until it is forgotten or purged; nothing else is stored
  (an ``add`` that raised left none of its observations, unless Ctrl-C came
  after its commit, and then all of them);
* no observation, node or edge id appears twice;
* every edge's two ends are nodes of its namespace, and every node's sources are
  observations of its namespace (namespaces stay apart);
* every edge weight is within [0, 1];
* a search returns at most ``k`` distinct nodes, none of them a pending mark.

The default run is small (`EXAMPLES` examples of `STEPS` steps per preset, the
in-memory store, reopening = new components over the same store); ``-m slow``
runs many more examples on LanceDB, reopening the directory for real.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import timedelta
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from reliability_helpers import LINES, OFFLINE_PRESETS, T0, Injected, failing_store

from labile import Memory
from labile._model import Observation
from labile._recovery import PENDING_KIND

EXAMPLES, STEPS = 5, 12
SLOW_EXAMPLES, SLOW_STEPS = 25, 20
NAMESPACES = ("a", "b")
FAILURES = st.one_of(st.none(), st.tuples(st.sampled_from(["error", "interrupt", "commit"]),
                                          st.integers(min_value=1, max_value=15)))
#: How many examples each preset ran (the test prints it; the report cites it).
RUN: dict[str, int] = {}


class MemoryMachine(RuleBasedStateMachine):
    """Operations on one memory next to a model of what it must hold."""

    preset: ClassVar[str] = "realm"
    lancedb: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        RUN[self.preset] = RUN.get(self.preset, 0) + 1
        self.dir = tempfile.mkdtemp(prefix="labile-machine-")
        self.table: dict[str, Any] = {"preset": self.preset, "embedder": {"type": "hashing"},
                                      "store": {"path": self.dir} if self.lancedb
                                      else {"type": "memory"}}
        self.memory = Memory.open(self.table)
        self.acked: dict[str, dict[str, Observation]] = {ns: {} for ns in NAMESPACES}
        self.serial = 0

    def teardown(self) -> None:
        self.memory.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _write(self, failure: tuple[str, int] | None, call: Any) -> bool:
        """Run ``call``, failing as ``failure`` says; whether it completed."""
        if failure is None:
            call()
            return True
        kind, at = failure
        try:
            with failing_store(self.memory, at=at, kind=kind):
                call()
        except (Injected, KeyboardInterrupt):
            return False
        return True

    @initialize()
    def start(self) -> None:
        self.add_turns("a", 3, None)

    @rule(ns=st.sampled_from(NAMESPACES), count=st.integers(1, 3), failure=FAILURES)
    def add_turns(self, ns: str, count: int, failure: tuple[str, int] | None) -> None:
        batch = []
        for _ in range(count):
            i = self.serial
            self.serial += 1
            batch.append(Observation(
                id=f"{ns}{i}", text=f"{LINES[i % len(LINES)]} ({i} é ✓)",
                speaker=("Ana", "Ben")[i % 2], session=f"s{i // 5}",
                timestamp=T0 + timedelta(hours=i), metadata={"n": i, "tag": ns}))
        if self._write(failure, lambda: self.memory.add(batch, namespace=ns)):
            self.acked[ns].update((o.id, o) for o in batch)
            return
        # A failed add left nothing, or (Ctrl-C after its commit, during the
        # automatic consolidation that follows) all of it, built.
        ids = {o.id for o in batch}
        kept = self.memory.store.existing_observation_ids(ns, ids)
        assert kept in (set(), ids), f"an add that raised kept part of its batch: {kept}"
        if kept:
            assert failure is not None and failure[0] == "interrupt", failure
            self.acked[ns].update((o.id, o) for o in batch)

    @rule(ns=st.sampled_from(NAMESPACES), data=st.data())
    def retry_an_add(self, ns: str, data: st.DataObject) -> None:
        """A re-add of acknowledged ids adds nothing."""
        if not self.acked[ns]:
            return
        ids = sorted(self.acked[ns])
        again = [self.acked[ns][i] for i in data.draw(st.lists(st.sampled_from(ids),
                                                               min_size=1, max_size=3,
                                                               unique=True))]
        report = self.memory.add(again, namespace=ns)
        assert report.added == [] and sorted(report.skipped_existing) == sorted(
            o.id for o in again)

    @rule(ns=st.sampled_from(NAMESPACES), k=st.integers(1, 6),
          query=st.sampled_from(["Miso the cat", "Where is Porto?", "Lena's concert"]))
    def search(self, ns: str, k: int, query: str) -> None:
        hits = self.memory.search(query, namespace=ns, k=k).hits
        ids = [h.node.id for h in hits]
        assert len(ids) <= k and len(set(ids)) == len(ids)
        assert all(h.node.kind != PENDING_KIND for h in hits)

    @rule(ns=st.sampled_from(NAMESPACES), failure=FAILURES)
    def feedback(self, ns: str, failure: tuple[str, int] | None) -> None:
        result = self.memory.search("Lena's concert", namespace=ns, k=4)
        cited = [h.node.id for h in result.hits[:2]]
        self._write(failure, lambda: self.memory.feedback(result, cited=cited, useful=True))

    @rule(ns=st.sampled_from(NAMESPACES), failure=FAILURES)
    def consolidate(self, ns: str, failure: tuple[str, int] | None) -> None:
        self._write(failure, lambda: self.memory.consolidate(namespace=ns))

    @precondition(lambda self: any(self.acked.values()))
    @rule(data=st.data())
    def forget(self, data: st.DataObject) -> None:
        ns = data.draw(st.sampled_from([n for n in NAMESPACES if self.acked[n]]))
        oid = data.draw(st.sampled_from(sorted(self.acked[ns])))
        counts = self.memory.forget(ns, [oid])
        assert counts["observations"] == 1
        del self.acked[ns][oid]

    @rule(ns=st.sampled_from(NAMESPACES))
    def purge(self, ns: str) -> None:
        self.memory.purge(ns)
        self.acked[ns].clear()

    @rule()
    def reopen(self) -> None:
        if self.lancedb:
            self.memory.close()
            self.memory = Memory.open(self.table)
        else:  # the in-memory store cannot be reopened: new components over the same data
            store = getattr(self.memory.store, "inner", self.memory.store)
            self.memory = Memory.open(self.table, store=store)

    @invariant()
    def holds_exactly_what_was_acknowledged(self) -> None:
        store = self.memory.store
        for ns in NAMESPACES:
            stored = list(store.iter_observations(ns))
            ids = [o.id for o in stored]
            assert len(ids) == len(set(ids)), f"duplicate observation ids in {ns}"
            assert set(ids) == set(self.acked[ns]), (ns, sorted(ids), sorted(self.acked[ns]))
            for obs in stored:
                given = self.acked[ns][obs.id]
                assert (obs.text, obs.speaker, obs.session, obs.timestamp, obs.metadata) == (
                    given.text, given.speaker, given.session, given.timestamp, given.metadata)

    @invariant()
    def graph_is_consistent_and_apart(self) -> None:
        store = self.memory.store
        for ns in NAMESPACES:
            node_ids = [n.id for n in store.iter_nodes(ns)]
            assert len(node_ids) == len(set(node_ids)), f"duplicate node ids in {ns}"
            observations = set(self.acked[ns])
            for node in store.iter_nodes(ns):
                assert set(node.sources) <= observations, (ns, node.id, node.sources)
            nodes = set(node_ids)
            edge_ids = []
            for edge in store.iter_edges(ns):
                edge_ids.append(edge.id)
                assert edge.src in nodes and edge.dst in nodes, (ns, edge.id)
                assert 0.0 <= edge.weight <= 1.0, (ns, edge.id, edge.weight)
            assert len(edge_ids) == len(set(edge_ids)), f"duplicate edge ids in {ns}"


def _run(preset: str, *, lancedb: bool, examples: int, steps: int) -> None:
    RUN[preset] = 0
    machine = type(f"Machine_{preset}", (MemoryMachine,), {"preset": preset,
                                                          "lancedb": lancedb})
    run_state_machine_as_test(machine, settings=settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, derandomize=False,
        database=None, suppress_health_check=list(HealthCheck)))
    print(f"{preset}: {RUN.get(preset, 0)} examples")


@pytest.mark.parametrize("preset", OFFLINE_PRESETS)
def test_memory_machine(preset: str) -> None:
    _run(preset, lancedb=False, examples=EXAMPLES, steps=STEPS)


@pytest.mark.slow
@pytest.mark.parametrize("preset", OFFLINE_PRESETS)
def test_memory_machine_on_lancedb_many_examples(preset: str) -> None:
    _run(preset, lancedb=True, examples=SLOW_EXAMPLES, steps=SLOW_STEPS)
