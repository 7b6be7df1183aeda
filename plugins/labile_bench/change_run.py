"""``labile bench change``: does a memory answer with what is true now, or with what was?

Protocol: each conversation goes into its own namespace (its id) of one store
per preset, one ``Memory.add`` per session, every turn with its own
timestamp. Then each question is searched in its conversation's namespace
with ``as_of`` = the time it is asked, and ``feedback`` follows when the preset
reconsolidates (as in ``bench locomo``). Retrieved nodes are expanded into
distinct turns through their ``sources`` and scored (`labile_bench.change_metrics`).

The JSON summary (``--json``) has a versioned schema (`SCHEMA_VERSION`)::

    {"schema_version": 1, "dataset": str, "conversations": int, "questions": int,
     "ks": [1, 5],
     "presets": {NAME: {"overall": {"R@1", "R@5", "N@5", "Hit@1", "Hit@5",
                                    "stale_first@5", "n", "n_stale"},
                        "by_kind": {"current": {...}, "past": {...}, ...},
                        "ingest_turns_per_s": float, "turns": int, "future_seen": int,
                        "replaced_nodes": int, "llm_calls_ingest": int,
                        "query_ms": {"p50", "p95"}}}}

A ``PRESET+retain`` run (``--retain``) adds ``"retention": {"policy", "hidden"}``.
Metrics are percentages; ``stale_first@5`` is defined on current questions
only (``n_stale`` of them). ``replaced_nodes`` counts the stored nodes another
replaced by the end of ingestion (``superseded_by`` set: the record of change),
``llm_calls_ingest`` the LLM calls ingestion made (0 offline). ``future_seen``
counts the questions whose top ``k``
held a turn said after they were asked: a memory searched ``as_of`` a time
should not know what comes later. The per-question log (``--log-dir``) has the rows
of ``bench locomo`` (``sample_id`` = conversation, ``index`` = question id,
``category`` = kind), so ``labile bench compare`` reads it, plus ``asked_at``,
``stale``, ``stale_first`` and ``future`` (the top-``k`` turns said after the question).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from labile import Memory
from labile.plugin import Observation, get_logger
from labile_bench.change import DEFAULT_KS, KINDS, ChangeConversation, load_change
from labile_bench.change_metrics import ChangeScorer
from labile_bench.locomo_run import _with_store_path, preset_log_path
from labile_bench.metrics import percentile, turns_from_ranked_sources
from labile_bench.progress import progress
from labile_bench.retention_run import retain_all, variants
from labile_io.speakers import SpeakerNames
from labile_retention import RetentionPolicy

log = get_logger(__name__)
SCHEMA_VERSION: Final = 1


def observations_of(conv: ChangeConversation) -> list[list[Observation]]:
    """The conversation's turns as observations, one list per session, in order, their
    speakers named as ``labile add`` names them (a ``user`` who says "I'm Marcus" is
    Marcus from then on: `labile_io.speakers`)."""
    names = SpeakerNames()
    return [names.apply([Observation(id=t.id, text=t.text, speaker=t.speaker,
                                     timestamp=t.timestamp, session=str(t.session))
                         for t in session])
            for session in conv.sessions]


def said_after(turns: Sequence[str], said_at: Mapping[str, datetime],
               asked_at: datetime) -> list[str]:
    """The ``turns`` said after ``asked_at``, in order (ids not in ``said_at`` are not)."""
    return [t for t in turns if t in said_at and said_at[t] > asked_at]


def run_preset(
    preset: str,
    conversations: Sequence[ChangeConversation],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    store_dir: Path | None = None,
    config_overrides: dict[str, Any] | None = None,
    log_path: Path | None = None,
    show_progress: bool | None = None,
    retention: RetentionPolicy | None = None,
) -> dict[str, Any]:
    """Ingest every conversation with ``preset``, ask its questions; return the summary.

    With ``retention``, once every conversation is ingested the policy is applied
    to each, at the time of its last question (`labile_bench.retention_run`)."""
    table: dict[str, Any] = {"preset": preset, **(config_overrides or {})}
    _with_store_path(table, store_dir, preset)
    scorer = ChangeScorer(ks=ks)
    kmax = max(ks)
    query_ms: list[float] = []
    ingest_s = 0.0
    n_turns = future_seen = 0
    said_at = {c.id: {t.id: t.timestamp for t in c.turns} for c in conversations}
    with ExitStack() as stack:
        memory = stack.enter_context(Memory.open(table))
        log_fh = stack.enter_context(log_path.open("w", encoding="utf-8")) if log_path else None
        for conv in progress(conversations, label=f"{preset}: ingest", enabled=show_progress):
            for batch in observations_of(conv):
                t0 = time.perf_counter()
                memory.add(batch, namespace=conv.id)
                ingest_s += time.perf_counter() - t0
                n_turns += len(batch)
        replaced = sum(1 for conv in conversations for n in memory.store.iter_nodes(conv.id)
                       if n.superseded_by)
        llm_calls = memory.usage.totals().calls
        retained = None if retention is None else retain_all(memory, retention, {
            c.id: max(q.asked_at for q in c.questions) for c in conversations if c.questions})
        questions = [(c, q) for c in conversations for q in c.questions]
        for conv, q in progress(questions, label=f"{preset}: questions", enabled=show_progress):
            result = memory.search(q.question, namespace=conv.id, k=kmax, as_of=q.asked_at)
            query_ms.append(result.total_ms - result.embed_ms)
            ranked = turns_from_ranked_sources([h.node.sources for h in result.hits])
            row = scorer.add(ranked, q.gold, q.stale, kind=q.kind)
            future = said_after(ranked[:kmax], said_at[conv.id], q.asked_at)
            future_seen += bool(future)
            if memory.reconsolidators:
                memory.feedback(result, answer=None)
            if log_fh:
                stale_key = f"stale_first@{scorer.k_stale}"
                log_fh.write(json.dumps({
                    "preset": preset, "sample_id": conv.id, "index": q.id,
                    "category": q.kind, "question": q.question,
                    "asked_at": q.asked_at.isoformat(), "gold": list(q.gold),
                    "stale": list(q.stale), "retrieved_turns": ranked[:kmax],
                    "hits": [{"id": h.node.id, "score": round(h.score, 5),
                              "sources": list(h.node.sources), "via": h.via.atom}
                             for h in result.hits],
                    # stale-first stays out of "metrics": compare needs the same keys
                    # on every row, and it is defined on current questions only
                    "metrics": {k: v for k, v in row.items() if k != stale_key},
                    "stale_first": row.get(stale_key), "future": future,
                }) + "\n")
    summary = _summarize(scorer, ks)
    if retained is not None:
        summary["retention"] = retained
    summary.update({
        "ingest_turns_per_s": round(n_turns / max(ingest_s, 1e-9), 1),
        "turns": n_turns,
        "future_seen": future_seen,
        "replaced_nodes": replaced,
        "llm_calls_ingest": llm_calls,
        "query_ms": {"p50": round(percentile(query_ms, 50), 3) if query_ms else 0.0,
                     "p95": round(percentile(query_ms, 95), 3) if query_ms else 0.0},
    })
    return summary


def _summarize(scorer: ChangeScorer, ks: Sequence[int]) -> dict[str, Any]:
    means = scorer.means()
    names = {"recall": "R", "ndcg": "N", "hit": "Hit", "stale_first": "stale_first"}

    def short(entry: dict[str, float]) -> dict[str, float]:
        out: dict[str, float] = {}
        for key, value in entry.items():
            if key in ("n", "n_stale"):
                out[key] = int(value)
            else:
                metric, k = key.split("@")
                out[f"{names[metric]}@{k}"] = round(value, 1)
        return out

    return {"overall": short(means["overall"]),
            "by_kind": {kind: short(means[kind]) for kind in KINDS if kind in means}}


def run_change(
    presets: Sequence[str],
    conversations: Sequence[ChangeConversation] | None = None,
    *,
    dataset: str = "labile_bench/data/change",
    ks: Sequence[int] = DEFAULT_KS,
    store_dir: str | Path | None = None,
    log_dir: str | Path | None = None,
    config_overrides: dict[str, Any] | None = None,
    show_progress: bool | None = None,
    retention: RetentionPolicy | None = None,
) -> dict[str, Any]:
    """Run every preset on ``conversations`` (the shipped set by default); ``dataset``
    names them in the summary. With ``retention``, each preset runs a second time
    as ``PRESET+retain`` (`labile_bench.retention_run`)."""
    if conversations is None:
        conversations = load_change()
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "dataset": dataset,
        "conversations": len(conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "ks": sorted(set(ks)), "presets": {}}
    with tempfile.TemporaryDirectory(prefix="labile-bench-change-") as tmp:
        base = Path(store_dir) if store_dir else Path(tmp)
        for name, preset, policy in variants(presets, retention):
            log_path = preset_log_path(log_dir, "change", name)
            log.info("bench_change_preset_start", preset=name)
            # A retained run gets its own store: the plain run's is ingested and reconsolidated.
            out["presets"][name] = run_preset(
                preset, conversations, ks=ks, store_dir=base / "retain" if policy else base,
                log_path=log_path, config_overrides=config_overrides,
                show_progress=show_progress, retention=policy)
    return out


def format_table(summary: dict[str, Any]) -> str:
    """The presets side by side: Hit@1 and stale-first on current questions, then
    R@1 / R@5 / N@5 per kind and overall, and the speeds."""
    presets = summary["presets"]
    names = list(presets)
    width = max(9, *(len(n) + 2 for n in names))
    ks = summary["ks"]
    k1, kmax = min(ks), max(ks)
    header = f"{'kind':<10}{'metric':<16}" + "".join(f"{n:>{width}}" for n in names)
    lines = [header, "-" * len(header)]

    def row(label: str, metric: str, group: str, shown: str | None = None) -> None:
        cells = []
        for name in names:
            entry = (presets[name]["overall"] if group == "overall"
                     else presets[name]["by_kind"].get(group, {}))
            value = entry.get(metric)
            cells.append(f"{value:>{width}.1f}" if value is not None else f"{'-':>{width}}")
        lines.append(f"{label:<10}{shown or metric:<16}" + "".join(cells))

    row("current", f"Hit@{k1}", "current")
    row("", f"stale_first@{kmax}", "current", "stale-first")
    for group in ("current", "past", "change", "control", "overall"):
        for i, metric in enumerate(dict.fromkeys([f"R@{k1}", f"R@{kmax}", f"N@{kmax}"])):
            row(group if i == 0 else "", metric, group)
        counts = [(presets[n]["overall"] if group == "overall"
                   else presets[n]["by_kind"].get(group, {})).get("n", 0) for n in names]
        lines.append(f"{'':<10}{'n':<16}" + "".join(f"{c:>{width}}" for c in counts))
    lines.append("")
    lines.append(f"{'ingest turns/s':<26}" + "".join(
        f"{presets[n]['ingest_turns_per_s']:>{width}.1f}" for n in names))
    lines.append(f"{'questions seeing future':<26}" + "".join(
        f"{presets[n].get('future_seen', 0):>{width}}" for n in names))
    lines.append(f"{'nodes replaced (ingest)':<26}" + "".join(
        f"{presets[n].get('replaced_nodes', 0):>{width}}" for n in names))
    if any(presets[n].get("llm_calls_ingest") for n in names):
        lines.append(f"{'llm calls (ingest)':<26}" + "".join(
            f"{presets[n].get('llm_calls_ingest', 0):>{width}}" for n in names))
    lines.append(f"{'query_ms p50':<26}" + "".join(
        f"{presets[n]['query_ms']['p50']:>{width}.2f}" for n in names))
    return "\n".join(lines)
