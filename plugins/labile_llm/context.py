"""Prompt context from a search: dated evidence within a token budget.

`render_context` is what the default answerer (``llm.answerer``) shows its
model. It is public so that an application bringing its own LLM gets the
same evidence block without rebuilding it::

    result = memory.search("Where does Maya live?", namespace="maya")
    context = render_context(result.hits, budget_tokens=1500, style="markdown")

Presentation, not mechanism: it lives with the LLM machinery, not in the
kernel, and reads only the records (`labile.Hit`, `labile.Node`).

Selection is by relevance: hits are taken in rank order and any that no
longer fits the budget is skipped (a later, shorter one may still fit);
a node met twice is shown once. The chosen entries are then ordered newest
first (undated last, ties in rank order), so the latest state of a changing
fact leads, and numbered from 1. If even the best hit alone does not fit,
its text is cut to fit, ending in "…". The rendered text, measured with the
caller's token counter, never exceeds the budget.

Three styles:

``"lines"``
    ``[1] (2023-05-08 13:56 UTC) text``: compact, the date being the node's
    time span. This is the answerer's format, byte for byte, so changing it
    changes benchmark figures; a superseded node gets
    ``[superseded 2023-06-01]`` before its text.
``"markdown"``
    A numbered list whose dates are labelled: ``said`` (when it was said,
    from the node's ``said_at``), ``about`` (the time the memory talks
    about, when it differs) or ``dated`` (a node that does not say which);
    then the text and the source observation ids.
``"json"``
    A JSON array, one object per entry: ``n``, ``id``, ``text``, ``said``,
    ``about`` (``[start, end]``), ``status`` (``"current"`` or
    ``"superseded"``), ``valid_to``, ``superseded_by``, ``sources``.

A node is *superseded* when its ``attrs["valid_to"]`` holds an ISO-8601
time (the truth-maintenance contract; ``attrs["superseded_by"]`` lists the
ids that replaced it); a node without ``valid_to`` is current.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal, get_args

import attrs

from labile.plugin import Hit, InputError, Node
from labile_llm.tokens import TokenCounter, estimate_tokens

__all__ = [
    "ContextStyle",
    "PromptContext",
    "TokenCounter",
    "estimate_tokens",
    "evidence_line",
    "render_context",
]

ContextStyle = Literal["lines", "markdown", "json"]
STYLES: Final = get_args(ContextStyle)

_SPACES: Final = re.compile(r"\s+")
#: The most tokens a context may be asked for (a budget is a prompt's share).
_MAX_BUDGET: Final = 10_000_000


@attrs.frozen(kw_only=True)
class PromptContext:
    """Evidence ready to paste into a prompt.

    Attributes:
        text: The rendered evidence (empty when there was nothing to show).
        ids: The node id of each entry in order: entry ``n`` is ``ids[n - 1]``.
        style: The style it was rendered in.
        tokens: ``text``'s size by the counter the budget was measured with.
    """

    text: str
    ids: tuple[str, ...]
    style: str
    tokens: int

    def __str__(self) -> str:
        return self.text


# -- dates and status ------------------------------------------------------------


def _stamp(ts: datetime) -> str:
    return f"{ts.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def _span(node: Node) -> str:
    if node.time_start is None:
        return "undated"
    if node.time_end is not None and node.time_end != node.time_start:
        return f"{_stamp(node.time_start)} to {_stamp(node.time_end)}"
    return _stamp(node.time_start)


def _attr_time(node: Node, name: str) -> datetime | None:
    """``node.attrs[name]`` as an aware datetime, or ``None`` if absent or unreadable."""
    raw = node.attrs.get(name)
    if isinstance(raw, datetime):
        parsed = raw
    elif isinstance(raw, str) and raw.strip():
        try:
            parsed = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _body(node: Node, body: str | None) -> str:
    text = body if body is not None else (node.content or node.description)
    return _SPACES.sub(" ", text).strip()


# -- one entry per style ---------------------------------------------------------


def evidence_line(index: int, node: Node, body: str | None = None) -> str:
    """One ``"lines"`` entry: ``[index] (YYYY-MM-DD HH:MM UTC) text`` (whitespace collapsed).

    ``body`` replaces the node's text (``content``, else ``description``).
    """
    valid_to = node.valid_to
    mark = f"[superseded {valid_to.astimezone(UTC):%Y-%m-%d}] " if valid_to else ""
    return f"[{index}] ({_span(node)}) {mark}{_body(node, body)}"


def _labelled_dates(node: Node) -> list[str]:
    said = _attr_time(node, "said_at")
    about = None if node.time_start is None else _span(node)
    labels: list[str] = []
    if said is not None:
        labels.append(f"said {_stamp(said)}")
        if about is not None and about != _stamp(said):
            labels.append(f"about {about}")
    elif about is not None:
        labels.append(f"dated {about}")
    return labels or ["undated"]


def _markdown_entry(index: int, node: Node, body: str | None = None) -> str:
    head = ", ".join(_labelled_dates(node))
    valid_to = node.valid_to
    if valid_to is not None:
        head += f"; superseded {_stamp(valid_to)}"
    line = f"{index}. ({head}) {_body(node, body)}"
    if node.sources:
        line += " — sources: " + ", ".join(node.sources)
    return line


def _json_entry(index: int, node: Node, body: str | None = None) -> str:
    said = _attr_time(node, "said_at")
    valid_to = node.valid_to
    about = None
    if node.time_start is not None:
        end = node.time_end or node.time_start
        about = [node.time_start.astimezone(UTC).isoformat(), end.astimezone(UTC).isoformat()]
    entry: dict[str, Any] = {
        "n": index,
        "id": node.id,
        "text": _body(node, body),
        "said": said.astimezone(UTC).isoformat() if said else None,
        "about": about,
        "status": "superseded" if valid_to else "current",
        "valid_to": valid_to.astimezone(UTC).isoformat() if valid_to else None,
        "superseded_by": list(node.superseded_by),
        "sources": list(node.sources),
    }
    return json.dumps(entry, ensure_ascii=False)


_ENTRY: Final[dict[str, Callable[[int, Node, str | None], str]]] = {
    "lines": evidence_line, "markdown": _markdown_entry, "json": _json_entry,
}


def _join(style: str, entries: Sequence[str]) -> str:
    if style == "json":
        return "[\n" + ",\n".join(entries) + "\n]" if entries else "[]"
    return "\n".join(entries)


# -- selection within the budget ---------------------------------------------------


def _truncate(entry: Callable[[int, Node, str | None], str], index: int, node: Node,
              budget: int, count: TokenCounter) -> str | None:
    """The longest prefix of the node's text (plus "…") whose entry fits ``budget``."""
    text = _body(node, None)
    if count(entry(index, node, "…")) > budget:
        return None
    lo, hi = 0, len(text)
    while lo < hi:  # largest n with count(entry(text[:n] + "…")) <= budget
        mid = (lo + hi + 1) // 2
        if count(entry(index, node, text[:mid] + "…")) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "…"


def render_context(
    hits: Sequence[Hit],
    *,
    budget_tokens: int = 2000,
    style: str = "lines",
    count_tokens: TokenCounter | None = None,
) -> PromptContext:
    """Numbered, dated evidence from ``hits`` within ``budget_tokens`` (see the module doc).

    Args:
        hits: Retrieval hits, best first (a search's ``result.hits``).
        budget_tokens: The most tokens the rendered text may take (>= 1).
        style: ``"lines"``, ``"markdown"`` or ``"json"``.
        count_tokens: How to count tokens; default `estimate_tokens`. Pass the
            reading model's tokenizer for an exact fit.

    Raises:
        InputError: ``budget_tokens`` is not an integer in [1, 10,000,000], or
            ``style`` is not one of the three.
    """
    if (isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int)
            or not 1 <= budget_tokens <= _MAX_BUDGET):
        raise InputError(f"budget_tokens must be an integer from 1 to {_MAX_BUDGET}, "
                         f"got {budget_tokens!r}")
    if style not in STYLES:
        raise InputError(f"style must be one of {', '.join(map(repr, STYLES))}, got {style!r}")
    count = count_tokens or estimate_tokens
    entry = _ENTRY[style]
    nodes: list[Node] = []
    seen: set[str] = set()
    for hit in hits:
        if hit.node.id not in seen:
            seen.add(hit.node.id)
            nodes.append(hit.node)
    label = max(len(nodes), 1)  # measure with the widest number
    chosen: list[tuple[int, Node, str | None]] = []  # (rank, node, cut text or None)
    used = count(_join(style, [])) if style == "json" else 0  # the frame around the entries
    for rank, node in enumerate(nodes):
        cost = count(entry(label, node, None)) + 1  # + the separator
        if used + cost <= budget_tokens:
            chosen.append((rank, node, None))
            used += cost
    if not chosen and nodes:
        body = _truncate(entry, label, nodes[0], budget_tokens - used, count)
        if body is not None:
            chosen.append((0, nodes[0], body))

    def order(item: tuple[int, Node, str | None]) -> tuple[int, float, int]:
        rank, node, _ = item
        if node.time_start is None:
            return (1, 0.0, rank)
        return (0, -node.time_start.timestamp(), rank)

    while True:
        ordered = sorted(chosen, key=order)
        text = _join(style, [entry(i, node, body)
                             for i, (_, node, body) in enumerate(ordered, start=1)])
        tokens = count(text)
        if tokens <= budget_tokens or not chosen:
            if tokens > budget_tokens:  # even the empty frame does not fit
                text, tokens = "", count("")
            return PromptContext(text=text, ids=tuple(node.id for _, node, _ in ordered),
                                 style=style, tokens=tokens)
        chosen.pop()  # drop the least relevant entry and measure again
