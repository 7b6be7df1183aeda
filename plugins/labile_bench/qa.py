"""QA evaluation: answer benchmark questions from a memory, judge them, aggregate.

For each question `QAEvaluator.evaluate` runs `labile_llm.answer.answer_question`
with the *answer* model, scores the prediction against the reference with the
local metrics of `labile_bench.metrics` (token F1, BLEU-1, ROUGE-L) and, when a
*judge* model is given, with the LLM judge (`labile_bench.judge`). Tokens,
cost and latency come from the usage meters (the memory's, the answer
model's and the judge's), measured around each step.

`summarize` aggregates rows per category and overall. As in the LoCoMo
papers, category 5 (adversarial) is excluded from the overall figures (it is
still reported on its own); pass ``exclude_categories=()`` for data sets
without that convention (LongMemEval).

Failures never stop an evaluation: an answer or judge call that fails (after
its retries and repairs) gives a row with ``error`` set, an empty prediction
or an ``"ERROR"`` verdict, and counts as wrong.

Rows and summaries are plain JSON-ready dicts. Percentages are means × 100,
rounded to one decimal in `summarize`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import attrs

from labile.plugin import (
    LLMError,
    RetrievalResult,
    UsageMeter,
    get_logger,
    structure_options,
)
from labile_bench.judge import JUDGE_PROMPT_VERSION, judge, judge_prompt_sha256
from labile_bench.metrics import bleu1, percentile, rouge_l, token_f1
from labile_llm.answer import ANSWER_PROMPT_VERSION, answer_question
from labile_llm.usage import usage_delta, usage_meters

if TYPE_CHECKING:
    from labile import Memory
    from labile.plugin import LLMClient

log = get_logger(__name__)

__all__ = [
    "EXCLUDED_CATEGORIES",
    "LOCOMO_CATEGORIES",
    "QAEvaluator",
    "QAHook",
    "QAHookFactory",
    "build_named_llm",
    "evaluate_qa",
    "make_qa_hook",
    "qa_markdown",
    "summarize",
]

#: LoCoMo category names (``Question.category``).
LOCOMO_CATEGORIES: Final = {1: "multi-hop", 2: "temporal", 3: "open-domain",
                            4: "single-hop", 5: "adversarial"}
#: Categories left out of the overall figures by default (LoCoMo adversarial).
EXCLUDED_CATEGORIES: Final = (5,)


def _field(record: Any, name: str, default: Any = None) -> Any:
    if isinstance(record, Mapping):
        return record.get(name, default)
    return getattr(record, name, default)


class QAEvaluator:
    """Answers and judges benchmark questions against a memory.

    Args:
        answer_llm: The answering model (``None``: each memory's own ``llm``).
        judge_llm: The judge (``None``: no judge verdicts, local metrics only).
        k: Hits retrieved per question.
        budget_tokens: Token budget of the answer context.
        feedback: Let the pipeline's reconsolidators learn from each answer
            (the system's own answer, never the reference).
        count_tokens: Tokenizer for the context budget.
    """

    def __init__(
        self,
        answer_llm: LLMClient | None = None,
        judge_llm: LLMClient | None = None,
        *,
        k: int = 10,
        budget_tokens: int = 2000,
        feedback: bool = True,
        count_tokens: Callable[[str], int] | None = None,
    ) -> None:
        self.answer_llm = answer_llm
        self.judge_llm = judge_llm
        self.k = k
        self.budget_tokens = budget_tokens
        self.feedback = feedback
        self.count_tokens = count_tokens

    def evaluate(
        self,
        memory: Memory,
        namespace: str,
        question: Any,
        *,
        as_of: datetime | None = None,
        result: RetrievalResult | None = None,
    ) -> dict[str, Any]:
        """Answer, score and judge one question.

        Args:
            memory: The memory holding the conversation.
            namespace: The conversation's namespace.
            question: A record with ``question``, ``answer`` and ``category``
                (attributes, e.g. `labile_io.locomo.Question`, or keys);
                an optional ``id``/``question_id``/``index`` is copied.
            as_of: When the question is asked (e.g. the last session's date).
            result: Reuse this retrieval instead of searching again.

        Returns:
            A row: ``question, gold, category, predicted, verdict`` (``CORRECT``,
            ``WRONG``, ``ERROR`` or ``None`` without a judge), ``correct``,
            ``f1, bleu1, rouge_l`` (fractions), ``cited, retrieved`` (node ids),
            ``tokens, prompt_tokens, completion_tokens, cost_usd, llm_calls``
            (retrieval + answer + feedback), ``judge_tokens, judge_cost_usd``,
            ``latency_ms`` (retrieval + answer), ``error``.
        """
        text = str(_field(question, "question", ""))
        gold = str(_field(question, "answer", ""))
        row: dict[str, Any] = {
            "id": _field(question, "id", _field(question, "question_id",
                                                _field(question, "index"))),
            "question": text, "gold": gold, "category": _field(question, "category"),
            "predicted": "", "verdict": None, "correct": None, "cited": [], "retrieved": [],
            "tokens": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0,
            "llm_calls": 0, "judge_tokens": 0, "judge_cost_usd": 0.0, "latency_ms": 0.0,
            "error": None,
        }
        model = self.answer_llm if self.answer_llm is not None else memory.llm
        meters = usage_meters([memory.usage, getattr(model, "usage", None)])
        before = [m.snapshot() for m in meters]
        start = time.perf_counter()
        try:
            answer = answer_question(
                memory, text, namespace=namespace, k=self.k, as_of=as_of,
                budget_tokens=self.budget_tokens, llm=model, feedback=self.feedback,
                count_tokens=self.count_tokens, result=result,
            )
        except LLMError as exc:
            row["error"] = f"answer: {type(exc).__name__}: {exc}"[:500]
            log.warning("qa_answer_failed", namespace=namespace, error_type=type(exc).__name__)
            usage = usage_delta(before, [m.snapshot() for m in meters])
        else:
            row["predicted"] = answer.text
            row["cited"] = list(answer.cited)
            row["retrieved"] = answer.result.node_ids
            usage = answer.usage
        row["latency_ms"] = (time.perf_counter() - start) * 1000
        total = usage["total"]
        row["prompt_tokens"] = int(total.get("prompt_tokens", 0))
        row["completion_tokens"] = int(total.get("completion_tokens", 0))
        row["tokens"] = row["prompt_tokens"] + row["completion_tokens"]
        row["cost_usd"] = float(total.get("cost_usd", 0.0))
        row["llm_calls"] = int(total.get("calls", 0))
        row["f1"] = token_f1(row["predicted"], gold)
        row["bleu1"] = bleu1(row["predicted"], gold)
        row["rouge_l"] = rouge_l(row["predicted"], gold)
        if self.judge_llm is not None:
            self._judge(row, text, gold)
        elif row["error"] is not None:
            row["correct"] = False
        return row

    def _judge(self, row: dict[str, Any], question: str, gold: str) -> None:
        assert self.judge_llm is not None
        if row["error"] is not None:
            row["verdict"], row["correct"] = "ERROR", False
            return
        meters = usage_meters([getattr(self.judge_llm, "usage", None)])
        before = [m.snapshot() for m in meters]
        try:
            ok = judge(self.judge_llm, question, gold, row["predicted"])
        except LLMError as exc:
            row["verdict"], row["correct"] = "ERROR", False
            row["error"] = f"judge: {type(exc).__name__}: {exc}"[:500]
            log.warning("qa_judge_failed", error_type=type(exc).__name__)
        else:
            row["verdict"], row["correct"] = ("CORRECT" if ok else "WRONG"), ok
        spent = usage_delta(before, [m.snapshot() for m in meters])["total"]
        row["judge_tokens"] = int(spent.get("prompt_tokens", 0)) + int(
            spent.get("completion_tokens", 0))
        row["judge_cost_usd"] = float(spent.get("cost_usd", 0.0))


def build_named_llm(memory: Memory, model: str, *, options: Mapping[str, Any] | None = None,
                    where: str = "$.model") -> LLMClient:
    """A registered ``litellm`` client for ``model``, with its own usage meter.

    Args:
        memory: Supplies the registries and deps.
        model: A litellm model string (``gpt-4o-mini``, ``ollama/llama3.1`` …).
        options: More `LiteLLMConfig` options (``cache_dir``, ``api_base`` …).
        where: The path named in config errors.

    Raises:
        ConfigError: bad options.
        MissingDependencyError: litellm is not installed.
    """
    component = memory.registries["llm"].get("litellm")
    config = structure_options(component, {**dict(options or {}), "model": model}, where)
    client: LLMClient = component.build(config, attrs.evolve(memory.deps, usage=UsageMeter()))
    return client


class QAHook:
    """The QA step of ``labile bench locomo`` for one preset.

    Called by the runner as ``hook(memory, conversation, question, result)``
    after each scored search: answers from that same retrieval (as of the
    result's time), judges, keeps the row, and returns ``{"qa": row}`` for the
    per-question log. `summary` aggregates the rows kept so far. The models
    are built on first use (from the memory's registries) unless given.
    """

    def __init__(
        self,
        *,
        answer_model: str | None = None,
        judge_model: str | None = None,
        answer_llm: LLMClient | None = None,
        judge_llm: LLMClient | None = None,
        model_options: Mapping[str, Any] | None = None,
        budget_tokens: int = 2000,
        feedback: bool = True,
        exclude_categories: Sequence[int | str] = EXCLUDED_CATEGORIES,
    ) -> None:
        self.answer_model, self.judge_model = answer_model, judge_model
        self.answer_llm, self.judge_llm = answer_llm, judge_llm
        self.model_options = dict(model_options or {})
        self.budget_tokens, self.feedback = budget_tokens, feedback
        self.exclude_categories = tuple(exclude_categories)
        self.rows: list[dict[str, Any]] = []
        self._evaluator: QAEvaluator | None = None

    def _ready(self, memory: Memory) -> QAEvaluator:
        if self._evaluator is None:
            if self.answer_llm is None and self.answer_model:
                self.answer_llm = build_named_llm(memory, self.answer_model,
                                                  options=self.model_options,
                                                  where="$.answer_model")
            if self.judge_llm is None and self.judge_model:
                self.judge_llm = build_named_llm(memory, self.judge_model,
                                                 options=self.model_options,
                                                 where="$.judge_model")
            self._evaluator = QAEvaluator(self.answer_llm, self.judge_llm,
                                          budget_tokens=self.budget_tokens,
                                          feedback=self.feedback)
        return self._evaluator

    def __call__(self, memory: Memory, conversation: Any, question: Any,
                 result: RetrievalResult) -> dict[str, Any]:
        """Answer and judge ``question`` from ``result``; return ``{"qa": row}``."""
        row = self._ready(memory).evaluate(memory, result.query.namespace, question,
                                           as_of=result.query.as_of, result=result)
        row["sample_id"] = _field(conversation, "sample_id")
        self.rows.append(row)
        return {"qa": row}

    def summary(self) -> dict[str, Any]:
        """`summarize` of the rows so far, plus the model names and their usage."""
        out = summarize(self.rows, exclude_categories=self.exclude_categories)
        out["models"] = {"answer": getattr(self.answer_llm, "name", None),
                         "judge": getattr(self.judge_llm, "name", None)}
        out["usage"] = {label: meter.snapshot() for label, meter in (
            ("answer", getattr(self.answer_llm, "usage", None)),
            ("judge", getattr(self.judge_llm, "usage", None)),
        ) if isinstance(meter, UsageMeter)}
        return out


class QAHookFactory:
    """``factory(preset) -> QAHook``: one hook (and one pair of clients) per preset.

    ``hooks`` keeps every hook made, by preset, so a runner can add
    ``hooks[preset].summary()`` to its report.
    """

    def __init__(self, **hook_options: Any) -> None:
        self.hook_options = hook_options
        self.hooks: dict[str, QAHook] = {}

    def __call__(self, preset: str) -> QAHook:
        hook = QAHook(**self.hook_options)
        self.hooks[preset] = hook
        return hook


def make_qa_hook(
    *,
    answer_model: str | None = None,
    judge_model: str | None = None,
    answer_llm: LLMClient | None = None,
    judge_llm: LLMClient | None = None,
    model_options: Mapping[str, Any] | None = None,
    budget_tokens: int = 2000,
    feedback: bool = True,
) -> QAHookFactory:
    """The ``qa_hook_factory`` of `labile_bench.locomo_run.run_locomo`.

    Args:
        answer_model: litellm model string that answers.
        judge_model: litellm model string that judges (``None``: no judge).
        answer_llm: A ready answering client instead (tests, custom clients).
        judge_llm: A ready judge instead.
        model_options: Extra `LiteLLMConfig` options for named models.
        budget_tokens: Answer context budget.
        feedback: Reconsolidate after each answer (the runner does not, when a
            QA hook is given).
    """
    return QAHookFactory(answer_model=answer_model, judge_model=judge_model,
                         answer_llm=answer_llm, judge_llm=judge_llm,
                         model_options=model_options, budget_tokens=budget_tokens,
                         feedback=feedback)


def evaluate_qa(
    memory: Memory,
    namespace: str,
    questions: Iterable[Any],
    *,
    answer_llm: LLMClient | None = None,
    judge_llm: LLMClient | None = None,
    k: int = 10,
    budget_tokens: int = 2000,
    as_of: datetime | None = None,
    feedback: bool = True,
    exclude_categories: Sequence[int | str] = EXCLUDED_CATEGORIES,
) -> dict[str, Any]:
    """Evaluate every question of one namespace.

    Returns:
        ``{"rows": [row, ...], "summary": summarize(rows)}``.
    """
    evaluator = QAEvaluator(answer_llm, judge_llm, k=k, budget_tokens=budget_tokens,
                            feedback=feedback)
    rows = [evaluator.evaluate(memory, namespace, q, as_of=as_of) for q in questions]
    return {"rows": rows, "summary": summarize(rows, exclude_categories=exclude_categories)}


def _pct(values: list[float]) -> float | None:
    return round(100.0 * math.fsum(values) / len(values), 1) if values else None


def _stats(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    judged = [r for r in rows if r.get("correct") is not None]
    latencies = [float(r.get("latency_ms", 0.0)) for r in rows]
    cost = math.fsum(float(r.get("cost_usd", 0.0)) for r in rows)
    judge_cost = math.fsum(float(r.get("judge_cost_usd", 0.0)) for r in rows)
    return {
        "n": n,
        "judged": len(judged),
        "accuracy": _pct([1.0 if r["correct"] else 0.0 for r in judged]),
        "f1": _pct([float(r["f1"]) for r in rows]),
        "bleu1": _pct([float(r["bleu1"]) for r in rows]),
        "rouge_l": _pct([float(r["rouge_l"]) for r in rows]),
        "errors": sum(1 for r in rows if r.get("error")),
        "tokens_per_question": round(sum(int(r.get("tokens", 0)) for r in rows) / n, 1)
        if n else None,
        "judge_tokens_per_question": round(
            sum(int(r.get("judge_tokens", 0)) for r in rows) / n, 1) if n else None,
        "cost_usd": round(cost, 6),
        "cost_usd_per_question": round(cost / n, 6) if n else None,
        "judge_cost_usd": round(judge_cost, 6),
        "latency_ms_p50": round(percentile(latencies, 50), 1) if latencies else None,
        "latency_ms_p95": round(percentile(latencies, 95), 1) if latencies else None,
    }


def _category_key(category: Any) -> tuple[int, int, str]:
    if isinstance(category, int) and not isinstance(category, bool):
        return (0, category, "")
    return (1, 0, str(category))


def summarize(
    rows: Sequence[Mapping[str, Any]],
    *,
    exclude_categories: Sequence[int | str] = EXCLUDED_CATEGORIES,
) -> dict[str, Any]:
    """Aggregate evaluation rows per category and overall.

    Args:
        rows: Rows from `QAEvaluator.evaluate`.
        exclude_categories: Categories reported on their own but left out of
            ``overall`` (default: LoCoMo's adversarial category 5).

    Returns:
        ``{"overall": stats, "by_category": {str(category): stats},
        "excluded_categories": [...], "answer_prompt": version,
        "judge_prompt": {"version", "sha256"}}`` where ``stats`` holds ``n``,
        ``judged``, ``accuracy`` (% of judged rows judged CORRECT; ``None``
        without a judge), ``f1``, ``bleu1``, ``rouge_l`` (%), ``errors``,
        ``tokens_per_question``, ``judge_tokens_per_question``, ``cost_usd``,
        ``cost_usd_per_question``, ``judge_cost_usd``, ``latency_ms_p50``,
        ``latency_ms_p95``.
    """
    excluded = {str(c) for c in exclude_categories}
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row.get("category"), []).append(row)
    by_category = {str(cat): _stats(groups[cat]) for cat in sorted(groups, key=_category_key)}
    kept = [r for r in rows if str(r.get("category")) not in excluded]
    return {
        "overall": _stats(kept),
        "by_category": by_category,
        "excluded_categories": sorted(excluded),
        "answer_prompt": ANSWER_PROMPT_VERSION,
        "judge_prompt": {"version": JUDGE_PROMPT_VERSION, "sha256": judge_prompt_sha256()},
    }


def qa_markdown(summary: Mapping[str, Any], *, names: Mapping[Any, str] | None = None) -> str:
    """The paper-style table of a `summarize` result (one row per category, then overall).

    Args:
        summary: What `summarize` returned.
        names: Category labels (default: LoCoMo's names where they apply).

    Returns:
        A Markdown table without a trailing newline.
    """
    labels = {str(k): v for k, v in (names or LOCOMO_CATEGORIES).items()}
    excluded = set(summary.get("excluded_categories", ()))
    header = ["category", "n", "judge acc %", "F1 %", "BLEU-1 %", "ROUGE-L %",
              "tokens/q", "cost $/q"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def cell(value: Any) -> str:
        return "-" if value is None else str(value)

    entries = [*summary["by_category"].items(), ("overall", summary["overall"])]
    for key, stats in entries:
        label = f"{key} {labels[key]}" if key in labels else key
        if key in excluded:
            label += " (excluded)"
        lines.append("| " + " | ".join([
            label, str(stats["n"]), cell(stats["accuracy"]), cell(stats["f1"]),
            cell(stats["bleu1"]), cell(stats["rouge_l"]), cell(stats["tokens_per_question"]),
            cell(stats["cost_usd_per_question"]),
        ]) + " |")
    return "\n".join(lines)
