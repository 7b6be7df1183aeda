"""Logging: the library's loggers, quiet until the application configures logging.

The library never writes to stdout or stderr by itself, and never configures
structlog for the process. Every module logs through `get_logger`: a structlog
logger with its own processors that hands each event to a stdlib logger under
the ``labile`` name (``labile_lancedb._engine`` logs as ``labile.lancedb._engine``),
which carries a `logging.NullHandler`, so an application that configures
nothing sees nothing, and one that calls `logging.basicConfig` sees the events
with their key-value context. Each record also carries the event and its
context as a dict, its ``labile`` attribute, for a handler that renders them
(the command line's, `labile_cli.logs`, renders with structlog's console or
JSON renderer).
"""

from __future__ import annotations

import logging
from typing import Any, Final, cast

import structlog


def stdlib_name(module: str | None) -> str:
    """The stdlib logger name of a labile module: always under ``labile``."""
    name = module or "labile"
    if name == "labile" or name.startswith("labile."):
        return name
    return "labile." + name.removeprefix("labile_")


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
