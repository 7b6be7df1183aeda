"""Speed A/B of two checkouts on LoCoMo's first dev conversation (docs/benchmarks.md, issue #17).

Run each mode once per checkout, alternating them, with ``PYTHONPATH`` pointing at the
checkout measured (this file imports only what both have):

    python tools/speed_ab.py questions PRESET SNAPSHOT WORKDIR OUT.json
    python tools/speed_ab.py ingest PRESET WORKDIR OUT.json
    python tools/speed_ab.py summary DIR        # DIR/<preset>-<label>-<run>.json

``questions`` copies an ingested store (a ``--reuse-stores`` snapshot directory of
``labile bench locomo --store-dir``) and runs the bench's question loop: search, then
feedback when the preset reconsolidates. It records per question the search without the
query's embedding, the search's CPU in the calling thread minus the embedder's, each stage
of the trace, the feedback's wall and CPU time, and the hits (ids and scores), so that two
checkouts can be checked for identical results. ``ingest`` adds the conversation as the bench
does, then times, in the same process, the bare embedder on the turns' dated text and the
embedder alone on exactly the texts the ingest embedded, in the same calls.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

DATA = "/work/shared/data/locomo/locomo_dev.json"


def _conversation() -> Any:
    from labile_bench.locomo import load_locomo

    conversations, _ = load_locomo(DATA, limit=1)
    return conversations[0]


def _memory(preset: str, work: Path) -> Any:
    from labile import Memory
    from labile_bench.locomo_run import _with_store_path

    table: dict[str, Any] = {"preset": preset}
    _with_store_path(table, work, preset)
    return Memory.open(table)


def questions(preset: str, snapshot: Path, work: Path, out: Path) -> None:
    """The question loop on a copy of ``snapshot``; per-question figures to ``out``."""
    from labile_bench.locomo_run import CATEGORIES

    conv = _conversation()
    qs = [q for q in conv.questions if q.category in CATEGORIES and q.evidence]
    as_of = conv.sessions[-1].timestamp
    target = work / preset
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(snapshot / "store", target)
    memory = _memory(preset, work)
    embedder, embed = memory.embedder, memory.embedder.embed
    in_embed = [0.0]

    def timed(texts: Any) -> Any:
        t = time.thread_time()
        vectors = embed(texts)
        in_embed[0] += time.thread_time() - t
        return vectors

    embedder.embed = timed
    memory.search("warm up", namespace=conv.sample_id, k=10, as_of=as_of)
    rec: dict[str, Any] = defaultdict(list)
    c0, t0 = time.process_time(), time.perf_counter()
    for q in qs:
        c1, tt, in_embed[0] = time.process_time(), time.thread_time(), 0.0
        result = memory.search(q.question, namespace=conv.sample_id, k=10, as_of=as_of)
        rec["search_cpu_noembed_ms"].append((time.thread_time() - tt - in_embed[0]) * 1000)
        rec["query_ms"].append(result.total_ms - result.embed_ms)
        rec["embed_ms"].append(result.embed_ms)
        for step in result.trace:
            rec["stage:" + step.stage].append(step.ms)
        rec["hits"].append([[h.node.id, round(h.score, 9)] for h in result.hits])
        if memory.reconsolidators:
            t1, c2 = time.perf_counter(), time.process_time()
            memory.feedback(result, answer=None)
            rec["feedback_ms"].append((time.perf_counter() - t1) * 1000)
            rec["feedback_cpu_ms"].append((time.process_time() - c2) * 1000)
        rec["question_cpu_ms"].append((time.process_time() - c1) * 1000)
    t1 = time.perf_counter()
    memory.close()
    rec["close_ms"] = (time.perf_counter() - t1) * 1000
    rec["loop_wall_s"], rec["loop_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    out.write_text(json.dumps(rec), encoding="utf-8")


def ingest(preset: str, work: Path, out: Path) -> None:
    """Ingest the conversation, then the embedder alone on the same texts; figures to ``out``."""
    from labile_bench.locomo_run import observations_of
    from labile_text.render import turn_text

    conv = _conversation()
    shutil.rmtree(work / preset, ignore_errors=True)
    memory = _memory(preset, work)
    embed = memory.embedder.embed
    calls: list[list[str]] = []
    spent = [0.0]

    def recorded(texts: Any) -> Any:
        c = time.process_time()
        vectors = embed(texts)
        spent[0] += time.process_time() - c
        calls.append(list(texts))
        return vectors

    memory.embedder.embed = recorded
    batches = observations_of(conv)
    n = sum(map(len, batches))
    t0, c0 = time.perf_counter(), time.process_time()
    for batch in batches:
        memory.add(batch, namespace=conv.sample_id)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    memory.embedder.embed = embed
    t1 = time.perf_counter()
    for batch in batches:
        embed([turn_text(o) for o in batch])
    bare = time.perf_counter() - t1
    t2 = time.perf_counter()
    for texts in calls:
        embed(texts)
    own = time.perf_counter() - t2
    memory.close()
    rec = {"turns": n, "ingest_turns_per_s": n / wall, "ingest_cpu_s": cpu,
           "embed_in_ingest_cpu_s": spent[0], "embedded_texts": sum(map(len, calls)),
           "bare_turns_per_s": n / bare, "own_texts_turns_per_s": n / own}
    out.write_text(json.dumps(rec), encoding="utf-8")
    sys.stdout.write(json.dumps({k: round(v, 2) for k, v in rec.items()}) + "\n")


def _pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, round(q / 100 * (len(v) - 1)))] if v else float("nan")


def summary(directory: Path) -> None:
    """p50 / p95 per preset and label over the ``questions`` files, and whether hits match."""
    agg: dict[tuple[str, str], dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for f in sorted(directory.glob("*.json")):
        preset, label, _run = f.stem.rsplit("-", 2)
        rec = json.loads(f.read_text(encoding="utf-8"))
        a = agg[(preset, label)]
        for key, value in rec.items():
            if key == "hits":
                a["hits"].append(value)
            elif isinstance(value, list):
                a[key] += value
            elif isinstance(value, int | float):
                a[key].append(value)
    lines = []
    for (preset, label), a in sorted(agg.items()):
        cells = [f"{k} p50 {_pct(a[k], 50):.2f} p95 {_pct(a[k], 95):.2f}" for k in sorted(a)
                 if k != "hits" and a[k] and k not in ("loop_wall_s", "loop_cpu_s", "close_ms")]
        cells += [f"{k} {statistics.mean(a[k]):.2f}" for k in ("loop_wall_s", "loop_cpu_s")]
        lines.append(f"{preset} {label}: " + " | ".join(cells))
    labels = sorted({label for _, label in agg})
    for preset in sorted({p for p, _ in agg}):
        runs = [agg[(preset, label)]["hits"] for label in labels if (preset, label) in agg]
        if len(runs) == 2 and runs[0] and runs[1]:
            same = sum(x == y for x, y in zip(runs[0][0], runs[1][0], strict=True))
            lines.append(f"{preset}: identical hit lists {labels[0]} vs {labels[1]}: "
                         f"{same}/{len(runs[0][0])}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "questions":
        questions(rest[0], Path(rest[1]), Path(rest[2]), Path(rest[3]))
    elif mode == "ingest":
        ingest(rest[0], Path(rest[1]), Path(rest[2]))
    else:
        summary(Path(rest[0]))
