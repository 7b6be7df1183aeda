"""The default answerer: retrieve, build a dated context within a budget, ask, cite, learn.

`answer_question` is what ``llm.answerer`` (`LLMAnswerer`, so ``Memory.answer``)
runs:

1. ``memory.search(question, namespace=…, k=…, as_of=…)``;
2. the public prompt context (`labile_llm.context.render_context`, style
   ``"lines"``) turns the hits into numbered, dated evidence lines that fit
   ``budget_tokens``, counted by the answering model's own ``count_tokens``
   when it has one (`token_counter_of`): the most relevant hits are chosen
   first, then shown newest first (so the latest state of a changing fact
   leads);
3. the LLM is asked (operation ``"answer"``) for
   ``{"answer": str, "cited": [int]}``, validated (fail closed with
   `LLMOutputError`: nothing is applied);
4. the cited numbers are mapped back to node ids (unknown numbers dropped);
5. when the pipeline has reconsolidators, ``memory.feedback(result,
   answer=…, cited=…)`` runs with the system's own answer.

The prompt is fixed and versioned (`ANSWER_PROMPT_VERSION`); change the text
only together with the version, since benchmark numbers depend on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from labile.plugin import (
    Answer,
    Deps,
    Hit,
    LLMClient,
    NoConfig,
    OperationReport,
    RetrievalResult,
    get_logger,
)
from labile_llm.context import evidence_line, render_context
from labile_llm.tokens import estimate_tokens
from labile_llm.usage import usage_delta, usage_meters

if TYPE_CHECKING:
    from labile import Memory

log = get_logger(__name__)

__all__ = [
    "ANSWER_PROMPT_VERSION",
    "ANSWER_SCHEMA",
    "ANSWER_SYSTEM",
    "LLMAnswerer",
    "answer_question",
    "build_context",
    "format_evidence",
    "render_answer_prompt",
    "token_counter_of",
]

#: Bump together with any change to `ANSWER_SYSTEM` or `render_answer_prompt`.
ANSWER_PROMPT_VERSION: Final = "answer-v2"

ANSWER_SYSTEM: Final = (
    "You are the answering step of a long-term memory system. You receive numbered "
    "memories taken from a user's past conversations, each with the date it was "
    "recorded, and one question. Answer from those memories only.\n"
    "- When memories disagree, trust the most recent one.\n"
    "- Work out relative dates (\"yesterday\", \"last month\") from the memory's own "
    "date, and give absolute dates in the answer.\n"
    "- Keep the answer short: a phrase or one sentence, with no explanation.\n"
    "- If the memories do not contain the answer, reply that the information is not "
    "available in memory.\n"
    "- List in \"cited\" the numbers of the memories the answer relies on."
)

ANSWER_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "cited": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["answer", "cited"],
    "additionalProperties": False,
}

TokenCounter = Callable[[str], int]


# -- context ------------------------------------------------------------------


def _stamp(ts: datetime) -> str:
    return f"{ts.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


#: One context line, ``[index] (YYYY-MM-DD HH:MM UTC) text``: the public
#: ``"lines"`` style of `labile_llm.context.render_context`.
format_evidence = evidence_line


def build_context(
    hits: Sequence[Hit], *, budget_tokens: int, count_tokens: TokenCounter
) -> tuple[str, list[str]]:
    """Numbered, dated evidence lines from ``hits`` within ``budget_tokens``.

    The public builder (`labile_llm.context.render_context`, style ``"lines"``)
    as ``(text, ids)``: line ``[i]`` is ``ids[i - 1]``. Hits are chosen by
    relevance, shown newest first; see `labile_llm.context` for the rules.

    Raises:
        InputError: ``budget_tokens`` < 1.
    """
    context = render_context(hits, budget_tokens=budget_tokens, style="lines",
                             count_tokens=count_tokens)
    return context.text, list(context.ids)


def token_counter_of(model: object) -> TokenCounter:
    """How ``model`` counts tokens: its ``count_tokens(text)`` method, else the estimate.

    A client that knows its tokenizer should offer ``count_tokens`` (the
    ``litellm`` and ``scripted`` clients count as litellm does), so the
    evidence context is measured in the tokens of the model that reads it;
    for any other client `labile_llm.tokens.estimate_tokens` stands in.
    """
    count = getattr(model, "count_tokens", None)
    return count if callable(count) else estimate_tokens


# -- prompting ------------------------------------------------------------------


def render_answer_prompt(question: str, context: str, *, as_of: datetime) -> str:
    """The user prompt of the answer call (see `ANSWER_PROMPT_VERSION`)."""
    evidence = context if context else "(no memories were retrieved)"
    return (
        f"Current date: {_stamp(as_of)}\n\n"
        f"Memories (newest first):\n{evidence}\n\n"
        f"Question: {question.strip()}\n\n"
        # Fields described, not a template to fill: a small model copied the
        # placeholder "<short answer>" verbatim as its answer.
        'Reply with a JSON object with two fields: "answer", the answer in a few words '
        'taken from the memories, and "cited", the list of the numbers of the memories '
        'you used.'
    )


# -- the whole loop ---------------------------------------------------------------


def answer_question(
    memory: Memory,
    question: str,
    *,
    namespace: str,
    k: int = 10,
    as_of: datetime | None = None,
    budget_tokens: int = 2000,
    llm: LLMClient | None = None,
    feedback: bool = True,
    count_tokens: TokenCounter | None = None,
    result: RetrievalResult | None = None,
) -> Answer:
    """Answer ``question`` from ``memory`` and let the memory learn from it.

    Args:
        memory: The memory to search.
        question: The question (non-empty).
        namespace: Whose memory.
        k: Hits to retrieve.
        as_of: When the question is asked (default now); retrieval and the
            prompt's "current date" use it.
        budget_tokens: Token budget of the evidence context.
        llm: The answering model (default: the pipeline's ``memory.llm``).
        feedback: Run the pipeline's reconsolidators with the answer.
        count_tokens: Tokenizer for the budget (default: the answering
            model's, see `token_counter_of`).
        result: A retrieval already made for this question (its hits are
            used and ``k``/``as_of`` are ignored); benchmarks that score
            retrieval reuse it instead of searching twice.

    Returns:
        The `Answer`.

    Raises:
        InputError: bad question, namespace, ``k`` or budget.
        LLMOutputError: the model's reply stayed invalid (nothing applied).
        LLMError: the model call failed for good.
    """
    model = llm if llm is not None else memory.llm
    meters = usage_meters([memory.usage, getattr(model, "usage", None)])
    before = [m.snapshot() for m in meters]
    if result is None:
        result = memory.search(question, namespace=namespace, k=k, as_of=as_of)
    evidence = render_context(result.hits, budget_tokens=budget_tokens, style="lines",
                              count_tokens=count_tokens or token_counter_of(model))
    context, ids = evidence.text, evidence.ids
    prompt = render_answer_prompt(question, context, as_of=result.query.as_of)
    reply = model.complete_json(prompt, ANSWER_SCHEMA, operation="answer", system=ANSWER_SYSTEM)
    text = str(reply["answer"]).strip()
    cited: list[str] = []
    dropped = 0
    for raw in reply["cited"]:
        index = int(raw)  # the schema admits integral floats such as 2.0
        if 1 <= index <= len(ids):
            if ids[index - 1] not in cited:
                cited.append(ids[index - 1])
        else:
            dropped += 1
    if dropped:
        log.debug("answer_citations_dropped", namespace=namespace, dropped=dropped)
    reports: list[OperationReport] = []
    if feedback and memory.reconsolidators:
        reports = memory.feedback(result, answer=text, cited=cited)
    usage = usage_delta(before, [m.snapshot() for m in meters])
    return Answer(text=text, cited=tuple(cited), result=result, usage=usage, context=context,
                  context_ids=ids, feedback=tuple(reports),
                  prompt_version=ANSWER_PROMPT_VERSION)


class LLMAnswerer:
    """``llm.answerer``: `answer_question` with the pipeline's own LLM client."""

    def __init__(self, config: NoConfig, deps: Deps) -> None:
        del config, deps  # the memory handed to `answer` carries the client

    def answer(self, memory: Memory, question: str, *, namespace: str, k: int,
               as_of: datetime | None, budget_tokens: int) -> Answer:
        """See `labile.plugin.Answerer`; runs `answer_question`."""
        return answer_question(memory, question, namespace=namespace, k=k, as_of=as_of,
                               budget_tokens=budget_tokens)
