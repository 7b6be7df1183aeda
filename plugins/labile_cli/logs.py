"""The command line's logging: labile's events on stderr, as console lines or JSON lines.

The library never configures logging (see `labile.plugin.get_logger`): its
events go to the stdlib ``labile`` logger, which stays silent until an
application configures it. The shell is such an application: `configure` adds
a stderr handler to that logger that renders each record with structlog's
console or JSON renderer, from the event and its key-value context, which
every labile record carries as its ``labile`` attribute. Tracebacks are
rendered without local variables: they can hold API keys and prompts.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Final

import structlog

#: The level names ``--log-level`` accepts.
LEVELS: Final = ("debug", "info", "warning", "error", "critical")


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
    `labile.plugin.get_logger` made them.
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
