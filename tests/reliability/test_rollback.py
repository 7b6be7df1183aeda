"""A failed `add` leaves every component as it was: later adds to the same
conversation work, for every offline preset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from labile import Memory, build_registries
from labile._model import AddReport, Observation

OFFLINE_PRESETS = sorted(
    c.name for c in build_registries()["preset"] if not c.name.endswith("-llm")
)
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
LINES = ["I adopted a cat named Miso.", "We moved to Porto last spring.",
         "My sister Lena plays the cello.", "Miso knocked over the plant again.",
         "Lena's concert is on Friday.", "Porto is rainy in November."]


def _turns(start: int, count: int) -> list[Observation]:
    return [Observation(id=f"t{i}", text=LINES[i % len(LINES)], speaker="Ana",
                        session="s1", timestamp=T0 + timedelta(minutes=i))
            for i in range(start, start + count)]


class Interrupted(Exception):
    pass


@pytest.mark.parametrize("preset", OFFLINE_PRESETS)
def test_adds_after_a_failed_batch_succeed(preset: str, tmp_path: Path) -> None:
    with Memory.open(preset=preset, path=tmp_path) as mem:
        mem.add(_turns(0, 2), namespace="n")
        real_ingest = mem.extractor.ingest

        def ingest_then_fail(namespace: str, obs: Any, report: AddReport) -> None:
            real_ingest(namespace, obs, report)  # in-memory state moves on...
            raise Interrupted  # ...and the batch is rolled back

        mem.extractor.ingest = ingest_then_fail  # type: ignore[method-assign]
        with pytest.raises(Interrupted):
            mem.add(_turns(2, 2), namespace="n")
        assert [o.id for o in mem.list("n").items] == ["t0", "t1"]
        for start in (2, 4):  # the failed turns again, then new ones
            report = mem.add(_turns(start, 2), namespace="n")
            assert report.added == [f"t{start}", f"t{start + 1}"]
        nodes = {n.id for n in mem.list_nodes("n", limit=1000).items}
        for edge in mem.store.edges_of("n", sorted(nodes), direction="out"):
            assert edge.src in nodes and edge.dst in nodes
        assert mem.search("Miso the cat", namespace="n", k=3).hits
