"""`ServePolicy`: what one server lets its clients touch, and how much they may send.

The server is bound to its namespaces when it starts; a tool call names one of
them (or none, when there is only one) and can never reach another. The size
limits apply on every transport, before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

import attrs

from labile import MAX_OBSERVATION_CHARS
from labile.plugin import InputError

#: A namespace a client may name: no spaces or path-like characters, so it can
#: never be mistaken for something else in a log line or a store.
NAMESPACE_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}")


def _as_tuple(value: Iterable[str]) -> tuple[str, ...]:
    # A named converter: mypy reads the `tuple` builtin as one of unknown items.
    return tuple(value)


def _namespaces(value: tuple[str, ...]) -> tuple[str, ...]:
    bad = [ns for ns in value if not NAMESPACE_PATTERN.fullmatch(ns)]
    if not value or bad:
        raise ValueError(
            f"bad namespace(s) {bad!r}: serve at least one, each 1-128 characters of "
            "letters, digits and _ . : @ - (starting with a letter or digit)"
        )
    return value


@attrs.frozen(kw_only=True)
class ServePolicy:
    """The limits of one server.

    Attributes:
        namespaces: The namespaces served; the first is the default when it is
            the only one. Every tool call is checked against this list.
        allow_purge: Whether the purge tool exists at all.
        max_text_chars: Longest text accepted anywhere in a call's arguments (a
            message's content, role, id or session, a query, an id).
        max_messages: Most messages in one add call.
        max_k: Most hits one search may ask for.
    """

    namespaces: tuple[str, ...] = attrs.field(converter=_as_tuple, validator=lambda _i, _a, v:
                                              _namespaces(v))
    allow_purge: bool = False
    max_text_chars: int = attrs.field(default=MAX_OBSERVATION_CHARS,
                                      validator=attrs.validators.ge(1))
    max_messages: int = attrs.field(default=500, validator=attrs.validators.ge(1))
    max_k: int = attrs.field(default=50, validator=attrs.validators.ge(1))

    def namespace(self, requested: str | None) -> str:
        """The namespace a call may use: ``requested``, or the only one served.

        Raises:
            InputError: ``requested`` is not served here, or is missing while
                several are.
        """
        if requested is None or requested == "":
            if len(self.namespaces) == 1:
                return self.namespaces[0]
            raise InputError("this server serves several namespaces: name one with "
                             f"'namespace' (allowed: {', '.join(self.namespaces)})")
        if requested not in self.namespaces:
            raise InputError(f"namespace {requested!r} is not served here "
                             f"(allowed: {', '.join(self.namespaces)})")
        return requested

    def check_text(self, text: str, what: str) -> None:
        """Refuse ``text`` longer than `max_text_chars`, naming ``what`` it is."""
        self.check_length(len(text), what)

    def check_length(self, length: int, what: str) -> None:
        """Refuse a text of ``length`` characters above `max_text_chars`, naming ``what``
        it is (`labile_mcp.strict` measures every text of a call this way)."""
        if length > self.max_text_chars:
            raise InputError(f"{what} has {length:,} characters; this server accepts at "
                             f"most {self.max_text_chars:,} in any text (--max-text-chars)")

    def describe_namespaces(self) -> str:
        """One sentence for tool descriptions: which namespaces exist and the default."""
        if len(self.namespaces) == 1:
            return (f"Optional: this server serves only the namespace {self.namespaces[0]!r}, "
                    "which is the default.")
        return f"Required: one of {', '.join(repr(n) for n in self.namespaces)}."
