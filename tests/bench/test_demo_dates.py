"""``labile demo`` dates what its sample conversation talks about correctly.

The sample was said between March and May 2024; a plan in it ("training for
the Lisbon half marathon in May", said on 2 March 2024) is about May 2024,
never the May before.
"""

from __future__ import annotations

import pytest

from labile import Memory
from labile._model import NodeFilter
from labile_bench.demo import NAMESPACE, demo_observations, load_demo, node_dates, run_demo
from labile_realm.schema import EVENT


def _demo_events() -> dict[str, str]:
    """The demo's REALM events by source turn, as the demo prints their dates."""
    config = {"preset": "realm", "store": {"type": "memory"}, "embedder": {"type": "hashing"}}
    with Memory.open(config) as memory:
        for batch in demo_observations(load_demo()):
            memory.add(batch, namespace=NAMESPACE)
        events = memory.store.iter_nodes(NAMESPACE, NodeFilter(kinds={EVENT}))
        return {n.sources[0]: node_dates(n) for n in events if len(n.sources) == 1}


def test_the_marathon_plan_is_dated_may_2024() -> None:
    dates = _demo_events()
    # S1:3 "I've been training for the Lisbon half marathon in May." (said 2 March 2024)
    assert dates["S1:3"] == "2024-03-02 to 2024-05-31"
    # S2:5 "I'll ... maybe run the Berlin 10k in September." (said 16 March 2024)
    assert dates["S2:5"] == "2024-03-16 to 2024-09-30"


@pytest.mark.slow  # the demo loads its embedding model: ~20 s on a loaded machine
def test_no_demo_memory_is_dated_before_the_conversation() -> None:
    """Every date the demo prints lies in 2024, the year the sample was said."""
    lines: list[str] = []
    run_demo(preset="realm", write=lines.append, k=3)
    printed = [line for line in lines if "[realm." in line]
    assert printed
    assert not [line for line in printed if "2023-" in line]
    assert not [d for d in _demo_events().values() if not d.startswith("2024-")]
