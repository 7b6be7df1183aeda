"""Forgetting forgets short secrets too: a PIN, an age, an acronym, a short name, a phrase.

A turn such as "Bo's PIN is 913, he is HIV+ and 34." holds nothing a
four-letter-word filter sees. After it is forgotten, no field of any node or
edge (content, description, keywords, attrs, edge descriptions and attrs,
episode topics and highlights) may hold one of its tokens as a word, for every
bundled offline preset; and, with erasure, no data file may hold its bytes.
The turn is added in the same process as the rest, or by another process
than the turns before it (derived text must not depend on who wrote what).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from lifecycle_helpers import CHAT, T0, files_holding

from labile import Memory, Observation
from labile.plugin import build_registries

OFFLINE_PRESETS = sorted(
    c.name for c in build_registries()["preset"] if not c.name.endswith("-llm")
)
#: One preset per bundle that derives text, for the slower on-disk, two-process runs.
ON_DISK = ["realm", "allmem", "labile", "context", "hybrid"]

SECRET = ("Maria", "Bo's PIN is 913, he is HIV+ and 34. "
                   "Can you hide the mauve shed key for Bo?")
REPLY = ("Tom", "Sure, I will keep it safe for him.")
#: Words of the secret turn no other turn holds, and its phrases.
CANARY_WORDS = ["bo", "pin", "913", "hiv", "34", "mauve", "shed", "hide"]
CANARY_PHRASES = ["mauve shed", "HIV+", "PIN is 913"]
HASHING = {"embedder": {"type": "hashing"}}


def _turns() -> list[Observation]:
    """Three sessions; the secret turn in the middle of the second, a reply after it."""
    lines = [*CHAT[:6], SECRET, REPLY, *CHAT[6:]]
    out = []
    for i, (speaker, text) in enumerate(lines):
        session = str(i // 4 + 1)
        out.append(Observation(id=f"t{i}", text=text, speaker=speaker, session=session,
                               timestamp=T0 + timedelta(days=7 * (i // 4), minutes=2 * i)))
    return out


SECRET_ID = "t6"


def _attr_text(value: Any) -> str:
    """The words an attrs value holds: its strings and keys, and its integers (an age
    stored as a number); floats are measurements (timings, scores), not quotes."""
    if isinstance(value, dict):
        return " ".join(f"{k} {_attr_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return " ".join(_attr_text(v) for v in value)
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ""


def _fields(memory: Memory, namespace: str) -> list[tuple[str, str]]:
    """(where, text) for every text-bearing field of every node and edge of ``namespace``."""
    out = []
    for node in memory.store.iter_nodes(namespace):
        out += [(f"node {node.id} content", node.content),
                (f"node {node.id} description", node.description),
                (f"node {node.id} keywords", " ".join(node.keywords)),
                (f"node {node.id} attrs", _attr_text(node.attrs))]
    for edge in memory.store.iter_edges(namespace):
        out += [(f"edge {edge.id} description", edge.description),
                (f"edge {edge.id} attrs", _attr_text(edge.attrs))]
    return out


def _leaks(memory: Memory, namespace: str) -> list[str]:
    found = []
    for where, text in _fields(memory, namespace):
        words = set(re.findall(r"\w+", text.casefold()))
        found += [f"{where}: {w!r}" for w in CANARY_WORDS if w in words]
        found += [f"{where}: {p!r}" for p in CANARY_PHRASES if p.casefold() in text.casefold()]
    return found


def _check_control(turns: list[Observation]) -> None:
    others = " ".join(o.text for o in turns if o.id != SECRET_ID).casefold()
    assert not set(CANARY_WORDS) & set(re.findall(r"\w+", others)), "test turns must not share"


def _consolidate(memory: Memory) -> None:
    if memory.consolidators:
        memory.consolidate(namespace="u")


@pytest.mark.parametrize("preset", OFFLINE_PRESETS)
def test_no_field_keeps_a_short_secret_after_forget(preset: str) -> None:
    turns = _turns()
    _check_control(turns)
    with Memory.open({"preset": preset, "store": {"type": "memory"}, **HASHING}) as memory:
        memory.add(turns[:5], namespace="u")
        memory.add(turns[5:], namespace="u")
        _consolidate(memory)
        assert _leaks(memory, "u"), "positive control: the secret is in the graph"
        memory.forget("u", [SECRET_ID])
        assert _leaks(memory, "u") == []
        assert memory.list_nodes("u").total  # the rest stays
        memory.add([Observation(id="late", text="Ines liked the new bowls.", speaker="Maria",
                                session="2", timestamp=T0 + timedelta(days=7, minutes=30))],
                   namespace="u")
        assert _leaks(memory, "u") == []  # later writes do not bring it back


_CHILD = """
import json, sys
from datetime import datetime
from labile import Memory, Observation
rows = json.loads(sys.stdin.read())
obs = [Observation(id=r["id"], text=r["text"], speaker=r["speaker"], session=r["session"],
                   timestamp=datetime.fromisoformat(r["timestamp"])) for r in rows]
with Memory.open(path=sys.argv[1]) as memory:
    memory.add(obs, namespace="u")
"""


def _add_in_child(path: Path, observations: list[Observation]) -> None:
    rows = [{"id": o.id, "text": o.text, "speaker": o.speaker, "session": o.session,
             "timestamp": o.timestamp.isoformat()} for o in observations]
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path)], input=json.dumps(rows),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("erase", [True, False], ids=["erase", "keep-versions"])
@pytest.mark.parametrize("preset", ON_DISK)
def test_a_secret_added_by_another_process_is_forgotten_everywhere(
    preset: str, erase: bool, tmp_path: Path
) -> None:
    turns = _turns()
    path = tmp_path / "store"
    config: dict[str, Any] = {"preset": preset, **HASHING}
    with Memory.open(config, path=path) as memory:
        memory.add(turns[:5], namespace="u")
    _add_in_child(path, turns[5:])  # the secret, the reply and what follows
    with Memory.open(path=path) as memory:
        _consolidate(memory)
        assert _leaks(memory, "u"), "positive control: the secret is in the graph"
        assert files_holding(path, "mauve shed")[0], "positive control: the scan sees it"
        memory.forget("u", [SECRET_ID], erase=erase)
        assert _leaks(memory, "u") == []
    with Memory.open(path=path) as memory:
        assert _leaks(memory, "u") == []
        assert memory.list_nodes("u").total
    if erase:
        for phrase in CANARY_PHRASES:
            hits, files, size = files_holding(path, phrase)
            assert hits == [], f"{phrase!r} left in {hits} ({files} files, {size} bytes)"


@pytest.mark.parametrize("preset", ["allmem-llm"])
def test_a_model_that_quotes_the_secret_leaves_nothing_after_forget(preset: str) -> None:
    """The scripted model of the canary test writes the PIN into the summary and keywords
    of the secret turn's unit; forgetting the turn removes every one of them. (``realm-llm``
    is covered by the random-canary test of `test_canary.py` only: its scripted extraction
    does not answer these turns.)"""
    from test_canary import _scripted

    turns = _turns()
    with Memory.open({"preset": preset, "store": {"type": "memory"}, **HASHING},
                     llm=_scripted(preset, "913")) as memory:
        memory.add(turns[:5], namespace="u")
        memory.add(turns[5:], namespace="u")
        _consolidate(memory)
        assert _leaks(memory, "u"), "positive control: the secret is in the graph"
        memory.forget("u", [SECRET_ID])
        assert _leaks(memory, "u") == []
