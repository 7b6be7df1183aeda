"""``labile bench locomo … --llm SPEC``: presets measured with a real model in the loop.

The offline runner (`labile_bench.locomo_run`) measures retrieval quality at
scale; this one measures what a model costs and does, on a subset small
enough for a local model (`subset`: the first sessions and turns of the first
conversations, and only the questions whose evidence lies inside them).

Every preset gets the same ``[llm]`` table (`labile_bench.llm_spec`), so an
offline preset on the same run answers and judges with the same model and
serves as the reference for what the model's decisions produced. Per preset:

1. **ingest**, one ``Memory.add`` per turn (so each turn's cost is its own),
   or per session with ``add_per="session"`` (REALM's LLM extractor then
   asks several turns in one call; each row is one ``add`` and says how
   many ``turns`` it held, and per-turn figures divide by turns): LLM calls,
   prompt and completion tokens, JSON reply outcomes (valid / repaired /
   rejected:<reason>), wall and CPU time, nodes and edges written;
2. **consolidation** once per conversation when the preset consolidates
   (``Memory.consolidate``), with its calls, tokens, time and the counts of
   the operations it executed;
3. what the store holds then: node kinds (all and visible) and edge predicates;
4. **questions, reconsolidation off**: search (the preset's planner), R@k;
5. **questions, reconsolidation on** (when the preset reconsolidates or QA
   is asked for): the same questions again in order, each answered by the
   model from its retrieval and fed back with that answer and its citations
   (never the reference), then judged by the model when ``qa`` is set.

Operations that run during ``Memory.consolidate`` are counted as
consolidation wherever they run (All-Mem also consolidates inside ``add``
once enough sessions are buffered), so the per-turn online cost and the
amortised consolidation cost stay apart.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final

import attrs

from labile import Memory
from labile.plugin import LLMClient, get_logger
from labile_bench.llm_tally import UsageWindow, add_usage, per_turn, stage_totals
from labile_bench.locomo_run import CATEGORIES, _with_store_path
from labile_bench.metrics import RetrievalScorer, turns_from_ranked_sources
from labile_bench.progress import progress
from labile_bench.qa import QAEvaluator, summarize
from labile_io.locomo import Conversation, Question, observations_of

log = get_logger(__name__)

__all__ = ["SCHEMA_VERSION", "run_llm_locomo", "run_llm_preset", "subset"]

#: Version of the JSON summary of this runner (``"kind": "locomo-llm"``).
SCHEMA_VERSION: Final = 1
#: How ingest calls ``Memory.add``: once per turn, or once per session.
ADD_PER: Final = ("turn", "session")


def subset(
    conversations: Sequence[Conversation],
    *,
    sessions: int | None = None,
    turns: int | None = None,
    questions: int | None = None,
) -> list[Conversation]:
    """The first ``sessions`` sessions (first ``turns`` turns each) of every conversation.

    Only questions of categories 1–4 whose every evidence turn was kept stay,
    in file order, at most ``questions`` per conversation: a question about
    a session that was never ingested measures nothing.
    """
    out = []
    for conv in conversations:
        kept = [s._replace(turns=s.turns[:turns]) for s in conv.sessions[:sessions]]
        ids = {t.id for s in kept for t in s.turns}
        asked = [q for q in conv.questions
                 if q.category in CATEGORIES and q.evidence and set(q.evidence) <= ids]
        out.append(attrs.evolve(conv, sessions=kept, questions=asked[:questions]))
    return out


@attrs.define
class _Run:
    """What one preset's run accumulates."""

    memory: Memory
    turns: list[dict[str, Any]] = attrs.Factory(list)
    consolidations: list[dict[str, Any]] = attrs.Factory(list)
    consolidation_ops: set[str] = attrs.Factory(set)
    questions: list[dict[str, Any]] = attrs.Factory(list)

    @property
    def llm(self) -> LLMClient:
        return self.memory.llm


def run_llm_preset(
    preset: str,
    conversations: Sequence[Conversation],
    llm: Mapping[str, Any],
    *,
    ks: Sequence[int] = (5, 10),
    qa: bool = True,
    store_dir: Path | None = None,
    log_fh: IO[str] | None = None,
    config_overrides: Mapping[str, Any] | None = None,
    add_per: str = "turn",
    show_progress: bool | None = None,
) -> dict[str, Any]:
    """Run ``preset`` with ``llm`` over ``conversations`` (see the module doc); its summary.

    ``config_overrides`` are merged into the preset's table (tests swap in a
    memory store and a fast embedder); ``llm`` wins over any ``llm`` there.
    """
    table: dict[str, Any] = {"preset": preset, **dict(config_overrides or {}), "llm": dict(llm)}
    _with_store_path(table, store_dir, preset)
    run = _Run(Memory.open(table))
    try:
        for conv in conversations:
            _ingest(run, conv, preset, add_per, show_progress)
            if run.memory.consolidators:
                _consolidate(run, conv.sample_id)
        produced = _produced(run.memory, [c.sample_id for c in conversations])
        off = _ask(run, conversations, ks, preset, feedback=False, qa=False,
                   log_fh=log_fh, show_progress=show_progress)
        on = None
        if run.memory.reconsolidators or qa:
            on = _ask(run, conversations, ks, preset, feedback=True, qa=qa,
                      log_fh=log_fh, show_progress=show_progress)
        return _summary(run, preset, produced, off, on)
    finally:
        run.memory.close()


def _ingest(run: _Run, conv: Conversation, preset: str, add_per: str,
            show_progress: bool | None) -> None:
    if add_per not in ADD_PER:
        raise ValueError(f"add_per must be one of {', '.join(ADD_PER)}, got {add_per!r}")
    sessions = observations_of(conv)
    adds = sessions if add_per == "session" else [[o] for s in sessions for o in s]
    for obs in progress(adds, label=f"{preset}: {conv.sample_id} ingest",
                        enabled=show_progress):
        with UsageWindow(run.memory.usage, run.llm) as window:
            cpu0 = time.process_time()
            report = run.memory.add(obs, namespace=conv.sample_id)
            cpu = time.process_time() - cpu0
        run.turns.append({
            "sample_id": conv.sample_id, "turn": obs[0].id, "turns": len(obs),
            "chars": sum(len(o.text) for o in obs),
            "wall_s": round(window.wall_s, 3), "cpu_s": round(cpu, 3),
            "usage": window.usage, "replies": window.replies,
            "nodes_written": report.nodes_written, "edges_written": report.edges_written,
            "auto_consolidation": report.details.get("consolidation"),
            # what the extractor refused or failed on (REALM: llm_failures by decision)
            "extractor": {k: v for k, v in report.details.items() if k != "consolidation"},
        })


def _consolidate(run: _Run, namespace: str) -> None:
    with UsageWindow(run.memory.usage, run.llm) as window:
        reports = run.memory.consolidate(namespace=namespace)
    run.consolidation_ops.update(window.usage)
    counts: Counter[str] = Counter()
    outcomes: list[Any] = []
    for report in reports:
        counts.update(report.counts)
        # every target's outcome with its reason (what was merged, why a target was dropped)
        outcomes.extend(report.log)
    run.consolidations.append({
        "sample_id": namespace, "wall_s": round(window.wall_s, 2), "usage": window.usage,
        "replies": window.replies, "counts": dict(sorted(counts.items())), "log": outcomes,
    })


def _produced(memory: Memory, namespaces: Sequence[str]) -> dict[str, Any]:
    kinds: Counter[str] = Counter()
    visible: Counter[str] = Counter()
    predicates: Counter[str] = Counter()
    for ns in namespaces:
        for node in memory.store.iter_nodes(ns):
            kinds[node.kind] += 1
            visible[node.kind] += int(node.visible)
        predicates.update(e.predicate for e in memory.store.iter_edges(ns))
    return {"node_kinds": dict(kinds.most_common()), "visible_kinds": dict(visible.most_common()),
            "predicates": dict(predicates.most_common())}


def _ask(
    run: _Run,
    conversations: Sequence[Conversation],
    ks: Sequence[int],
    preset: str,
    *,
    feedback: bool,
    qa: bool,
    log_fh: IO[str] | None,
    show_progress: bool | None,
) -> dict[str, Any]:
    """One pass over the questions; returns its retrieval means, QA summary and rows."""
    memory = run.memory
    scorer = RetrievalScorer(ks=tuple(ks))
    evaluator = (QAEvaluator(memory.llm, memory.llm if qa else None, k=max(ks), feedback=True)
                 if feedback else None)
    asked = [(c, q) for c in conversations for q in c.questions]
    label = f"{preset}: questions ({'feedback' if feedback else 'no feedback'})"
    rows: list[dict[str, Any]] = []
    qa_rows: list[dict[str, Any]] = []
    for conv, q in progress(asked, label=label, enabled=show_progress):
        as_of = conv.sessions[-1].timestamp
        with UsageWindow(memory.usage, memory.llm) as window:
            result = memory.search(q.question, namespace=conv.sample_id, k=max(ks), as_of=as_of)
        ranked = turns_from_ranked_sources([h.node.sources for h in result.hits])
        row: dict[str, Any] = {
            "pass": "feedback" if feedback else "no_feedback", "preset": preset,
            "sample_id": conv.sample_id, "index": q.index, "category": q.category,
            "question": q.question, "gold": list(q.evidence), "retrieved_turns": ranked[:max(ks)],
            "metrics": scorer.add(ranked, q.evidence, category=q.category),
            "usage": {"search": window.usage}, "replies": window.replies,
            "wall_s": {"search": round(window.wall_s, 3)},
        }
        if evaluator is not None:
            _answer(evaluator, memory, conv, q, result, row, qa_rows)
        run.questions.append(row)
        rows.append(row)
        if log_fh is not None:  # flushed: a long run stopped midway keeps its questions
            log_fh.write(json.dumps(row, default=str) + "\n")
            log_fh.flush()
    out: dict[str, Any] = {"retrieval": _means(scorer, ks), "n": len(rows),
                           "stages": stage_totals(rows)}
    if qa_rows:
        out["qa"] = summarize(qa_rows)["overall"]
    return out


def _answer(evaluator: QAEvaluator, memory: Memory, conv: Conversation, q: Question,
            result: Any, row: dict[str, Any], qa_rows: list[dict[str, Any]]) -> None:
    """Answer from ``result`` (feeding the answer back), judge; record stage usage in ``row``."""
    with UsageWindow(memory.usage, memory.llm) as window:
        qa_row = evaluator.evaluate(memory, conv.sample_id, q, as_of=result.query.as_of,
                                    result=result)
    usage = dict(window.usage)
    # the evaluator answers, feeds back and judges in one call: split by operation
    for stage, ops in (("answer", ("answer",)), ("judge", ("judge",))):
        picked = {op: usage.pop(op) for op in ops if op in usage}
        if picked:
            row["usage"][stage] = picked
    if usage:
        row["usage"]["feedback"] = usage
    row["wall_s"]["answer_feedback_judge"] = round(window.wall_s, 3)
    row["replies"] = add_usage(row["replies"], window.replies)
    row["qa"] = {k: qa_row[k] for k in ("predicted", "cited", "verdict", "correct", "f1",
                                        "error")}
    qa_row["sample_id"] = conv.sample_id
    qa_rows.append(qa_row)


def _caller_rejections(run: _Run) -> dict[str, int]:
    """Valid replies a bundle still refused or cut short, summed over the turns.

    REALM reports ``llm_failures`` per decision in its add details; its LLM
    unit extractor counts skipped small talk, refused summaries and batch
    outcomes, its LLM write decider the units added without asking.
    """
    out: dict[str, Any] = {}
    for row in run.turns:
        for details in row["extractor"].values():
            if isinstance(details, Mapping):
                out = add_usage(out, details.get("llm_failures", {}))
    for part in ("units", "decider"):  # REALM's LLM extractor and write decider count too
        component = getattr(run.memory.extractor, part, None)
        out = add_usage(out, dict(getattr(component, "counts", {}) or {}))
    return dict(sorted(out.items()))


def _diagnosis_counts(run: _Run) -> dict[str, int]:
    """The counts of every consolidator's diagnoser (All-Mem's pre-gate outcomes)."""
    out: dict[str, Any] = {}
    for _name, op in run.memory.consolidators:
        diagnoser = getattr(op, "diagnoser", None)
        out = add_usage(out, dict(getattr(diagnoser, "counts", {}) or {}))
        failures = getattr(diagnoser, "failures", 0)
        if isinstance(failures, int) and failures:
            out = add_usage(out, {"failures": failures})
    return dict(sorted(out.items()))


def _means(scorer: RetrievalScorer, ks: Sequence[int]) -> dict[str, float]:
    if not len(scorer):
        return {"n": 0}
    means = scorer.means()["overall"]
    out = {f"{short}@{k}": round(means[f"{name}@{k}"], 1) for k in ks
           for name, short in (("recall", "R"), ("ndcg", "N"), ("hit", "Hit"))
           if f"{name}@{k}" in means}
    out["n"] = int(means["n"])
    return out


def _summary(run: _Run, preset: str, produced: dict[str, Any], off: dict[str, Any],
             on: dict[str, Any] | None) -> dict[str, Any]:
    online = per_turn(run.turns, exclude=run.consolidation_ops)
    consolidation = stage_totals(
        [{"usage": {"consolidation": c["usage"]}} for c in run.consolidations])
    # consolidation work that ran inside add() (All-Mem's automatic passes)
    inside = per_turn(run.turns, include=run.consolidation_ops)
    n_turns = max(sum(row.get("turns", 1) for row in run.turns), 1)
    amortised = {key: round((consolidation.get("consolidation", {}).get(key, 0)
                             + inside["total"].get(key, 0)) / n_turns, 1)
                 for key in ("calls", "prompt_tokens", "completion_tokens")}
    return {
        "preset": preset,
        "model": getattr(run.llm, "name", type(run.llm).__name__),
        "turns": sum(row.get("turns", 1) for row in run.turns), "adds": len(run.turns),
        "ingest": online,
        "consolidation": {"runs": run.consolidations, "inside_add": inside["total"],
                          "per_turn_amortised": amortised,
                          "diagnosis": _diagnosis_counts(run)},
        "produced": produced,
        "questions": {"reconsolidation_off": off, "reconsolidation_on": on},
        "replies": run.llm.replies.snapshot() if hasattr(run.llm, "replies") else {},
        "caller_rejections": _caller_rejections(run),
        "usage": run.memory.usage.snapshot(),
        "turn_rows": run.turns,
    }


def run_llm_locomo(  # noqa: PLR0913
    conversations: Sequence[Conversation],
    presets: Sequence[str],
    llm: Mapping[str, Any],
    *,
    dataset: str,
    ks: Sequence[int] = (5, 10),
    qa: bool = True,
    store_dir: Path | None = None,
    log_dir: Path | None = None,
    config_overrides: Mapping[str, Any] | None = None,
    add_per: str = "turn",
    show_progress: bool | None = None,
    on_preset_done: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run every preset on ``conversations`` (already cut by `subset`); the JSON summary.

    ``on_preset_done`` gets the summary so far after each preset, so a long
    run that is stopped still leaves the presets it finished.
    """
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "kind": "locomo-llm", "dataset": dataset,
        "llm": dict(llm), "add_per": add_per,
        "conversations": [c.sample_id for c in conversations],
        "sessions": sum(len(c.sessions) for c in conversations),
        "questions": sum(len(c.questions) for c in conversations), "presets": {},
    }
    for preset in presets:
        log.info("bench_llm_preset_start", preset=preset)
        log_fh = None
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
            log_fh = (log_dir / f"locomo-llm-{preset}.jsonl").open("w", encoding="utf-8")
        try:
            out["presets"][preset] = run_llm_preset(
                preset, conversations, llm, ks=ks, qa=qa, store_dir=store_dir,
                log_fh=log_fh, config_overrides=config_overrides, add_per=add_per,
                show_progress=show_progress)
        finally:
            if log_fh is not None:
                log_fh.close()
        if on_preset_done is not None:
            on_preset_done(out)
    return out
