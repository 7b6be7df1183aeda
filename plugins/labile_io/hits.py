"""One hit schema, versioned: what a search hit looks like outside Python.

The CLI's ``search --json``, the MCP server's ``search_memory`` tool and the
HTTP API all render a `RetrievalResult` with `result_to_dict`, so a program
written against one reads the others. The schema is named in every payload
(``"schema": "labile.hit/1"``); a change that drops or renames a field bumps
the number, a new field does not. It lives here, with the surfaces, not in
the kernel: a Python program has the records themselves (`labile.Hit`).

Dates are labelled because a hit has two: ``said`` is when the source turns
were said (their timestamps), ``about`` the time span the memory is about
(the node's ``time_start``/``time_end``, often resolved from "last Tuesday").

Validity follows the supersession contract of the kernel's readers: a node
whose ``attrs["valid_to"]`` (ISO 8601) is set is no longer current, and
``attrs["superseded_by"]`` lists the nodes that replaced it. A node without
``valid_to`` is current.

Pure functions over records, so every surface renders identically and tests
need no server.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Final

from labile.plugin import Hit, Node, Observation, Reach, RetrievalResult

__all__ = [
    "HIT_SCHEMA",
    "edge_predicate",
    "hit_to_dict",
    "node_validity",
    "result_to_dict",
    "search_payload",
    "source_ids",
]

#: The name and version of the schema, carried by every search payload.
HIT_SCHEMA: Final = "labile.hit/1"

#: Source texts longer than this are cut (``"truncated": true`` says so).
SOURCE_TEXT_CHARS: Final = 500


def source_ids(result: RetrievalResult) -> list[str]:
    """Every observation id the hits of ``result`` cite, sorted (what to fetch for sources)."""
    return sorted({s for h in result.hits for s in h.node.sources})


def node_validity(node: Node) -> dict[str, Any]:
    """``current``, ``valid_to`` and ``superseded_by`` of ``node`` (see the module docstring)."""
    valid_to = node.attrs.get("valid_to")
    replaced = node.attrs.get("superseded_by") or []
    return {"current": not valid_to, "valid_to": str(valid_to) if valid_to else None,
            "superseded_by": [str(i) for i in replaced] if isinstance(replaced, list | tuple)
            else [str(replaced)]}


def edge_predicate(edge_id: str, src: str | None = None, dst: str | None = None) -> str | None:
    """The predicate in a canonical edge id ``src|predicate|dst`` (`labile.plugin.edge_id`).

    With ``src`` and ``dst`` known the split is exact even when ids hold ``|``;
    without them an id of exactly three parts is split; otherwise ``None``.
    """
    for a, b in ((src, dst), (dst, src)):
        if a and b and edge_id.startswith(f"{a}|") and edge_id.endswith(f"|{b}"):
            middle = edge_id[len(a) + 1:len(edge_id) - len(b) - 1]
            if middle:
                return middle
    parts = edge_id.split("|")
    return parts[1] if len(parts) == 3 and parts[1] else None


def _reached(via: Reach, node_id: str) -> dict[str, Any]:
    path = list(via.path)
    pairs = list(itertools.pairwise(path))
    predicates = [edge_predicate(e, *(pairs[i] if i < len(pairs) else (None, None)))
                  for i, e in enumerate(via.edges)]
    seed = path[0] if via.stage == "expand" and path else node_id
    if via.stage == "expand":
        over = " → ".join(p or "?" for p in predicates) or "edges"
        why = f"expanded {via.hop} hop(s) from {seed} over {over} ({via.atom})"
    else:
        why = f"seed: matched the query ({via.atom}{', plan ' + via.plan if via.plan else ''})"
    return {"stage": via.stage, "atom": via.atom, "hop": via.hop, "seed": seed, "path": path,
            "edges": list(via.edges), "predicates": predicates, "why": why}


def _source(obs: Observation, text_chars: int) -> dict[str, Any]:
    role = obs.metadata.get("role")
    cut = len(obs.text) > text_chars
    return {"id": obs.id, "speaker": obs.speaker,
            "role": role if isinstance(role, str) else None,
            "time": obs.timestamp.isoformat(), "session": obs.session,
            "text": obs.text[:text_chars] + ("…" if cut else ""), "truncated": cut}


def hit_to_dict(rank: int, hit: Hit, observations: Mapping[str, Observation], *,
                top_score: float | None = None,
                text_chars: int = SOURCE_TEXT_CHARS) -> dict[str, Any]:
    """One hit in the ``labile.hit/1`` schema.

    Args:
        rank: 1 for the best hit.
        hit: The hit.
        observations: Observations by id; the hit's sources found here are
            rendered (with role, speaker, time, text), the others listed by id
            only in ``missing_sources``.
        top_score: The best score of the result; ``relative_score`` is the
            hit's score divided by it (``None`` when unknown or not positive).
        text_chars: Longest source text rendered.
    """
    node = hit.node
    found = [observations[s] for s in node.sources if s in observations]
    said = sorted({o.timestamp.isoformat() for o in found})
    about = None
    if node.time_start is not None:
        about = {"start": node.time_start.isoformat(),
                 "end": node.time_end.isoformat() if node.time_end else None}
    relative = (round(max(0.0, hit.score) / top_score, 6)
                if top_score is not None and top_score > 0 else None)
    return {
        "rank": rank,
        "score": round(hit.score, 6),
        "relative_score": relative,
        "id": node.id,
        "kind": node.kind,
        "text": node.description or node.content,
        "content": node.content,
        "description": node.description,
        "visible": node.visible,
        "dates": {"said": said, "about": about},
        "sources": [_source(o, text_chars) for o in found],
        "missing_sources": [s for s in node.sources if s not in observations],
        "reached": _reached(hit.via, node.id),
        "validity": node_validity(node),
    }


def result_to_dict(result: RetrievalResult, observations: Mapping[str, Observation], *,
                   text_chars: int = SOURCE_TEXT_CHARS,
                   hits: Sequence[Hit] | None = None) -> dict[str, Any]:
    """A search result as the ``labile.hit/1`` payload: the query, timings and hits.

    ``observations`` should hold the observations `source_ids` names (fetch them
    with ``Memory.get``).
    """
    chosen = result.hits if hits is None else tuple(hits)
    top = max((h.score for h in chosen), default=None)
    return {
        "schema": HIT_SCHEMA,
        "query": result.query.text,
        "namespace": result.query.namespace,
        "k": result.query.k,
        "as_of": result.query.as_of.isoformat(),
        "ms": {"total": round(result.total_ms, 3), "embed": round(result.embed_ms, 3)},
        "hits": [hit_to_dict(i, h, observations, top_score=top, text_chars=text_chars)
                 for i, h in enumerate(chosen, 1)],
    }


def search_payload(memory: Any, result: RetrievalResult, *,
                   text_chars: int = SOURCE_TEXT_CHARS) -> dict[str, Any]:
    """`result_to_dict` with the source observations read from ``memory`` (a `labile.Memory`)."""
    ns = result.query.namespace
    wanted = source_ids(result)
    found = {o.id: o for o in memory.get(ns, wanted)} if wanted else {}
    return result_to_dict(result, found, text_chars=text_chars)
