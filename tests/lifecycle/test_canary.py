"""Forget and purge leave no byte of the forgotten text on disk, for every bundled preset.

Each test writes turns holding a random canary, checks the canary is on disk
(the scan can see it), forgets or purges with erasure, then scans every byte
of every file under the store directory: the canary appears nowhere, and the
other namespace's search results are identical before and after.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lifecycle_helpers import CHAT, canary, canary_turns, chat, files_holding

from labile import Memory, build_registries

OFFLINE_PRESETS = sorted(
    c.name for c in build_registries()["preset"] if not c.name.endswith("-llm")
)
QUERIES = ["Where is the pottery studio?", "Who went hiking with Tom?", "moving to Porto"]


def _ranked(memory: Memory, namespace: str) -> list[list[str]]:
    return [[h.node.id for h in memory.search(q, namespace=namespace, k=5).hits]
            for q in QUERIES]


def _fill(memory: Memory, secret: str) -> list[str]:
    memory.add(chat("k"), namespace="keep")
    user = chat("u", turns=CHAT[:5] + canary_turns(secret) + CHAT[5:], per_session=4)
    memory.add(user[:6], namespace="user")
    memory.add(user[6:], namespace="user")
    if memory.consolidators:
        memory.consolidate(namespace="user")
    result = memory.search(f"locker code {secret}", namespace="user", k=5)
    memory.feedback(result, answer=f"The code is {secret}.", useful=True)
    return [o.id for o in user if secret in o.text]


@pytest.mark.parametrize("preset", OFFLINE_PRESETS)
@pytest.mark.parametrize("how", ["forget", "purge"])
def test_canary_is_gone_from_every_file(preset: str, how: str, tmp_path: Path) -> None:
    secret = canary()
    path = tmp_path / "store"
    with Memory.open(preset=preset, path=path) as memory:
        ids = _fill(memory, secret)
        before = _ranked(memory, "keep")
        assert files_holding(path, secret)[0], "positive control: the scan must see the canary"
        if how == "forget":
            counts: Any = memory.forget("user", ids, erase=True)
            assert counts["observations"] == len(ids)
            left = [s for n in memory.list_nodes("user", limit=10_000).items for s in n.sources]
            assert not set(ids) & set(left)
            assert memory.search("pottery", namespace="user", k=3).hits  # the rest stays
            memory.add(chat("late", start=50, turns=CHAT[:2]), namespace="user")  # still writable
        else:
            memory.purge("user", erase=True)
            assert memory.list("user").total == 0
        assert _ranked(memory, "keep") == before
    hits, files, size = files_holding(path, secret)
    assert hits == [], f"{preset}: canary left in {hits} ({files} files, {size} bytes scanned)"
    with Memory.open(preset=preset, path=path) as reopened:
        assert _ranked(reopened, "keep") == before
