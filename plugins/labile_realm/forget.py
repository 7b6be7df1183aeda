"""What forgetting an observation does to REALM's graph (the ``realm.forget`` handler).

Per node kind, for a node that other observations feed too (the kernel drops
nodes built from forgotten observations alone, with their edges):

* ``realm.entity``: kept (its name is its content) with the remaining sources;
  keywords and aliases that only forgotten turns contain are removed, and a
  description quoting them falls back to the name.
* ``realm.episode``: kept with the remaining turns; its time span is
  recomputed from them and topics only forgotten turns contain are removed.
* ``realm.event`` / ``realm.fact``: their content is the first source's text,
  so they are dropped when that source is forgotten; otherwise kept with the
  remaining sources, keywords filtered as for entities.

Nodes are re-embedded when their description changed. Edges are the kernel's:
those of dropped nodes go, and so does any edge whose description quotes a
forgotten-only word. Reconsolidation history lives in edge ``attrs`` and goes
with its edge.
"""

from __future__ import annotations

import re

import attrs

from labile.plugin import ForgetPlan, Node
from labile_realm.schema import ENTITY, EPISODE

__all__ = ["forget_realm"]

_TOPICS = re.compile(r"; topics: (.*)$")


def forget_realm(plan: ForgetPlan) -> None:
    """Rebuild the REALM nodes that lose a source (see the module docs)."""
    obs_time = {o.id: o.timestamp for o in plan.remaining}
    rebuilt: list[Node] = []
    for node in plan.affected.values():
        if not node.kind.startswith("realm."):
            continue
        sources = plan.remaining_sources(node)
        if node.kind not in (ENTITY, EPISODE) and node.sources[0] not in sources:
            continue  # the content came from a forgotten turn: dropped
        keywords = tuple(k for k in node.keywords if not plan.leaks(k))
        node_attrs = dict(node.attrs)
        description = node.description
        if node.kind == EPISODE:
            description, node_attrs = _episode_text(plan, node)
            times = sorted(obs_time[s] for s in sources if s in obs_time)
            if times:
                node_attrs["time_range"] = [times[0].isoformat(), times[-1].isoformat()]
                node = attrs.evolve(node, time_start=times[0], time_end=times[-1])
        elif plan.leaks(description):
            description = str(node_attrs.get("name") or node.content)
        if "aliases" in node_attrs:
            node_attrs["aliases"] = [a for a in node_attrs["aliases"] if not plan.leaks(str(a))]
        rebuilt.append(attrs.evolve(node, sources=sources, keywords=keywords,
                                    description=description, attrs=node_attrs))
    changed = [n for n in rebuilt if n.description != plan.affected[n.id].description]
    if changed:
        vectors = plan.deps.embedder.embed([n.description or n.content for n in changed])
        for node, vec in zip(changed, vectors, strict=True):
            node.embedding = vec
    plan.rebuilt.update((n.id, n) for n in rebuilt)


def _episode_text(plan: ForgetPlan, node: Node) -> tuple[str, dict[str, object]]:
    node_attrs = dict(node.attrs)
    match = _TOPICS.search(node.description)
    description = node.description
    if match is not None:
        topics = [t for t in match.group(1).split(", ") if t and not plan.leaks(t)]
        description = node.description[:match.start()] + f"; topics: {', '.join(topics)}"
    node_attrs["description"] = description
    node_attrs["keywords"] = [k for k in node_attrs.get("keywords", []) if not plan.leaks(str(k))]
    return description, node_attrs
