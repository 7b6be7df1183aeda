"""What ``labile stats`` prints by default: `labile.Memory.stats` as lines a person reads.

``labile stats --json`` prints the same mapping as JSON; this module only
chooses words and order. Counts are what the store holds now (``add``
reports what each batch wrote, which is not the same thing: a later batch
can replace or remove what an earlier one wrote).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["stats_text"]


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def stats_text(stats: Mapping[str, Any], namespace: str | None) -> str:
    """``stats`` (as `labile.Memory.stats` returns it) as a few labelled lines.

    Only the fields a store reports are shown; an unknown store's extra
    scalar fields follow under their own names.
    """
    pipe = stats.get("pipeline", {})
    store = stats.get("store", {})
    lines = [f"pipeline:   {pipe.get('preset') or '(custom)'} (store {pipe.get('store')}, "
             f"embedder {pipe.get('embedder')}, extractor {pipe.get('extractor')})"]
    where = store.get("path")
    size = store.get("disk_bytes")
    lines.append("store:      " + ", ".join(
        part for part in (
            str(where) if where else str(store.get("store", "?")),
            _plural(store["namespaces"], "namespace") if "namespaces" in store else "",
            f"{_size(size)} on disk" if isinstance(size, int) else "",
        ) if part))
    scope = f"namespace {namespace!r}" if namespace is not None else "all namespaces"
    obs, nodes, visible, edges = (store.get(k) for k in
                                  ("observations", "nodes", "visible_nodes", "edges"))
    counts = []
    if isinstance(obs, int):
        counts.append(_plural(obs, "observation"))
    if isinstance(nodes, int):
        counts.append(_plural(nodes, "node")
                      + (f" ({visible:,} visible)" if isinstance(visible, int) else ""))
    if isinstance(edges, int):
        counts.append(_plural(edges, "edge"))
    lines.append(f"stored:     {', '.join(counts) or 'nothing'} in {scope}")
    lines.append(f"pending:    {_plural(int(stats.get('pending', 0)), 'observation')} "
                 "awaiting `labile repair`")
    lines.append(f"LLM:        {_llm(stats.get('llm', {}))}")
    shown = {"store", "path", "disk_bytes", "namespaces", "observations", "nodes",
             "visible_nodes", "edges", "embedder"}
    extra = {k: v for k, v in store.items()
             if k not in shown and isinstance(v, int | float | str | bool)}
    if extra:
        lines.append("details:    " + ", ".join(f"{k} {v}" for k, v in extra.items()))
    return "\n".join(lines)


def _llm(usage: Mapping[str, Any]) -> str:
    total = usage.get("total") or {}
    calls = int(total.get("calls", 0))
    if not calls:
        return "no calls in this process"
    tokens = int(total.get("prompt_tokens", 0)) + int(total.get("completion_tokens", 0))
    cost = float(total.get("cost_usd", 0.0))
    return (f"{_plural(calls, 'call')}, {tokens:,} tokens, ${cost:.4f} in this process "
            f"({int(total.get('failures', 0))} failed, {int(total.get('cache_hits', 0))} "
            "from the cache)")
