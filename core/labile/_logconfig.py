"""Logging setup for the command line (the library itself never configures logging).

Console rendering on a terminal, JSON lines with ``--log-json``. Tracebacks are
rendered without local variables: they can hold API keys and prompts.
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure(*, json: bool = False, level: str = "warning") -> None:
    """Configure structlog for a CLI run."""
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
            getattr(logging, level.upper(), logging.WARNING)
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
