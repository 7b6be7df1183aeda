"""labile_otel: spans of a memory's calls and its LLM calls, read from the in-memory exporter."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra: pip install -e '.[otel]'")

from adapters_helpers import OFFLINE
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from labile import AsyncMemory, InputError, Memory, Observation
from labile_llm import ScriptedLLM
from labile_otel import TRACER_NAME, instrument

SECRET = "Zanzibar"  # in every text, namespace and question: must never reach a span
NS = f"user-{SECRET}"
T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
REPLY = '{"answer": "Zanzibar", "cited": [1]}'


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp


@pytest.fixture
def memory() -> Iterator[Memory]:
    llm = ScriptedLLM(rules=[("Question:", REPLY)])
    with Memory.open(OFFLINE, llm=llm) as mem:
        yield mem


def observations() -> list[Observation]:
    return [Observation(id=f"t{i}", text=f"I flew to {SECRET} on holiday {i}.", timestamp=T0,
                        speaker="user") for i in range(2)]


def spans(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def attribute_text(span: ReadableSpan) -> str:
    return " ".join(str(v) for v in (span.attributes or {}).values())


def test_each_call_is_a_span_with_counts_and_no_text(
        memory: Memory, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    instrument(memory, tracer_provider=provider)
    memory.add(iter(observations()), namespace=NS)  # a generator is read once, and stored
    result = memory.search(f"Where did I fly, {SECRET}?", namespace=NS, k=3)
    memory.feedback(result, answer=SECRET, cited=result.node_ids[:1])
    memory.consolidate(namespace=NS)
    memory.forget(NS, ["t0"])

    (add,) = spans(exporter, "labile.add")
    assert add.attributes is not None
    assert add.attributes["labile.observations"] == 2 and add.attributes["labile.added"] == 2
    assert add.attributes["labile.nodes_written"] == 2
    assert add.instrumentation_scope is not None
    assert add.instrumentation_scope.name == TRACER_NAME
    (search,) = spans(exporter, "labile.search")
    assert search.attributes is not None
    assert search.attributes["labile.k"] == 3 and search.attributes["labile.hits"] == 2
    assert search.attributes["labile.atoms"] == len(result.trace) > 0
    (feedback,) = spans(exporter, "labile.feedback")
    assert feedback.attributes is not None and feedback.attributes["labile.cited"] == 1
    assert len(spans(exporter, "labile.consolidate")) == 1
    (forget,) = spans(exporter, "labile.forget")
    assert forget.attributes is not None
    assert forget.attributes["labile.forgotten.observations"] == 1
    assert len(memory.list(NS).items) == 1  # the wrapped calls did their work
    for span in exporter.get_finished_spans():
        assert SECRET not in attribute_text(span), span.name
        assert "labile.namespace" not in (span.attributes or {})


def test_llm_calls_are_child_spans_with_model_and_tokens(
        memory: Memory, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    instrument(memory, tracer_provider=provider)
    memory.add(observations(), namespace=NS)
    answer = memory.answer(f"Where did I fly, {SECRET}?", namespace=NS)
    (outer,) = spans(exporter, "labile.answer")
    (llm,) = spans(exporter, "labile.llm")
    assert llm.parent is not None and outer.context is not None
    assert llm.parent.span_id == outer.context.span_id
    assert llm.attributes is not None and outer.attributes is not None
    assert llm.attributes["gen_ai.request.model"] == "scripted"
    assert llm.attributes["labile.llm.operation"] == "answer"
    used = answer.usage["answer"]
    assert llm.attributes["gen_ai.usage.input_tokens"] == used["prompt_tokens"] > 0
    assert llm.attributes["gen_ai.usage.output_tokens"] == used["completion_tokens"] > 0
    assert outer.attributes["labile.cited"] == 1
    assert outer.attributes["labile.llm.prompt_tokens"] == used["prompt_tokens"]
    assert llm.end_time is not None and llm.start_time is not None
    assert llm.start_time <= llm.end_time
    assert SECRET not in attribute_text(llm) + attribute_text(outer)


def test_a_failing_call_is_an_error_span_without_its_message(
        memory: Memory, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    instrument(memory, tracer_provider=provider)
    with pytest.raises(InputError):
        memory.search(SECRET, namespace=NS, k=0)
    (span,) = spans(exporter, "labile.search")
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is None
    assert span.attributes is not None and span.attributes["error.type"] == "InputError"
    assert span.events == ()  # no exception event: its message may quote the input


def test_record_content_opts_into_text_ids_and_exceptions(
        memory: Memory, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    instrument(memory, tracer_provider=provider, record_content=True)
    memory.add(observations(), namespace=NS)
    memory.search(f"fly {SECRET}", namespace=NS)
    with pytest.raises(InputError):
        memory.search("x", namespace=NS, k=0)
    add, = spans(exporter, "labile.add")
    ok, failed = spans(exporter, "labile.search")
    assert add.attributes is not None and ok.attributes is not None
    assert add.attributes["labile.namespace"] == NS
    assert list(add.attributes["labile.observation_ids"]) == ["t0", "t1"]  # type: ignore[arg-type]
    assert ok.attributes["labile.query"] == f"fly {SECRET}"
    assert [e.name for e in failed.events] == ["exception"]


def test_instrumenting_twice_is_refused(memory: Memory, provider: TracerProvider) -> None:
    first = instrument(memory, tracer_provider=provider)
    with pytest.raises(InputError, match="already instrumented"):
        instrument(memory, tracer_provider=provider)
    first.uninstrument()
    instrument(memory, tracer_provider=provider).uninstrument()  # after uninstrument: fine


def test_uninstrument_restores_the_memory(
        memory: Memory, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    with instrument(memory, tracer_provider=provider):
        memory.add(observations(), namespace=NS)
    memory.search("holiday", namespace=NS)
    memory.answer("holiday?", namespace=NS)
    assert [s.name for s in exporter.get_finished_spans()] == ["labile.add"]
    assert "search" not in vars(memory) and "record" not in vars(memory.usage)


def test_async_memory_calls_are_traced(
        memory: Memory, provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    instrument(memory, tracer_provider=provider)

    async def run() -> None:
        amem = AsyncMemory(memory)
        await amem.add(observations(), namespace=NS)
        await amem.search("holiday", namespace=NS)
        await amem.aclose()

    asyncio.run(run())
    assert {s.name for s in exporter.get_finished_spans()} == {"labile.add", "labile.search"}
