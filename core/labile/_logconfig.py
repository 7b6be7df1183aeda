"""Logging: quiet by default for the library, console or JSON lines for the CLI.

The library never writes to stdout or stderr by itself. Importing ``labile``
points structlog at the standard `logging` module (unless the application has
configured structlog already): every event goes to a stdlib logger under the
``labile`` name (``labile_lancedb._engine`` logs as ``labile.lancedb._engine``),
which carries a `logging.NullHandler`, so an application that configures
nothing sees nothing, and one that calls `logging.basicConfig` sees the events
with their key-value context. The CLI (`configure`) renders to stderr instead.
Tracebacks are rendered without local variables: they can hold API keys and prompts.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Final

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


def configure_library() -> None:
    """Route structlog to stdlib `logging` under ``labile…`` names, silent until configured.

    Does nothing to structlog when the application configured it already.
    """
    logging.getLogger("labile").addHandler(logging.NullHandler())
    if structlog.is_configured():
        return
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.filter_by_level,
            structlog.processors.format_exc_info,
            _to_log_call,
        ],
        wrapper_class=structlog.stdlib.BoundLogger,
        logger_factory=_stdlib_logger,
        cache_logger_on_first_use=False,
    )


def check_level(level: str) -> str:
    """``level`` lower-cased if it names a logging level.

    Raises:
        ValueError: naming the allowed levels.
    """
    if level.lower() not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LEVELS)}")
    return level.lower()


def configure(*, json: bool = False, level: str = "warning") -> None:
    """Configure structlog for a CLI run: events at ``level`` and above, on stderr."""
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
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
    structlog.configure(
        processors=shared + tail,
        wrapper_class=structlog.make_filtering_bound_logger(
            getattr(logging, check_level(level).upper())
        ),
        # Resolve sys.stderr at each logger creation, not once: it may be swapped.
        logger_factory=lambda *_: structlog.WriteLogger(sys.stderr),
        cache_logger_on_first_use=False,
    )


def _has_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True
