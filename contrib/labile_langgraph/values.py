"""Reading LangGraph item values: the text labile remembers, the speaker, filters.

Pure functions over JSON-like dicts, tested without a graph.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from labile import InputError

__all__ = ["TEXT_FIELDS", "item_text", "matches_filter", "speaker_of"]

#: Fields that hold an item's text, in the order they are looked for.
TEXT_FIELDS: Final = ("content", "text", "memory", "data")
_COMPARE: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "$eq": operator.eq, "$ne": operator.ne, "$gt": operator.gt,
    "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le,
}


def _field(value: Mapping[str, Any], path: str) -> Any:
    """``value``'s field at the dotted ``path`` (``"a.b"``), or ``None``."""
    if "[" in path or "]" in path:
        raise InputError(f"index path {path!r} is not supported: use field names joined by "
                         "periods, such as 'memory' or 'profile.summary'")
    current: Any = value
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def item_text(value: Mapping[str, Any], index: list[str] | Literal[False] | None = None) -> str:
    """The text labile builds memory from for an item's ``value``.

    With ``index`` (a list of field paths, LangGraph's ``put(index=[...])``)
    those fields' texts joined by newlines; otherwise the first string field
    of `TEXT_FIELDS`, else every field as ``name: value`` on its own line.

    Raises:
        InputError: the value gives no text (labile has nothing to remember),
            or an index path uses LangGraph's ``[...]`` syntax.
    """
    if isinstance(index, list):
        text = "\n".join(t for t in (_as_text(_field(value, p)) for p in index) if t.strip())
    else:
        text = next((value[f] for f in TEXT_FIELDS if isinstance(value.get(f), str)
                     and value[f].strip()), "")
        if not text:
            text = "\n".join(f"{k}: {_as_text(v)}" for k, v in value.items()
                             if _as_text(v).strip())
    if not text.strip():
        raise InputError("the item's value has no text to remember: give it a 'content' "
                         "field, or name the fields that hold its text with index=[...]")
    return text


def speaker_of(value: Mapping[str, Any]) -> str | None:
    """Who said the item: its ``speaker`` or ``role`` field, if a string."""
    for field in ("speaker", "role"):
        if isinstance(value.get(field), str) and value[field].strip():
            return str(value[field])
    return None


def matches_filter(value: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """Whether ``value`` passes LangGraph's search ``filter``.

    Each key is a field path; its condition is a value (equality) or a dict of
    operators (``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``). A
    comparison between incomparable types does not match.

    Raises:
        InputError: an operator outside those six.
    """
    for path, condition in (where or {}).items():
        actual = _field(value, path)
        if isinstance(condition, Mapping) and condition and all(
                str(k).startswith("$") for k in condition):
            for op, expected in condition.items():
                compare = _COMPARE.get(op)
                if compare is None:
                    raise InputError(f"unknown filter operator {op!r}: use one of "
                                     f"{', '.join(_COMPARE)}")
                try:
                    if actual is None or not compare(actual, expected):
                        return False
                except TypeError:
                    return False
        elif actual != condition:
            return False
    return True
