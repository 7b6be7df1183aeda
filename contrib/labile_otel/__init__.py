"""OpenTelemetry traces of a labile memory (``labile[otel]``).

``instrument(memory)`` wraps one open `labile.Memory`: every ``add``,
``search``, ``answer``, ``feedback``, ``consolidate``, ``repair``,
``forget`` and ``purge`` becomes a span, and every LLM call the pipeline
makes becomes a child span with its operation, model name and token counts.
Calls through a `labile.AsyncMemory` or the MCP server over the same memory
are traced too, since they reach the same object.

* `labile_otel.instrument` holds the wrapper;
* `labile_otel.attributes` says what each span records.

It is a wrapper, not a pipeline component, so the kernel never imports
opentelemetry and a memory that is not instrumented pays nothing. Span
attributes carry counts, sizes and names, never text (queries, messages,
answers), namespaces, ids or keys, unless ``record_content=True``.
"""

from __future__ import annotations

from labile_otel.instrument import TRACER_NAME, Instrumentation, instrument

__all__ = ["TRACER_NAME", "Instrumentation", "instrument"]
