"""Checks of what a caller hands to `Memory`, run before anything is touched.

Each check raises `InputError` naming the argument, what it got and what is
allowed, so a wrong type or value never escapes as a raw ``TypeError`` or
``OverflowError`` from deep inside a store, and never reaches the store at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from labile._errors import InputError

#: The character the stores join a namespace and an id with (``namespace + SEP + id``):
#: reserved, so a namespace or an id holding it could alias another record's key.
RESERVED_SEPARATOR = "\x1f"

#: Largest ``k`` a search accepts: far above any useful context, far below what
#: overflows the int64 and array sizes the stores compute with.
MAX_K = 100_000


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_int(name: str, value: object, *, low: int, high: int) -> int:
    """``value`` if it is an ``int`` (not a bool) within ``low``..``high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name} must be an integer from {low} to {high}, "
                         f"got {type(value).__name__} {_shown(value)}")
    if not low <= value <= high:
        raise InputError(f"{name} must be an integer from {low} to {high}, got {value}")
    return value


def check_k(value: object) -> int:
    """A search's ``k``: an integer from 1 to `MAX_K`."""
    return check_int("k", value, low=1, high=MAX_K)


def check_text(name: str, value: object, *, empty: bool = False) -> str:
    """``value`` if it is a string UTF-8 can encode (no lone surrogates)
    and, unless ``empty``, not blank."""
    if not isinstance(value, str):
        raise InputError(f"{name} must be a string, got {type(value).__name__} {_shown(value)}")
    if not empty and not value.strip():
        raise InputError(f"{name} must be a non-empty string, got {_shown(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{name} is not valid Unicode text: it holds a lone surrogate "
                         f"at position {exc.start}; only encodable characters are "
                         "allowed") from None
    return value


def check_name(name: str, value: object) -> str:
    """A namespace or record id: a non-blank encodable string without `RESERVED_SEPARATOR`."""
    text = check_text(name, value)
    if RESERVED_SEPARATOR in text:
        raise InputError(f"{name} {_shown(text)} contains the unit separator '\\x1f', which "
                         "is reserved (stores join namespaces and ids with it); any other "
                         "character is allowed")
    return text


def check_namespace(value: object) -> str:
    """A namespace: see `check_name`."""
    return check_name("namespace", value)


def check_node_filter(name: str, value: object) -> None:
    """``None`` or a `labile.NodeFilter` (not a string, a dict or a callable)."""
    from labile._model import NodeFilter

    if value is not None and not isinstance(value, NodeFilter):
        raise InputError(f"{name} must be a NodeFilter (e.g. NodeFilter(kinds={{'fact'}}, "
                         f"visible=True)) or None, got {type(value).__name__} {_shown(value)}")


def check_optional_text(name: str, value: object) -> str | None:
    """``None`` or a (possibly empty) encodable string."""
    return None if value is None else check_text(name, value, empty=True)


def check_bool(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False``."""
    if not isinstance(value, bool):
        raise InputError(f"{name} must be True or False, got {_shown(value)}")
    return value


def check_when(name: str, value: object) -> datetime:
    """A timezone-aware ``datetime`` whose UTC value lies in years 1 to 9999.

    The stores keep times in UTC; one outside that range is representable
    here (a late year at a negative offset) but not once converted, and would
    make every later read of the namespace fail.
    """
    if not isinstance(value, datetime):
        raise InputError(f"{name} must be a timezone-aware datetime, got "
                         f"{type(value).__name__} {_shown(value)}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InputError(f"{name} must be timezone-aware, got naive {value.isoformat()}; "
                         "attach a tzinfo (e.g. datetime(..., tzinfo=timezone.utc))")
    try:
        value.astimezone(UTC)
    except OverflowError:
        raise InputError(f"{name} {value.isoformat()} is outside years 1 to 9999 in UTC; "
                         "only times whose UTC value lies in that range are allowed") from None
    return value


def check_question(name: str, text: object, k: object, as_of: object) -> None:
    """What a search or an answer is asked: a non-blank ``text`` (called ``name`` in the
    error), a valid ``k``, and ``as_of`` either ``None`` or a valid time."""
    check_text(name, text)
    check_k(k)
    if as_of is not None:
        check_when("as_of", as_of)


def check_ids(name: str, value: object) -> list[str]:
    """A list (or other non-string iterable) of non-empty encodable strings."""
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InputError(f"{name} must be a list of strings, got {_shown(value)}")
    out = list(value)
    for i, item in enumerate(out):
        if not isinstance(item, str) or not item.strip():
            raise InputError(f"{name} must be non-empty strings; item {i} is {_shown(item)}")
        check_text(f"{name}[{i}]", item)
    return out


def check_observation(index: int, obs: Any, namespace: str | None = None) -> None:
    """One observation of an ``add`` batch: id, text, speaker, session, timestamp,
    metadata that JSON can store with a string ``caption`` if any, and, when
    ``namespace`` is given, an ``obs.namespace`` that is empty or equal to it
    (a record read from one namespace is not silently re-filed in another)."""
    where = f"observations[{index}] ({_shown(getattr(obs, 'id', '?'))})"
    check_name(f"{where}.id", obs.id)
    if namespace is not None and obs.namespace and obs.namespace != namespace:
        raise InputError(
            f"{where}.namespace is {obs.namespace!r} but the batch is added to namespace "
            f"{namespace!r}; leave Observation.namespace empty (the memory sets it) or equal "
            "to add()'s namespace, e.g. attrs.evolve(obs, namespace='') to copy it across")
    check_text(f"{where}.text", obs.text, empty=True)
    check_optional_text(f"{where}.speaker", obs.speaker)
    check_optional_text(f"{where}.session", obs.session)
    check_when(f"{where}.timestamp", obs.timestamp)
    caption = obs.metadata.get("caption")
    if caption is not None:
        check_text(f"{where}.metadata['caption']", caption, empty=True)
    try:
        json.dumps(obs.metadata, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise InputError(f"{where}.metadata must hold only JSON values (strings, numbers, "
                         f"booleans, null, lists, string-keyed tables): {exc}") from None
