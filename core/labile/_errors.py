"""The exceptions labile raises.

Every error a user can trigger derives from `LabileError`, so a caller can
catch one type; the subclasses also derive from the matching builtin
(`LookupError`, `ValueError`, `ImportError`) so ordinary handlers still work.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class LabileError(Exception):
    """Base class of every error raised by labile."""


class UnknownComponentError(LabileError, LookupError):
    """A component name is not registered for its kind.

    The message suggests close matches and lists every registered name of that
    kind, so a typo in a config file is fixed from the error alone.
    """

    def __init__(self, kind: str, name: str, available: Iterable[str]) -> None:
        self.kind, self.name = kind, name
        self.available = sorted(available)
        close = difflib.get_close_matches(name, self.available, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        listing = ", ".join(self.available) if self.available else "none registered"
        super().__init__(f"unknown {kind} {name!r}{hint} (available: {listing})")


class DuplicateComponentError(LabileError, ValueError):
    """Two plugins registered the same name for the same kind."""

    def __init__(self, kind: str, name: str, plugin: str, existing_plugin: str) -> None:
        self.kind, self.name = kind, name
        self.plugin, self.existing_plugin = plugin, existing_plugin
        super().__init__(
            f"{kind} {name!r} from plugin {plugin!r} clashes with the one from plugin "
            f"{existing_plugin!r}"
        )


class ConfigError(LabileError, ValueError):
    """A configuration is invalid; the message names every bad field by path."""


class PluginLoadError(LabileError, ImportError):
    """A plugin could not be imported or registered."""


class MissingDependencyError(LabileError, ImportError):
    """An optional dependency of a component is not installed."""


class SchemaError(LabileError, ValueError):
    """A node kind or edge predicate is not registered, or a record is malformed."""


class InputError(LabileError, ValueError):
    """Input handed to the memory is invalid; nothing was written."""


class StoreError(LabileError):
    """The store cannot be opened or written as asked."""


class HistoryNotErasedWarning(UserWarning):
    """A removal (forget, purge) is committed, but erasing the store's history after it
    failed (a full disk, say): the removed rows stay in older versions until a later
    erase or ``labile repair`` finishes it."""


class LLMError(LabileError):
    """An LLM call failed for good (after the allowed retries)."""


class LLMOutputError(LLMError, ValueError):
    """An LLM answered, but its output was not valid for the requested schema.

    Callers treat this as fail-closed: nothing derived from the output is
    applied.
    """

    def __init__(self, message: str, *, raw: str | None = None) -> None:
        self.raw = raw
        super().__init__(message)
