"""Logging: quiet by default for the library, console or JSON lines for the CLI.

The library never writes to stdout or stderr by itself, and never configures
structlog for the process. Every module logs through `get_logger`: a structlog
logger with its own processors that hands each event to a stdlib logger under
the ``labile`` name (``labile_lancedb._engine`` logs as ``labile.lancedb._engine``),
which carries a `logging.NullHandler`, so an application that configures
nothing sees nothing, and one that calls `logging.basicConfig` sees the events
with their key-value context. The CLI (`configure`) adds a stderr handler to
the ``labile`` logger that renders with structlog's console or JSON renderer.
Tracebacks are rendered without local variables: they can hold API keys and prompts.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Final, cast

import structlog

#: The level names ``--log-level`` accepts.
LEVELS: Final = ("debug", "info", "warning", "error", "critical")


def stdlib_name(module: str | None) -> str:
    """The stdlib logger name of a labile module: always under ``labile``."""
    name = module or "labile"
    if name == "labile" or name.startswith("labile."):
        return name
    return "labile." + name.removeprefix("labile_")


def _stdlib_logger(*args: Any) -> logging.Logger:
    return logging.getLogger(stdlib_name(args[0] if args else None))


def _to_log_call(_logger: Any, _method: str, event: Any) -> dict[str, Any]:
    # "event key=value …" as the message; the context also rides on the record.
    name = str(event.pop("event", ""))
    context = " ".join(f"{k}={v!r}" for k, v in event.items())
    return {"msg": f"{name} {context}".rstrip(), "extra": {"labile": {"event": name, **event}}}


#: What every labile logger does to an event before the stdlib logger gets it.
_LIBRARY_PROCESSORS: Final[list[structlog.typing.Processor]] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.filter_by_level,
    structlog.processors.format_exc_info,
    _to_log_call,
]


def get_logger(module: str | None = None) -> structlog.stdlib.BoundLogger:
    """A structlog logger that writes to the stdlib logger `stdlib_name` ``(module)``.

    It carries its own processors, so it works the same whether or not the
    application configured structlog, and labile never configures structlog for
    the process: importing ``labile`` changes no global state beyond adding a
    `logging.NullHandler` to the ``labile`` logger.
    """
    logger = structlog.wrap_logger(
        logging.getLogger(stdlib_name(module)),
        processors=_LIBRARY_PROCESSORS,
        wrapper_class=structlog.stdlib.BoundLogger,
    )
    return cast(structlog.stdlib.BoundLogger, logger)


def quiet_by_default() -> None:
    """Give the ``labile`` logger a `logging.NullHandler`: silent until logging is configured."""
    logging.getLogger("labile").addHandler(logging.NullHandler())


def check_level(level: str) -> str:
    """``level`` lower-cased if it names a logging level.

    Raises:
        ValueError: naming the allowed levels.
    """
    if level.lower() not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LEVELS)}")
    return level.lower()


class _Renderer(logging.Formatter):
    """Renders a labile record (its ``labile`` event dict) with structlog's renderers."""

    def __init__(self, processors: list[structlog.typing.Processor]) -> None:
        super().__init__()
        self._processors = processors

    def format(self, record: logging.LogRecord) -> str:
        event: dict[str, Any] = dict(getattr(record, "labile", None) or {"event": record.msg})
        event["level"] = record.levelname.lower()
        event["logger"] = record.name
        if record.exc_info:
            event["exc_info"] = record.exc_info
        result: Any = event
        for processor in self._processors:
            result = processor(None, record.levelname.lower(), result)
        return str(result)


#: The handler `configure` installed, so that a second call replaces it.
_CLI_HANDLER: logging.Handler | None = None


def configure(*, json: bool = False, level: str = "warning") -> None:
    """For a CLI run: labile's events at ``level`` and above on stderr, console or JSON lines.

    Configures the stdlib ``labile`` logger (a handler on stderr, resolved at each
    write since tests swap it), not structlog: the library's loggers stay what
    `get_logger` made them.
    """
    global _CLI_HANDLER
    shared: list[structlog.typing.Processor] = [
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
    tail: list[structlog.typing.Processor]
    if json:
        tail = [
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            ),
            structlog.processors.JSONRenderer(),
        ]
    else:
        tail = [
            structlog.dev.ConsoleRenderer(
                colors=sys.stderr.isatty(),
                exception_formatter=structlog.dev.RichTracebackFormatter(show_locals=False)
                if _has_rich() else structlog.dev.plain_traceback,
            )
        ]
    handler = _StderrHandler()
    handler.setFormatter(_Renderer(shared + tail))
    root = logging.getLogger("labile")
    if _CLI_HANDLER is not None:
        root.removeHandler(_CLI_HANDLER)
    root.addHandler(handler)
    root.setLevel(getattr(logging, check_level(level).upper()))
    _CLI_HANDLER = handler


def unconfigure() -> None:
    """Undo `configure` (tests run many CLI calls in one process)."""
    global _CLI_HANDLER
    root = logging.getLogger("labile")
    if _CLI_HANDLER is not None:
        root.removeHandler(_CLI_HANDLER)
        _CLI_HANDLER = None
    root.setLevel(logging.NOTSET)


class _StderrHandler(logging.Handler):
    """Writes each record to whatever ``sys.stderr`` is at the time of the write."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


def _has_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True
