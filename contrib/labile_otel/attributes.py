"""What each span records: attributes from a call's arguments and its result.

Every function returns a flat mapping of OpenTelemetry attribute values.
Without ``content`` only counts, sizes, flags and component names appear;
with it, the namespace, the query or question, the answer and the ids are
added. LLM spans follow the OpenTelemetry GenAI conventions
(``gen_ai.request.model``, ``gen_ai.usage.input_tokens``,
``gen_ai.usage.output_tokens``) beside labile's own ``labile.llm.*``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from labile import AddReport, Answer, OperationReport, RetrievalResult

__all__ = [
    "AttributeValue",
    "add_result",
    "answer_result",
    "llm_call",
    "outcome_counts",
    "search_result",
]

AttributeValue = str | bool | int | float | Sequence[str]


def add_result(report: AddReport, content: bool) -> dict[str, AttributeValue]:
    """An ``add`` or ``repair`` report: how much was stored and built."""
    out: dict[str, AttributeValue] = {
        "labile.added": len(report.added),
        "labile.skipped_existing": len(report.skipped_existing),
        "labile.pending": len(report.pending),
        "labile.nodes_written": report.nodes_written,
        "labile.edges_written": report.edges_written,
    }
    if content:
        out["labile.observation_ids"] = list(report.added)
    return out


def search_result(result: RetrievalResult, content: bool) -> dict[str, AttributeValue]:
    """A search: how many hits, the embedding time, how many atoms ran."""
    out: dict[str, AttributeValue] = {
        "labile.hits": len(result.hits),
        "labile.embed_ms": round(result.embed_ms, 3),
        "labile.atoms": len(result.trace),
        "labile.subgraph_edges": len(result.subgraph.edges),
    }
    if content:
        out["labile.hit_ids"] = [hit.node.id for hit in result.hits]
    return out


def answer_result(answer: Answer, content: bool) -> dict[str, AttributeValue]:
    """An answer: its evidence and citations, and its LLM tokens in total."""
    total = answer.usage.get("total", {})
    out: dict[str, AttributeValue] = {
        "labile.hits": len(answer.result.hits),
        "labile.context_entries": len(answer.context_ids),
        "labile.cited": len(answer.cited),
        "labile.llm.prompt_tokens": int(total.get("prompt_tokens", 0)),
        "labile.llm.completion_tokens": int(total.get("completion_tokens", 0)),
    }
    if answer.prompt_version:
        out["labile.prompt_version"] = answer.prompt_version
    if content:
        out["labile.answer"] = answer.text
        out["labile.cited_ids"] = list(answer.cited)
    return out


def outcome_counts(reports: Iterable[OperationReport]) -> dict[str, AttributeValue]:
    """Reconsolidation or consolidation reports: operators run and outcomes summed."""
    out: dict[str, AttributeValue] = {}
    operators: list[str] = []
    for report in reports:
        operators.append(report.operator)
        for key, n in report.counts.items():
            name = f"labile.outcome.{key}"
            previous = out.get(name, 0)
            out[name] = (previous if isinstance(previous, int) else 0) + n
    out["labile.operators"] = operators
    return out


def llm_call(operation: str, model: str, figures: Mapping[str, Any]) -> dict[str, AttributeValue]:
    """One LLM call as the usage meter saw it (never the prompt or the reply)."""
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "gen_ai.usage.input_tokens": int(figures.get("prompt_tokens", 0)),
        "gen_ai.usage.output_tokens": int(figures.get("completion_tokens", 0)),
        "labile.llm.operation": operation,
        "labile.llm.cost_usd": float(figures.get("cost_usd", 0.0)),
        "labile.llm.latency_ms": float(figures.get("latency_ms", 0.0)),
        "labile.llm.failed": bool(figures.get("failed", False)),
        "labile.llm.cache_hit": bool(figures.get("cache_hit", False)),
    }
