"""A logging filter that masks API keys in litellm's own log records.

litellm logs through stdlib loggers of its own (``LiteLLM``, ``LiteLLM Router``,
``LiteLLM Proxy``), and at debug level it writes request details and provider
error bodies verbatim; a provider that echoes the key it was sent back in an
error would put the key in the log. labile's own records are redacted where
they are built; these are not ours, so they are cleaned on the way through:
the formatted message, and the traceback text when one is attached.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Final

from labile_llm.retry import known_secrets, redact

#: The loggers litellm writes to.
LITELLM_LOGGERS: Final = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")


class RedactingFilter(logging.Filter):
    """Masks every known key (the usual provider variables and every
    ``api_key_env`` a client registered) in a record before any handler sees it.

    It never drops a record; it rewrites ``msg``/``args`` and pre-formats the
    traceback text, so the handlers' formatters print the masked copy.
    """

    def __init__(self) -> None:
        super().__init__()
        self._env_names: set[str] = set()
        self._lock = threading.Lock()

    def watch(self, env_names: Iterable[str | None]) -> None:
        """Also mask the values of these environment variables (read at log time)."""
        with self._lock:
            self._env_names.update(n for n in env_names if n)

    def filter(self, record: logging.LogRecord) -> bool:
        with self._lock:
            secrets = known_secrets(sorted(self._env_names))
        message = record.getMessage()
        record.msg, record.args = redact(message, secrets), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, secrets)
        return True


#: The one filter installed on litellm's loggers (and their handlers).
FILTER: Final = RedactingFilter()


def install(env_names: Iterable[str | None] = ()) -> None:
    """Put `FILTER` on litellm's loggers and on every handler they have now.

    The handlers matter for records of child loggers (``LiteLLM.x``), which a
    logger's own filter never sees. Idempotent.
    """
    FILTER.watch(env_names)
    for name in LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        for target in (logger, *logger.handlers):
            if FILTER not in target.filters:
                target.addFilter(FILTER)
