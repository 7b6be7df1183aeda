"""``labile demo``: the README's main job, offline and in seconds.

Ingests the sample conversation that ships with labile into a temporary
store with the best preset available, asks a handful of questions, and prints
the top memories of each with their source turns, dates, scores and timing,
then the store's statistics.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from importlib import resources
from typing import Any

from labile import Memory
from labile.plugin import Node, Observation

NAMESPACE = "demo"


def load_demo() -> dict[str, Any]:
    """The bundled sample conversation."""
    path = resources.files("labile_bench").joinpath("data/demo_conversation.json")
    text = path.read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def demo_observations(data: dict[str, Any]) -> list[list[Observation]]:
    """One list of observations per session; ids are ``S<session>:<turn>``."""
    sessions = []
    for s_idx, session in enumerate(data["sessions"], 1):
        ts = datetime.fromisoformat(session["date"])
        batch = []
        for t_idx, turn in enumerate(session["turns"], 1):
            speaker, text, *caption = turn
            meta = {"caption": caption[0]} if caption else {}
            batch.append(Observation(id=f"S{s_idx}:{t_idx}", text=text, speaker=speaker,
                                     timestamp=ts, session=str(s_idx), metadata=meta))
        sessions.append(batch)
    return sessions


#: Why the demo runs MiniLM, and how to try the stronger embedder (docs/embedders.md).
EMBEDDER_NOTE = (
    "embedder: MiniLM, the default. nomic-embed-text-v1.5 (`[embedder] type = \"gguf\"`, "
    "docs/embedders.md) is opt-in: it lifts dense search a lot on LoCoMo but the default "
    "preset only slightly, and ingests several times slower")


def node_dates(node: Node) -> str:
    """The days a node is about, as the hits label them: one day, or "first to last"
    (a turn that tells of another time spans from that time to when it was told)."""
    if node.time_start is None:
        return "-"
    start = f"{node.time_start:%Y-%m-%d}"
    end = f"{node.time_end:%Y-%m-%d}" if node.time_end is not None else start
    return start if end == start else f"{start} to {end}"


def run_demo(*, preset: str | None = None, write: Callable[[str], None], k: int = 3) -> None:
    """Run the demo, writing human-readable lines through ``write``."""
    data = load_demo()
    with tempfile.TemporaryDirectory(prefix="labile-demo-") as tmp:
        t0 = time.perf_counter()
        with Memory.open(preset=preset, path=tmp) as memory:
            write(f"labile demo: preset {memory.config.preset!r}, embedder "
                  f"{memory.embedder.name!r}, store {memory.config.store.type!r} in {tmp}")
            if memory.config.embedder.type != "gguf":
                write(EMBEDDER_NOTE)
            texts = {}
            for batch in demo_observations(data):
                memory.add(batch, namespace=NAMESPACE)
                texts.update({o.id: (o, o.text) for o in batch})
            write(f"ingested {len(texts)} turns in {len(data['sessions'])} sessions "
                  f"({(time.perf_counter() - t0) * 1000:.0f} ms, model load included)\n")
            last = max(o.timestamp for o, _ in texts.values())
            for question in data["questions"]:
                result = memory.search(question, namespace=NAMESPACE, k=k, as_of=last)
                write(f"Q: {question}   ({result.total_ms:.1f} ms)")
                for rank, hit in enumerate(result.hits, 1):
                    node = hit.node
                    when = node_dates(node)
                    write(f"  {rank}. score {hit.score:.3f}  [{node.kind}, {when}]  "
                          f"{(node.description or node.content)[:110]}")
                    for source in node.sources[:3]:
                        obs, text = texts.get(source, (None, ""))
                        if obs is not None:
                            write(f"       ← {source} {obs.timestamp:%Y-%m-%d} "
                                  f"{obs.speaker}: {text[:90]}")
                if memory.reconsolidators:
                    memory.feedback(result, answer=None)
                write("")
            stats = memory.stats(NAMESPACE)["store"]
            write("store: " + ", ".join(f"{k} {v}" for k, v in stats.items()
                                        if isinstance(v, int | float | str)))
