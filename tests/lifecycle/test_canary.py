"""Forget and purge leave no byte of the forgotten text on disk, for every bundled preset.

Each test writes turns holding a random canary, checks the canary is on disk
(the scan can see it), forgets or purges with erasure, then scans every byte
of every file under the store directory: the canary appears nowhere, and the
other namespace's search results are identical before and after.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lifecycle_helpers import CHAT, canary, canary_turns, chat, files_holding

from labile import Memory
from labile.plugin import build_registries

OFFLINE_PRESETS = sorted(
    c.name for c in build_registries()["preset"] if not c.name.endswith("-llm")
)
QUERIES = ["Where is the pottery studio?", "Who went hiking with Tom?", "moving to Porto"]


def _ranked(memory: Memory, namespace: str) -> list[list[str]]:
    return [[h.node.id for h in memory.search(q, namespace=namespace, k=5).hits]
            for q in QUERIES]


def _found(memory: Memory, namespace: str) -> list[set[str]]:
    # The scripted model describes every other turn alike, so the full-text side of
    # the fusion nearly ties, and LanceDB's BM25 statistics span namespaces: the
    # order within the top 5 can move when another namespace shrinks (a known
    # limit of the store, see docs/store.md). What is found must not.
    return [{h.node.id for h in memory.search(q, namespace=namespace, k=5).hits}
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


#: Purging is one namespace-wide removal whatever built the namespace: the default
#: run purges one preset per bundle, ``-m slow`` every preset.
PURGE_DEFAULT = {"bm25", "realm", "allmem"}
CASES = [pytest.param(p, how, marks=[pytest.mark.slow] if how == "purge" and
                      p not in PURGE_DEFAULT else [], id=f"{how}-{p}")
         for how in ("forget", "purge") for p in OFFLINE_PRESETS]


@pytest.mark.parametrize(("preset", "how"), CASES)
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


# -- the LLM presets, with a scripted model whose replies quote the canary ----------------

EXTRACT = r"Turn the NEW TURN below into memory units"
REALM_REPLIES = [
    (r"A new memory unit arrived", {"operation": "add", "related": []}),
    (r"Link a memory node to related nodes", {"edges": []}),
    (r"Plan where to start searching", {"plans": [{
        "mode": "hybrid_match", "query": "pottery", "keywords": ["pottery"],
        "allowed_node_types": ["event", "entity"], "time_range": None}]}),
    (r"You control a search over a memory graph", {"is_enough": True, "nodes_to_expand": []}),
    (r"Choose how to explore the memory graph", {"actions": []}),
    (r"Audit a piece of a memory graph", {
        "topic": "code", "gold_supporting_node_ids": [1], "supporting_associated_node_ids": [],
        "misleading_node_ids": [], "unrelated_node_ids": [], "operations": []}),
]


def _scripted(preset: str, secret: str) -> Any:
    from labile_llm import ScriptedLLM

    def units(description: str) -> str:
        return json.dumps({"units": [
            {"type": "event", "name": description[:40], "description": description,
             "time": "none"},
            {"type": "entity", "name": "Lisbon", "description": f"a city; {description}",
             "time": "none"}], "summary": description})

    if preset == "realm-llm":
        rules = [(rf"(?s){EXTRACT}.*NEW TURN.*{secret}", units(f"the locker code {secret}")),
                 (EXTRACT, units("people talk about their week")),
                 *((pattern, json.dumps(value)) for pattern, value in REALM_REPLIES)]
    else:
        quoting = {"summary": f"a locker code {secret}", "keywords": [secret, "locker", "code"]}
        rules = [(rf"(?s)search descriptor.*{secret}", json.dumps(quoting)),
                 ("search descriptor", json.dumps(
                     {"summary": "a message", "keywords": ["one", "two", "three"]})),
                 ("three kinds of damage", json.dumps({"proposals": []}))]
    return ScriptedLLM(rules=rules)


@pytest.mark.parametrize("preset", ["realm-llm", "allmem-llm"])
def test_canary_is_gone_with_llm_pipelines(preset: str, tmp_path: Path) -> None:
    secret = canary()
    path = tmp_path / "store"
    with Memory.open(preset=preset, path=path, llm=_scripted(preset, secret)) as memory:
        ids = _fill(memory, secret)
        before = _found(memory, "keep")
        memory.forget("user", ids, erase=True)
        assert _found(memory, "keep") == before
    hits, files, size = files_holding(path, secret)
    assert hits == [], f"{preset}: canary left in {hits} ({files} files, {size} bytes scanned)"
