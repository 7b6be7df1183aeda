"""`instrument`: spans around a `Memory`'s calls and its LLM calls.

The memory's public methods are replaced, on that one instance, by wrappers
that open a span named ``labile.<method>`` (the current span, so LLM calls
and anything the caller traces inside nest under it). LLM calls are seen
where the pipeline accounts for them: each `UsageMeter.record` the client
makes (one per call, with its tokens and latency) becomes a ``labile.llm``
span that starts ``latency_ms`` before the record and ends at it. No
component has to know about tracing, and a client brought by the
application is traced like a configured one.

Errors: a failing call ends its span with status ERROR and the attribute
``error.type`` (the exception's class name). The exception's message is not
recorded unless ``record_content=True``, because labile's messages may
quote the caller's input.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import time
from collections.abc import Callable, Iterable, Sized
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

from labile import InputError, Memory, MissingDependencyError, Observation
from labile.plugin import UsageMeter
from labile_otel import attributes as a

__all__ = ["TRACER_NAME", "Instrumentation", "instrument"]

#: The instrumentation scope's name (``tracer_provider.get_tracer(TRACER_NAME)``).
TRACER_NAME: Final = "labile"
INSTALL_HINT: Final = "pip install -e '.[otel]' (from a labile checkout)"

Attrs = dict[str, a.AttributeValue]
Before = Callable[[dict[str, Any], bool], Attrs]
After = Callable[[Any, bool], Attrs]


def _namespace(args: dict[str, Any], content: bool) -> Attrs:
    return {"labile.namespace": str(args["namespace"])} if content else {}


def _before_add(args: dict[str, Any], content: bool) -> Attrs:
    batch = args["observations"]
    if isinstance(batch, Iterable) and not isinstance(batch, str | bytes | Observation | Sized):
        batch = args["observations"] = list(batch)  # a generator is read once, here
    out = _namespace(args, content)
    if isinstance(batch, Sized):
        out["labile.observations"] = len(batch)
    return out


def _before_query(text_name: str) -> Before:
    def before(args: dict[str, Any], content: bool) -> Attrs:
        out = _namespace(args, content)
        out["labile.k"] = int(args["k"])
        out["labile.as_of_given"] = args["as_of"] is not None
        if "budget_tokens" in args:
            out["labile.budget_tokens"] = int(args["budget_tokens"])
        if content:
            out[f"labile.{text_name}"] = str(args[text_name])
        return out
    return before


def _before_feedback(args: dict[str, Any], content: bool) -> Attrs:
    out: Attrs = {"labile.cited": len(args["cited"]), "labile.answer_given":
                  args["answer"] is not None}
    if args["useful"] is not None:
        out["labile.useful"] = bool(args["useful"])
    result = args["result"]
    if content and hasattr(result, "query"):
        out["labile.namespace"] = str(result.query.namespace)
    return out


def _before_forget(args: dict[str, Any], content: bool) -> Attrs:
    out = _namespace(args, content)
    out["labile.observation_ids"] = len(args["observation_ids"])
    out["labile.erase"] = bool(args["erase"])
    return out


def _before_purge(args: dict[str, Any], content: bool) -> Attrs:
    out = _namespace(args, content)
    out["labile.erase"] = bool(args["erase"])
    return out


def _after_forget(counts: Any, _content: bool) -> Attrs:
    return {f"labile.forgotten.{key}": int(n) for key, n in dict(counts).items()
            if isinstance(n, int)}


def _nothing(_value: Any, _content: bool) -> Attrs:
    return {}


#: Method name -> (attributes from its arguments, attributes from its result).
_TRACED: Final[dict[str, tuple[Before, After]]] = {
    "add": (_before_add, a.add_result),
    "repair": (_namespace, a.add_result),
    "search": (_before_query("query"), a.search_result),
    "answer": (_before_query("question"), a.answer_result),
    "feedback": (_before_feedback, lambda reports, _c: a.outcome_counts(reports)),
    "consolidate": (_namespace, lambda reports, _c: a.outcome_counts(reports)),
    "forget": (_before_forget, _after_forget),
    "purge": (_before_purge, _nothing),
}


def _trace_api() -> Any:
    try:
        from opentelemetry import trace
    except ImportError as exc:
        raise MissingDependencyError(
            f"labile_otel needs opentelemetry-api: {INSTALL_HINT}") from exc
    return trace


def _labile_version() -> str:
    try:
        return version("labile")
    except PackageNotFoundError:
        return "0+unknown"


class Instrumentation:
    """The spans of one memory; `uninstrument` (or leaving a ``with`` block) removes them."""

    def __init__(self, memory: Memory, *, tracer_provider: Any = None,
                 record_content: bool = False) -> None:
        """Wrap ``memory``'s calls (see `instrument`)."""
        if any(name in vars(memory) for name in _TRACED):
            raise InputError("this memory is already instrumented (or its methods were "
                             "replaced): call uninstrument() on the first Instrumentation")
        trace = _trace_api()
        self._status = trace.Status, trace.StatusCode
        self.memory = memory
        self.record_content = record_content
        self.tracer = trace.get_tracer(TRACER_NAME, _labile_version(),
                                       tracer_provider=tracer_provider)
        self._meters: list[UsageMeter] = []
        for candidate in (memory.usage, getattr(memory.llm, "usage", None)):
            if isinstance(candidate, UsageMeter) and all(candidate is not m for m in self._meters):
                self._meters.append(candidate)
        for name, (before, after) in _TRACED.items():
            setattr(memory, name, self._wrap(name, getattr(memory, name), before, after))
        for meter in self._meters:
            setattr(meter, "record", self._wrap_record(meter.record))  # noqa: B010

    def uninstrument(self) -> None:
        """Give the memory and its meters their own methods back. Idempotent."""
        for name in _TRACED:
            self.memory.__dict__.pop(name, None)
        for meter in self._meters:
            meter.__dict__.pop("record", None)
        self._meters = []

    def __enter__(self) -> Instrumentation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstrument()

    # -- the wrappers -----------------------------------------------------------
    def _fail(self, span: Any, exc: BaseException) -> None:
        status, code = self._status
        span.set_attribute("error.type", type(exc).__name__)
        span.set_status(status(code.ERROR))
        if self.record_content:
            span.record_exception(exc)

    def _wrap(self, name: str, method: Callable[..., Any], before: Before,
              after: After) -> Callable[..., Any]:
        signature = inspect.signature(method)
        content = self.record_content

        @functools.wraps(method)
        def traced(*args: Any, **kwargs: Any) -> Any:
            with self.tracer.start_as_current_span(
                    f"labile.{name}", record_exception=False,
                    set_status_on_exception=False) as span:
                span.set_attribute("labile.preset", str(self.memory.config.preset or ""))
                try:
                    bound = signature.bind(*args, **kwargs)
                except TypeError as exc:
                    self._fail(span, exc)
                    raise
                bound.apply_defaults()
                # Odd arguments get no attributes: the call itself says what is wrong.
                with contextlib.suppress(KeyError, TypeError, ValueError):
                    span.set_attributes(before(bound.arguments, content))
                try:
                    value = method(*bound.args, **bound.kwargs)
                except BaseException as exc:
                    self._fail(span, exc)
                    raise
                # The call succeeded: reading its result for the span must not fail it.
                with contextlib.suppress(Exception):
                    span.set_attributes(after(value, content))
                return value

        return traced

    def _wrap_record(self, record: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(record)
        def traced(operation: str, **figures: Any) -> None:
            record(operation, **figures)
            end = time.time_ns()
            latency_ns = int(max(float(figures.get("latency_ms", 0.0)), 0.0) * 1e6)
            llm = self.memory.llm
            model = str(getattr(llm, "model", None) or getattr(llm, "name", "unknown"))
            span = self.tracer.start_span("labile.llm", start_time=end - latency_ns,
                                          attributes=a.llm_call(operation, model, figures),
                                          record_exception=False)
            if figures.get("failed"):
                status, code = self._status
                span.set_status(status(code.ERROR))
            span.end(end_time=end)

        return traced


def instrument(memory: Memory, *, tracer_provider: Any = None,
               record_content: bool = False) -> Instrumentation:
    """Trace ``memory``'s calls and LLM calls with OpenTelemetry.

    Args:
        memory: An open `Memory` (instrument it once).
        tracer_provider: Where the spans go; default the global provider
            (``opentelemetry.trace.set_tracer_provider``).
        record_content: Also record namespaces, queries, questions, answers,
            ids and exception messages. Off by default: they are user data.

    Returns:
        The `Instrumentation`; its `Instrumentation.uninstrument` removes it.

    Raises:
        MissingDependencyError: opentelemetry-api is not installed.
        InputError: ``memory`` is instrumented already.
    """
    return Instrumentation(memory, tracer_provider=tracer_provider,
                           record_content=record_content)
