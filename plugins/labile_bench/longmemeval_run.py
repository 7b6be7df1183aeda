"""The LongMemEval_S runner: ingest each item's haystack, retrieve, score, optionally answer.

For every item (`labile_io.longmemeval.load_longmemeval`):

1. a fresh namespace ``lme_<question_id>`` in one `Memory`;
2. each haystack session is added as one batch of observations, one per
   non-empty turn: id ``<session_id>:<turn index>``, the session's date as
   timestamp (its original text in ``metadata["date_text"]``), the role as
   speaker, ``session=<session_id>``;
3. one search with the question, ``as_of`` = the question date, ``k`` =
   ``search_k`` (default: the largest of ``k_list``);
4. session-level Recall@k / NDCG@k / Hit@k: the retrieved nodes' sources
   (observation ids) are mapped to their sessions, repeats collapsed, and
   scored against ``answer_session_ids`` for every ``k`` in ``k_list``.
   Abstention items (``*_abs``) and items without gold sessions are left out
   of retrieval metrics (counted in ``retrieval_skipped``);
5. with an answer model (name or client), the same retrieval is answered and
   scored (`labile_bench.qa.QAEvaluator`); with a judge model, judged too.
   Question types are the categories; nothing is excluded from ``overall``.

Models given by name are built as the registered ``litellm`` llm
(``pip install 'labile[llm]'``), each with its own usage meter.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from labile.plugin import Observation, UsageMeter, get_logger
from labile_bench.metrics import RetrievalScorer, turns_from_ranked_sources
from labile_bench.qa import QAEvaluator, build_named_llm, summarize
from labile_io.longmemeval import LMEItem, load_longmemeval
from labile_llm.usage import usage_delta

if TYPE_CHECKING:
    import pluggy

    from labile import Memory
    from labile.plugin import LLMClient

log = get_logger(__name__)

__all__ = ["ingest_item", "namespace_for", "open_bench_memory", "run_longmemeval"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def namespace_for(item: LMEItem) -> str:
    """The item's namespace: ``lme_<question_id>`` with unusual characters replaced."""
    return "lme_" + _UNSAFE.sub("_", item.question_id)


def ingest_item(memory: Memory, item: LMEItem, namespace: str) -> dict[str, str]:
    """Add the item's haystack to ``namespace``, one batch per session.

    Returns:
        Observation id → session id, for every observation written.
    """
    owner: dict[str, str] = {}
    for session in item.sessions:
        batch = []
        for index, (role, content) in enumerate(session.turns):
            if not content.strip():
                continue
            obs_id = f"{session.id}:{index}"
            owner[obs_id] = session.id
            batch.append(Observation(
                id=obs_id, text=content, timestamp=session.timestamp, speaker=role,
                session=session.id, metadata={"date_text": session.date_text},
            ))
        if batch:
            memory.add(batch, namespace=namespace)
    return owner


def _ranked_sessions(hits: Sequence[Any], owner: Mapping[str, str]) -> list[str]:
    sources = [[owner[s] for s in hit.node.sources if s in owner] for hit in hits]
    return turns_from_ranked_sources(sources)


def open_bench_memory(
    config: Mapping[str, Any] | str | Path | None,
    *,
    preset: str | None,
    store_dir: str | Path,
    plugin_manager: pluggy.PluginManager | None = None,
    **instances: Any,
) -> Memory:
    """A `Memory` for a benchmark run whose store never touches the user's own data.

    A path-based store (``lancedb``) is pointed at ``store_dir`` unless the
    config itself names a ``[store] path``.
    """
    from labile import Memory, plugins_disabled, read_toml, resolve
    from labile.plugin import build_registries

    table = read_toml(config) if isinstance(config, str | Path) else dict(config or {})
    if preset is not None:
        table.setdefault("preset", preset)
    registries = build_registries(plugin_manager, disable=plugins_disabled(table))
    resolved = resolve(table, registries)
    store_cfg = resolved.store.config
    explicit = isinstance(table.get("store"), Mapping) and "path" in table["store"]
    if attrs.has(type(store_cfg)) and "path" in attrs.fields_dict(type(store_cfg)) \
            and not explicit:
        store = attrs.evolve(resolved.store, config=attrs.evolve(store_cfg, path=str(store_dir)))
        resolved = resolved.with_component("store", store)
    return Memory(resolved, registries, **instances)


def run_longmemeval(  # noqa: PLR0913
    path: str | os.PathLike[str],
    *,
    preset: str | None = "hybrid",
    presets: Sequence[str] | None = None,
    config: Mapping[str, Any] | str | Path | None = None,
    k_list: Sequence[int] = (1, 5, 10),
    limit: int | None = None,
    answer_model: str | None = None,
    judge_model: str | None = None,
    answer_llm: LLMClient | None = None,
    judge_llm: LLMClient | None = None,
    model_options: Mapping[str, Any] | None = None,
    llm: LLMClient | None = None,
    search_k: int | None = None,
    budget_tokens: int = 2000,
    feedback: bool = True,
    store_dir: str | Path | None = None,
    plugin_manager: pluggy.PluginManager | None = None,
    progress: Callable[[int, int, Mapping[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run LongMemEval_S (or a file in its layout) against one pipeline or several presets.

    Args:
        path: The data file.
        preset: The pipeline preset (``None``: only ``config``).
        presets: Run each of these presets in turn instead (the CLI's
            ``--preset a b``); the result then holds one run per preset under
            ``"presets"``.
        config: A config table or TOML path (merged over the preset).
        k_list: Cut-offs of the session-level metrics.
        limit: Only the first ``limit`` items.
        answer_model: litellm model string of the answering model.
        judge_model: litellm model string of the judge (default: the
            ``answer_model``, when that is given by name).
        answer_llm: A ready answering client (instead of ``answer_model``).
        judge_llm: A ready judge (instead of ``judge_model``).
        model_options: Extra `LiteLLMConfig` options for named models
            (``cache_dir``, ``api_base``, ``requests_per_minute`` …).
        llm: A ready client replacing the pipeline's own llm.
        search_k: Nodes retrieved per question (default ``max(k_list)``);
            the answer uses the same retrieval.
        budget_tokens: Answer context budget.
        feedback: Run reconsolidation after each answer.
        store_dir: Where path-based stores write (default: a temporary
            directory, removed afterwards; one subdirectory per preset).
        plugin_manager: Use these plugins instead of discovering them.
        progress: Called as ``progress(done, total, item_row)`` after each item.

    Returns:
        For one pipeline: ``{"benchmark", "path", "n_items", "preset",
        "pipeline" (config table), "k_list", "search_k", "retrieval"
        (`RetrievalScorer.report` by question type and overall, in %),
        "retrieval_skipped", "qa" (`summarize` or ``None``), "models", "items"
        (one row per item), "usage" (by meter), "ingest"}``. With
        ``presets``: ``{"benchmark", "path", "n_items", "k_list", "presets":
        {name: <the one-pipeline dict>}}``.

    Raises:
        ValueError: bad file layout, ``k_list`` or ``limit``.
        ConfigError / MissingDependencyError: the pipeline or a named model
            cannot be built.
    """
    ks = tuple(sorted(set(k_list)))
    RetrievalScorer(ks)  # validates k_list before any work
    items = load_longmemeval(path, limit=limit)
    if judge_model is None and answer_model and judge_llm is None:
        judge_model = answer_model
    names: list[str | None] = list(presets) if presets else [preset]
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="labile-lme-") as tmp:
        base = Path(store_dir) if store_dir else Path(tmp)
        for name in names:
            instances: dict[str, Any] = {"llm": llm} if llm is not None else {}
            memory = open_bench_memory(config, preset=name, store_dir=base / (name or "config"),
                                       plugin_manager=plugin_manager, **instances)
            with memory:
                run = _run_items(
                    memory, items, ks=ks, search_k=search_k or max(ks),
                    answer_llm=answer_llm, judge_llm=judge_llm, answer_model=answer_model,
                    judge_model=judge_model, model_options=model_options,
                    budget_tokens=budget_tokens, feedback=feedback, progress=progress,
                )
            runs[name or "config"] = {"benchmark": "longmemeval", "path": str(path),
                                      "n_items": len(items), "preset": name, **run}
    if presets:
        return {"benchmark": "longmemeval", "path": str(path), "n_items": len(items),
                "k_list": list(ks), "presets": runs}
    return next(iter(runs.values()))


def _run_items(  # noqa: PLR0913
    memory: Memory,
    items: Sequence[LMEItem],
    *,
    ks: tuple[int, ...],
    search_k: int,
    answer_llm: LLMClient | None,
    judge_llm: LLMClient | None,
    answer_model: str | None,
    judge_model: str | None,
    model_options: Mapping[str, Any] | None,
    budget_tokens: int,
    feedback: bool,
    progress: Callable[[int, int, Mapping[str, Any]], None] | None,
) -> dict[str, Any]:
    scorer = RetrievalScorer(ks)
    skipped = {"abstention": 0, "no_gold": 0}
    rows: list[dict[str, Any]] = []
    qa_rows: list[dict[str, Any]] = []
    ingest_ms = 0.0
    n_obs = 0
    if answer_llm is None and answer_model:
        answer_llm = build_named_llm(memory, answer_model, options=model_options,
                                     where="$.answer_model")
    if judge_llm is None and judge_model:
        judge_llm = build_named_llm(memory, judge_model, options=model_options,
                                    where="$.judge_model")
    evaluator = None
    if answer_llm is not None or judge_llm is not None:
        evaluator = QAEvaluator(answer_llm, judge_llm, k=search_k, budget_tokens=budget_tokens,
                                feedback=feedback)
    ingest_usage: dict[str, dict[str, Any]] = {}
    for done, item in enumerate(items, start=1):
        namespace = namespace_for(item)
        t0 = time.perf_counter()
        before = [memory.usage.snapshot()]
        owner = ingest_item(memory, item, namespace)
        spent = usage_delta(before, [memory.usage.snapshot()])
        for op, figures in spent.items():
            slot = ingest_usage.setdefault(op, dict.fromkeys(figures, 0))
            for key, value in figures.items():
                slot[key] = slot.get(key, 0) + value
        ingest_ms += (time.perf_counter() - t0) * 1000
        n_obs += len(owner)
        result = memory.search(item.question, namespace=namespace, k=search_k,
                               as_of=item.question_date)
        sessions = _ranked_sessions(result.hits, owner)
        row: dict[str, Any] = {
            "question_id": item.question_id, "question_type": item.question_type,
            "namespace": namespace, "gold_sessions": list(item.answer_session_ids),
            "ranked_sessions": sessions, "retrieval": None, "qa": None,
            "search_ms": round(result.total_ms, 2),
        }
        if item.is_abstention:
            skipped["abstention"] += 1
        elif not item.answer_session_ids:
            skipped["no_gold"] += 1
        else:
            row["retrieval"] = scorer.add(sessions, item.answer_session_ids,
                                          category=item.question_type)
        if evaluator is not None:
            record = {"id": item.question_id, "question": item.question,
                      "answer": item.answer, "category": item.question_type}
            qa = evaluator.evaluate(memory, namespace, record, as_of=item.question_date,
                                    result=result)
            row["qa"] = qa
            qa_rows.append(qa)
        elif feedback and memory.reconsolidators:
            memory.feedback(result, answer=None)
        rows.append(row)
        log.debug("lme_item_done", question_id=item.question_id, done=done, total=len(items))
        if progress is not None:
            progress(done, len(items), row)
    usage = {"memory": memory.usage.snapshot()}
    for label, client in (("answer", answer_llm), ("judge", judge_llm)):
        meter = getattr(client, "usage", None)
        if isinstance(meter, UsageMeter) and meter is not memory.usage:
            usage[label] = meter.snapshot()
    ingest_total = ingest_usage.get("total", {})
    ingest_tokens = int(ingest_total.get("prompt_tokens", 0)) + int(
        ingest_total.get("completion_tokens", 0))
    return {
        "pipeline": memory.config.to_table(),
        "k_list": list(ks),
        "search_k": search_k,
        "retrieval": scorer.report(),
        "retrieval_skipped": skipped,
        "qa": summarize(qa_rows, exclude_categories=()) if evaluator is not None else None,
        "models": {"answer": getattr(answer_llm, "name", None),
                   "judge": getattr(judge_llm, "name", None)},
        "items": rows,
        "usage": usage,
        "ingest": {
            "observations": n_obs,
            "ms": round(ingest_ms, 1),
            "llm_tokens": ingest_tokens,
            "llm_tokens_per_turn": round(ingest_tokens / n_obs, 2) if n_obs else 0.0,
            "llm_cost_usd": round(float(ingest_total.get("cost_usd", 0.0)), 6),
        },
    }
