"""``labile bench locomo``: turn-level retrieval metrics of presets on LoCoMo.

Protocol (as both papers' LoCoMo setups, REALM appendix A): one namespace per
conversation, all in one store per preset; sessions are ingested in order, one
``Memory.add`` per session, with the session date-time as each turn's timestamp and the image
caption kept as metadata. Then the questions of categories 1–4 are asked in
order (as of the last session's time), calling ``feedback`` after each one
when the preset reconsolidates. Retrieved nodes are expanded into distinct
turns through their ``sources`` and scored at each k.

The JSON summary (``--json``) has a stable, versioned schema (`SCHEMA_VERSION`)::

    {"schema_version": 1, "dataset": str,
     "presets": {NAME: {"overall": {"R@5", "N@5", "R@10", "N@10", "Hit@5", "Hit@10", "n"},
                        "by_category": {"1": {...}, ...},
                        "ingest_turns_per_s": float, "embedder_turns_per_s": float,
                        "query_ms": {"p50", "p95"}, "embed_query_ms": {"p50"},
                        "feedback_ms": {"p50", "p95"}, "question_cpu_ms": {"p50"},
                        "ingest_cpu_s": float, "store": {...}, "llm": {...}}}}

Metrics are percentages. ``query_ms`` is the search without the query's
embedding; ``feedback_ms`` (the reconsolidation after it) is kept off that
clock, and ``question_cpu_ms`` is the process CPU of search plus feedback
(the embedder's threads included). Changing the shape requires bumping the
version (adding keys does not: readers ignore the ones they do not know).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from labile import LabileError, Memory
from labile.plugin import get_logger
from labile_bench.metrics import RetrievalScorer, percentile, turns_from_ranked_sources
from labile_bench.progress import progress
from labile_bench.retention_run import retain_all, variants
from labile_io.locomo import Conversation, EvidenceCleaning, load_locomo, observations_of
from labile_retention import RetentionPolicy
from labile_text.render import turn_text

log = get_logger(__name__)
SCHEMA_VERSION: Final = 1
CATEGORIES: Final = (1, 2, 3, 4)

#: Optional hook for QA evaluation: called with (memory, conversation, question,
#: retrieval result) after each search; returns extra per-question fields.
QAHook = Callable[[Memory, Conversation, Any, Any], dict[str, Any]]


def preset_log_path(log_dir: str | Path | None, dataset: str, preset: str) -> Path | None:
    """``<log_dir>/<dataset>-<preset>.jsonl`` (its folder made), the per-question log that
    `labile bench compare` reads; ``None`` when no ``log_dir`` is given."""
    if not log_dir:
        return None
    path = Path(log_dir) / f"{dataset}-{preset}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _with_store_path(table: dict[str, Any], store_dir: Path | None, preset: str) -> bool:
    """Point a path-based store at ``store_dir/<preset>`` (a temp dir by default).

    Returns whether the preset's store is path-based.
    """
    from labile import merge_tables, preset_table
    from labile.plugin import build_registries

    registries = build_registries()
    merged = merge_tables(preset_table(registries, preset), table)
    store = merged.get("store", {})
    component = registries["store"].get(store.get("type", ""))
    if "path" in {f.name for f in attrs.fields(component.config)}:
        path = str(store_dir / preset) if store_dir else "memory://"
        table["store"] = {**table.get("store", {}), "path": path}
        return True
    return False


#: Top-level config keys that only act at query time: presets that differ only
#: in these build the same store, so one ingested snapshot serves them all.
QUERY_TIME_KEYS: Final = frozenset({"preset", "retrieval", "reconsolidate"})
#: Folder of ``--reuse-stores`` snapshots inside the store directory.
SNAPSHOT_DIR: Final = "ingested"


def ingest_key(table: dict[str, Any], conversations: Sequence[Conversation]) -> str:
    """A digest of everything that shapes an ingested store.

    It covers the resolved preset table without its query-time parts
    (`QUERY_TIME_KEYS`) and without the store's path, the labile version, and
    the conversations' turns. Two presets with the same construction (``realm``
    and its retrieval ablations) share a key. Code changes that keep the
    version are not seen: delete the snapshots after changing construction.
    """
    from importlib.metadata import PackageNotFoundError, version

    from labile import merge_tables, preset_table
    from labile.plugin import build_registries

    merged = merge_tables(preset_table(build_registries(), str(table["preset"])), table)
    shaped = {k: v for k, v in merged.items() if k not in QUERY_TIME_KEYS}
    if isinstance(shaped.get("store"), dict):
        shaped["store"] = {k: v for k, v in shaped["store"].items() if k != "path"}
    try:
        labile_version = version("labile")
    except PackageNotFoundError:  # pragma: no cover - a source checkout without metadata
        labile_version = "source"
    digest = hashlib.sha256()
    digest.update(json.dumps([shaped, labile_version], sort_keys=True, default=str).encode())
    for conv in conversations:
        for batch in observations_of(conv):
            for obs in batch:
                digest.update(f"{conv.sample_id}\0{obs.id}\0{turn_text(obs)}\n".encode())
    return digest.hexdigest()[:16]


def run_preset(  # noqa: C901, PLR0912, PLR0915
    preset: str,
    conversations: Sequence[Conversation],
    *,
    ks: Sequence[int] = (5, 10),
    store_dir: Path | None = None,
    config_overrides: dict[str, Any] | None = None,
    log_path: Path | None = None,
    qa_hook: QAHook | None = None,
    show_progress: bool | None = None,
    reuse_stores: bool = False,
    retention: RetentionPolicy | None = None,
) -> dict[str, Any]:
    """Ingest and query every conversation with ``preset``; return its summary.

    With ``retention``, the policy is applied to each conversation before its
    questions, at the time they are asked (`labile_bench.retention_run`).

    With ``reuse_stores`` (needs ``store_dir`` and a path-based store), the
    store as it stands after ingestion is kept under
    ``store_dir/ingested/<ingest_key>`` and later runs whose construction is the
    same start from a copy of it instead of ingesting again; their
    ``ingest_turns_per_s`` and ``embedder_turns_per_s`` are the ones measured
    when the snapshot was made (``ingest_reused`` says so). Questions always run on a fresh copy, so
    reconsolidation in one run never leaks into the next.
    """
    table: dict[str, Any] = {"preset": preset, **(config_overrides or {})}
    path_based = _with_store_path(table, store_dir, preset)
    snapshot: Path | None = None
    if reuse_stores:
        if store_dir is None or not path_based:
            raise LabileError(
                f"--reuse-stores needs --store-dir and a path-based store; preset {preset!r} "
                f"{'has no path-based store' if store_dir else 'was given no --store-dir'}")
        snapshot = store_dir / SNAPSHOT_DIR / ingest_key(table, conversations)
    reused = None
    if snapshot is not None and store_dir is not None:
        reused = _restore_snapshot(snapshot, store_dir / preset)
        if reused is None and (store_dir / preset).exists():
            # A store left by an earlier run would make ingestion a no-op
            # (observations already stored) and the snapshot a stale copy.
            shutil.rmtree(store_dir / preset)
    memory = Memory.open(table)
    scorer = RetrievalScorer(ks=tuple(ks))
    kmax = max(ks)
    query_ms: list[float] = []
    embed_ms: list[float] = []
    feedback_ms: list[float] = []
    question_cpu_ms: list[float] = []
    n_turns = 0
    ingest_s = ingest_cpu_s = 0.0
    batches: list[list[str]] = []
    log_fh = log_path.open("w", encoding="utf-8") if log_path else None
    try:
        for conv in progress(conversations, label=f"{preset}: ingest", enabled=show_progress):
            for batch in observations_of(conv):
                if reused is None:
                    t0, c0 = time.perf_counter(), time.process_time()
                    memory.add(batch, namespace=conv.sample_id)
                    ingest_s += time.perf_counter() - t0
                    ingest_cpu_s += time.process_time() - c0
                n_turns += len(batch)
                batches.append([turn_text(o) for o in batch])
        if reused is not None:
            ingest_s = float(reused["ingest_s"])
            ingest_cpu_s = float(reused.get("ingest_cpu_s", 0.0))
            embedder_rate = reused.get("embedder_turns_per_s")
        else:
            embedder_rate = _bare_embed_rate(memory, batches)
        if reused is None and snapshot is not None and store_dir is not None:
            memory.close()
            _save_snapshot(store_dir / preset, snapshot, {
                "ingest_s": ingest_s, "ingest_cpu_s": ingest_cpu_s, "turns": n_turns,
                "embedder_turns_per_s": embedder_rate})
            memory = Memory.open(table)
        retained = None if retention is None else retain_all(
            memory, retention, {c.sample_id: c.sessions[-1].timestamp for c in conversations})
        questions = [(c, q) for c in conversations for q in c.questions
                     if q.category in CATEGORIES and q.evidence]
        for conv, q in progress(questions, label=f"{preset}: questions", enabled=show_progress):
            as_of = conv.sessions[-1].timestamp
            c0 = time.process_time()
            result = memory.search(q.question, namespace=conv.sample_id, k=kmax, as_of=as_of)
            query_ms.append(result.total_ms - result.embed_ms)
            embed_ms.append(result.embed_ms)
            ranked = turns_from_ranked_sources([h.node.sources for h in result.hits])
            row = scorer.add(ranked, q.evidence, category=q.category)
            extra: dict[str, Any] = {}
            if qa_hook is not None:
                extra = qa_hook(memory, conv, q, result)
            elif memory.reconsolidators:
                # Not on the query's clock: the caller has its result before it gives
                # feedback; timed apart (``feedback_ms``) and in the question's CPU.
                t0 = time.perf_counter()
                memory.feedback(result, answer=None)
                feedback_ms.append((time.perf_counter() - t0) * 1000)
            question_cpu_ms.append((time.process_time() - c0) * 1000)
            if log_fh:
                log_fh.write(json.dumps({
                    "preset": preset, "sample_id": conv.sample_id, "index": q.index,
                    "category": q.category, "question": q.question, "gold": list(q.evidence),
                    "retrieved_turns": ranked[:kmax],
                    "hits": [{"id": h.node.id, "score": round(h.score, 5),
                              "sources": list(h.node.sources), "via": h.via.atom}
                             for h in result.hits],
                    "metrics": row, **extra,
                }) + "\n")
        if embedder_rate is None:  # a snapshot from before the rate was recorded
            embedder_rate = _bare_embed_rate(memory, batches)
        summary = _summarize(scorer, ks)
        if retained is not None:
            summary["retention"] = retained
        summary.update({
            "ingest_turns_per_s": round(n_turns / max(ingest_s, 1e-9), 1),
            "ingest_reused": reused is not None,
            "embedder_turns_per_s": embedder_rate,
            "turns": n_turns,
            "query_ms": {"p50": round(percentile(query_ms, 50), 3),
                         "p95": round(percentile(query_ms, 95), 3)},
            "embed_query_ms": {"p50": round(percentile(embed_ms, 50), 3)},
            "feedback_ms": {"p50": round(percentile(feedback_ms, 50), 3) if feedback_ms else 0.0,
                            "p95": round(percentile(feedback_ms, 95), 3) if feedback_ms else 0.0},
            "question_cpu_ms": {"p50": round(percentile(question_cpu_ms, 50), 3)},
            "ingest_cpu_s": round(ingest_cpu_s, 2),
            "store": memory.store.stats(),
            "llm": memory.usage.snapshot()["total"],
        })
        if qa_hook is not None and hasattr(qa_hook, "summary"):
            summary["qa"] = qa_hook.summary()
        return summary
    finally:
        if log_fh:
            log_fh.close()
        memory.close()


def _restore_snapshot(snapshot: Path, target: Path) -> dict[str, Any] | None:
    """Copy a finished snapshot onto ``target``; its ingest record, or ``None`` if there is none."""
    record = snapshot / "ingest.json"
    if not record.is_file():
        return None
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(snapshot / "store", target)
    loaded: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
    log.info("bench_store_reused", snapshot=str(snapshot), target=str(target))
    return loaded


def _save_snapshot(source: Path, snapshot: Path, record: dict[str, Any]) -> None:
    """Keep a closed store's directory as a snapshot; the record is written last,
    so a snapshot interrupted half-way is never taken for a finished one."""
    if snapshot.exists():
        shutil.rmtree(snapshot)
    shutil.copytree(source, snapshot / "store")
    (snapshot / "ingest.json").write_text(json.dumps(record), encoding="utf-8")


def _bare_embed_rate(memory: Memory, batches: list[list[str]], sample: int = 1000) -> float:
    """Turns/s of the bare embedder on the turns' dated text, one call per session.

    This is the floor of ingestion: embedding each turn once, in the same
    batches as ``add`` receives them. Measured on the first ``sample`` turns.
    """
    done = 0
    t0 = time.perf_counter()
    for batch in batches:
        if done >= sample:
            break
        memory.embedder.embed(batch)
        done += len(batch)
    return round(done / max(time.perf_counter() - t0, 1e-9), 1) if done else 0.0


def _summarize(scorer: RetrievalScorer, ks: Sequence[int]) -> dict[str, Any]:
    means = scorer.means()

    def short(entry: dict[str, float]) -> dict[str, float]:
        out: dict[str, float] = {}
        for k in ks:
            for long_name, short_name in (("recall", "R"), ("ndcg", "N"), ("hit", "Hit")):
                key = f"{long_name}@{k}"
                if key in entry:
                    out[f"{short_name}@{k}"] = round(entry[key], 1)
        out["n"] = int(entry["n"])
        return out

    return {
        "overall": short(means["overall"]),
        "by_category": {c: short(e) for c, e in means.items() if c != "overall"},
    }


def run_locomo(  # noqa: PLR0913 (keyword options of one benchmark run)
    path: str | Path,
    presets: Sequence[str],
    *,
    ks: Sequence[int] = (5, 10),
    limit: int | None = None,
    store_dir: str | Path | None = None,
    log_dir: str | Path | None = None,
    config_overrides: dict[str, Any] | None = None,
    qa_hook_factory: Callable[[str], QAHook | None] | None = None,
    show_progress: bool | None = None,
    reuse_stores: bool = False,
    retention: RetentionPolicy | None = None,
) -> tuple[dict[str, Any], EvidenceCleaning]:
    """Run every preset on the LoCoMo file at ``path``; return the JSON summary.

    ``reuse_stores`` (with ``store_dir``) ingests each distinct construction
    once and starts later runs from a copy (see `run_preset`). With
    ``retention``, each preset runs a second time as ``PRESET+retain``.
    """
    conversations, cleaning = load_locomo(path, limit=limit)
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "dataset": str(path),
                           "conversations": len(conversations), "ks": list(ks), "presets": {}}
    with tempfile.TemporaryDirectory(prefix="labile-bench-") as tmp:
        base = Path(store_dir) if store_dir else Path(tmp)
        for name, preset, policy in variants(presets, retention):
            log_path = preset_log_path(log_dir, "locomo", name)
            hook = qa_hook_factory(preset) if qa_hook_factory else None
            log.info("bench_preset_start", preset=name)
            # A retained run needs a store of its own unless each run starts from a
            # copy of the ingested snapshot (--reuse-stores), which it can share.
            own = policy is not None and not reuse_stores
            out["presets"][name] = run_preset(
                preset, conversations, ks=ks, store_dir=base / "retain" if own else base,
                log_path=log_path, config_overrides=config_overrides, qa_hook=hook,
                show_progress=show_progress, reuse_stores=reuse_stores, retention=policy,
            )
    return out, cleaning


def format_table(summary: dict[str, Any], ks: Sequence[int]) -> str:
    """A side-by-side text table of the presets in ``summary``."""
    presets = summary["presets"]
    names = list(presets)
    metrics = [f"{m}@{k}" for k in ks for m in ("R", "N")] + [f"Hit@{min(ks)}"]
    groups = ["overall", *sorted({c for p in presets.values() for c in p["by_category"]})]
    width = max(12, *(len(n) + 2 for n in names))
    lines = []
    header = f"{'group':<10}{'metric':<9}" + "".join(f"{n:>{width}}" for n in names)
    lines.append(header)
    lines.append("-" * len(header))
    for group in groups:
        for metric in metrics:
            cells = []
            for name in names:
                entry = (presets[name]["overall"] if group == "overall"
                         else presets[name]["by_category"].get(group, {}))
                value = entry.get(metric)
                cells.append(f"{value:>{width}.1f}" if value is not None else f"{'-':>{width}}")
            label = group if metric == metrics[0] else ""
            lines.append(f"{label:<10}{metric:<9}" + "".join(cells))
        n_cells = "".join(
            f"{(presets[n]['overall'] if group == 'overall' else presets[n]['by_category'].get(group, {})).get('n', 0):>{width}}"  # noqa: E501
            for n in names
        )
        lines.append(f"{'':<10}{'n':<9}" + n_cells)
    lines.append("")
    for metric, fmt in (("ingest_turns_per_s", "{:.1f}"), ("embedder_turns_per_s", "{:.1f}")):
        lines.append(f"{metric:<19}" + "".join(
            f"{fmt.format(presets[n].get(metric, 0)):>{width}}" for n in names))
    lines.append(f"{'query_ms p50':<19}" + "".join(
        f"{presets[n]['query_ms']['p50']:>{width}.2f}" for n in names))
    lines.append(f"{'query_ms p95':<19}" + "".join(
        f"{presets[n]['query_ms']['p95']:>{width}.2f}" for n in names))
    lines.append(f"{'embed_query p50':<19}" + "".join(
        f"{presets[n]['embed_query_ms']['p50']:>{width}.2f}" for n in names))
    for label, key in (("feedback_ms p50", "feedback_ms"), ("question_cpu p50", "question_cpu_ms")):
        lines.append(f"{label:<19}" + "".join(
            f"{presets[n].get(key, {}).get('p50', 0.0):>{width}.2f}" for n in names))
    return "\n".join(lines)
