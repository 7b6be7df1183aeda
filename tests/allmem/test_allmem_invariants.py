"""Hypothesis properties of ATC over random edit sequences (the All-Mem paper's ATC operators).

Random sequences of writes and consolidation runs, where a seeded random
diagnoser proposes arbitrary edits (valid or not, any confidence) and a seeded
random planner answers with grounded, ungrounded, empty or declining plans.
After every step:

* the evidence of every unit ever written is byte-identical to what was first
  written, and no unit ever disappears;
* every archived unit is reachable from the visible surface over directed,
  active typed links;
* no unit has more than d_σ active semantic out-links.

And two pipelines fed the same sequence with the same planner outputs end in
the same graph (determinism given the plans).
"""

from __future__ import annotations

import itertools
import random
import zlib
from typing import Any

from allmem_helpers import T0
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labile._config import resolve
from labile._memory import Memory, build_registries
from labile._model import NodeFilter, Observation
from labile_allmem.consolidate.atc import ATC
from labile_allmem.consolidate.records import DescriptorPlan, PlanError, Proposal, SplitPlan
from labile_allmem.diagnostics import hop_distances
from labile_allmem.schema import RUN, UNIT
from labile_text.sentences import split_sentences

CAP = 2
REGISTRIES = build_registries()
CONFIG = resolve({
    "preset": "allmem", "store": {"type": "memory"}, "embedder": {"type": "hashing"},
    "extractor": {"type": "allmem.write", "semantic_cap": CAP, "semantic_threshold": 0.0},
    "consolidate": [{"type": "allmem.atc", "every_n_sessions": 0, "semantic_cap": CAP,
                     "semantic_threshold": 0.0}],
}, REGISTRIES)

POOL = [
    "I live in Paris with my two cats.",
    "I now live in Rome, I moved last spring.",
    "Thanks so much!",
    "Thanks so much!!",
    "My dog Rex loves the beach. The budget meeting got moved to Friday.",
    "We painted the fence blue. Then we ate pizza. Tomorrow I fly to Oslo.",
    "I no longer play the violin.",
    "I play the violin every evening.",
    "Did you see the game last night?",
    "Yes!",
]

STEP = st.one_of(
    st.tuples(st.just("add"), st.lists(
        st.tuples(st.sampled_from(["Ann", "Bob"]), st.sampled_from(POOL)),
        min_size=1, max_size=4)),
    st.tuples(st.just("consolidate"), st.integers(0, 2**20)),
    st.tuples(st.just("consolidate"), st.integers(0, 2**20)),
)


def _rng(seed: int, *keys: str) -> random.Random:
    return random.Random(seed ^ zlib.crc32("|".join(keys).encode()))


class RandomDiagnoser:
    """Arbitrary proposals: any op, any neighbourhood members, unknown ids, any confidence."""

    failures = 0

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def diagnose(self, hoods):
        out = []
        for hood in hoods:
            rng = _rng(self.seed, hood.anchor.id)
            ids = [u.id for u in hood.units]
            for _ in range(rng.randint(0, 3)):
                op = rng.choice(["split", "merge", "update", "bogus"])
                if op == "split":
                    target = (rng.choice(ids),)
                elif op == "merge":
                    target = tuple(rng.sample(ids, min(len(ids), rng.randint(1, 3))))
                else:
                    target = tuple(rng.sample(ids, min(len(ids), 2)))
                if rng.random() < 0.1:
                    target = (*target, "no-such-id")
                out.append(Proposal(op=op, target=target, confidence=rng.uniform(0.8, 1.0),
                                    anchor=hood.anchor.id))
        return out


class RandomPlanner:
    """Plans derived from the seed and the target: valid, ungrounded, empty or declined."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def plan_split(self, unit):
        rng = _rng(self.seed, "split", unit.id)
        spans = split_sentences(unit.content)
        roll = rng.random()
        if roll < 0.1:
            raise PlanError("scripted failure")
        if roll < 0.2:
            return SplitPlan(segments=("not in the evidence", unit.content))
        n_cuts = rng.randint(1 if roll < 0.8 else 0, len(spans) - 1) if len(spans) > 1 else 0
        cuts = sorted(rng.sample(range(1, len(spans)), n_cuts))
        bounds = [0, *cuts, len(spans)]
        return SplitPlan(segments=tuple(
            unit.content[spans[a][0]:spans[b - 1][1]] for a, b in itertools.pairwise(bounds)))

    def _descriptor(self, key: str, units) -> DescriptorPlan:
        rng = _rng(self.seed, key, *(u.id for u in units))
        roll = rng.random()
        if roll < 0.1:
            return DescriptorPlan(summary="", keywords=())
        if roll < 0.2:
            return DescriptorPlan(summary="x", decline=True)
        return DescriptorPlan(summary=units[0].description, keywords=("k",))

    def plan_merge(self, units):
        return self._descriptor("merge", units)

    def plan_update(self, current, old):
        return self._descriptor("update", [current])


def _memory() -> Memory:
    return Memory(CONFIG, REGISTRIES)


def _apply(mem: Memory, step: tuple[str, Any], index: int) -> None:
    kind, arg = step
    if kind == "add":
        obs = [Observation(id=f"o{index}:{i}", text=text, speaker=speaker,
                           timestamp=T0.replace(day=1 + index % 27), session=str(index))
               for i, (speaker, text) in enumerate(arg)]
        mem.add(obs, namespace="n")
    else:
        (_n, atc), = mem.consolidators
        assert isinstance(atc, ATC)
        atc.diagnoser = RandomDiagnoser(arg)
        atc.planner = RandomPlanner(arg)
        mem.consolidate(namespace="n")


def _check(mem: Memory, evidence: dict[str, str]) -> None:
    units = {n.id: n for n in mem.store.iter_nodes("n", NodeFilter(kinds=frozenset({UNIT})))}
    assert set(evidence) <= set(units), "a unit disappeared"
    for nid, node in units.items():
        assert evidence.setdefault(nid, node.content) == node.content, "evidence changed"
    distances, links = hop_distances(mem.store, "n")
    unreachable = [a for a, d in distances.items() if d is None]
    assert not unreachable, f"archived units unreachable from V+: {unreachable}"
    assert links["max_semantic_out_degree"] <= CAP


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, min_size=2, max_size=12))
def test_invariants_hold_after_every_step(steps):
    """Evidence immutable, nothing deleted, archived reachable, semantic cap holds."""
    mem = _memory()
    evidence: dict[str, str] = {}
    for i, step in enumerate(steps):
        _apply(mem, step, i)
        _check(mem, evidence)


def _snapshot(mem: Memory) -> tuple[Any, ...]:
    nodes = []
    for n in mem.store.iter_nodes("n"):
        attrs = dict(n.attrs)
        if n.kind == RUN:
            attrs.pop("ms", None)
        emb = None if n.embedding is None else n.embedding.tobytes()
        nodes.append((n.id, n.kind, n.content, n.description, n.keywords, n.visible,
                      n.sources, repr(sorted(attrs.items())), emb))
    edges = [(e.id, e.weight, e.origin, repr(sorted(e.attrs.items())))
             for e in mem.store.iter_edges("n")]
    return tuple(sorted(nodes)), tuple(sorted(edges))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, min_size=1, max_size=6))
def test_consolidation_is_deterministic_given_the_plans(steps):
    """Same state + same planner outputs -> the same graph."""
    steps = [*steps, ("consolidate", 7)]
    first, second = _memory(), _memory()
    for i, step in enumerate(steps):
        _apply(first, step, i)
        _apply(second, step, i)
    assert _snapshot(first) == _snapshot(second)
