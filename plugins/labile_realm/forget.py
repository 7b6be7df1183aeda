"""What forgetting an observation does to REALM's graph (the ``realm.forget`` handler).

Per node kind, for a node that other observations feed too (the kernel drops
nodes built from forgotten observations alone, with their edges):

* ``realm.episode``: rebuilt from the turns that remain, as construction
  would describe it from them (`labile_realm.episode_text`): speakers, date,
  topics (from the remaining turns' terms) and highlights (picked again among
  the remaining turns' events, each with its ``summarizes`` edge); its time
  span is recomputed from them.
* ``realm.entity``: kept (its name is its content) with the remaining sources;
  keywords and aliases that hold a forgotten-only word are removed, and a
  description holding one falls back to the name.
* ``realm.event`` / ``realm.fact``: their content is the first source's text,
  so they are dropped when that source is forgotten; otherwise kept with the
  remaining sources, keywords filtered as for entities.

A turn event that names no forgotten source can still quote one: the
question it replies to ("… (replying to Bo: …)", attribute ``answers``). When
that quote holds a forgotten-only word, the event keeps its own turn and loses
the quote.

Nodes are re-embedded when their description changed. Edges are the kernel's:
those of dropped nodes go, and so does any edge whose text holds a
forgotten-only word. Reconsolidation history lives in edge ``attrs`` and goes
with its edge.
"""

from __future__ import annotations

import attrs

from labile.plugin import ForgetPlan, Node, NodeFilter
from labile_realm.construct.batch import WriteBatch
from labile_realm.construct.extract_offline import unit_id_of_turn
from labile_realm.construct.relations import session_highlights, summary_links
from labile_realm.episode_text import describe_episode, event_terms, session_topics
from labile_realm.schema import ENTITY, EPISODE, EVENT

__all__ = ["forget_realm"]

_REPLYING = " (replying to "
_HIGHLIGHTS = "; highlights: "


def forget_realm(plan: ForgetPlan) -> None:
    """Rebuild the REALM nodes that lose a source or quote a lost turn (see the module docs)."""
    rebuilt = {n.id: n for n in _unquoted_replies(plan)}
    for node in plan.affected.values():
        if not node.kind.startswith("realm."):
            continue
        sources = plan.remaining_sources(node)
        if node.kind == EPISODE:
            episode = _episode(plan, node, sources, rebuilt)
            if episode is not None:
                rebuilt[node.id] = episode
            continue
        if node.kind != ENTITY and node.sources[0] not in sources:
            continue  # the content came from a forgotten turn: dropped
        keywords = tuple(k for k in node.keywords if not plan.leaks(k))
        node_attrs = dict(node.attrs)
        description = node.description
        if plan.leaks(description):
            description = str(node_attrs.get("name") or node.content)
            node_attrs["description"] = description
        if "aliases" in node_attrs:
            node_attrs["aliases"] = [a for a in node_attrs["aliases"] if not plan.leaks(str(a))]
        rebuilt[node.id] = attrs.evolve(node, sources=sources, keywords=keywords,
                                        description=description, attrs=node_attrs)
    _reembed(plan, list(rebuilt.values()))
    plan.rebuilt.update(rebuilt)


def _unquoted_replies(plan: ForgetPlan) -> list[Node]:
    """Surviving turn events whose reply context quotes a forgotten-only word, without it."""
    out = []
    gone = plan.drop_nodes | set(plan.affected)
    for event in plan.deps.store.iter_nodes(plan.namespace, NodeFilter(kinds={EVENT})):
        answers = [str(a) for a in event.attrs.get("answers", ())]
        if event.id in gone or not any(plan.leaks(a) for a in answers):
            continue
        description = event.description
        cut = description.rfind(_REPLYING)
        if cut >= 0:
            description = description[:cut]
        node_attrs = {k: v for k, v in event.attrs.items() if k != "answers"}
        node_attrs["description"] = description
        out.append(attrs.evolve(event, description=description, attrs=node_attrs))
    return out


def _episode(plan: ForgetPlan, node: Node, sources: tuple[str, ...],
             rebuilt: dict[str, Node]) -> Node | None:
    """The episode as construction describes it from the turns in ``sources``."""
    remaining = {o.id: o for o in plan.remaining}
    turns = [s for s in sources if s in remaining]
    if not turns:
        return None
    store = plan.deps.store
    events = [rebuilt.get(e.id, e) for e in store.get_nodes(
        plan.namespace, [unit_id_of_turn(t) for t in turns])]
    stored = node.attrs.get("turn_terms") or {}
    turn_terms = {str(k): list(v) for k, v in stored.items() if k in remaining}
    for event in events:  # an episode written before turn_terms were kept
        for turn in event.sources:
            turn_terms.setdefault(turn, event_terms(event))
    topics = session_topics(turns, turn_terms)
    times = sorted(remaining[t].timestamp for t in turns)
    key = str(node.attrs.get("session") or node.content.removeprefix("session "))
    speakers = {o.speaker for o in plan.remaining if o.speaker}
    picked = session_highlights(events) if _HIGHLIGHTS in node.description else []
    description = describe_episode(key, speakers, times[0], topics, picked)
    # A turn picked now in place of a forgotten one gets its ``summarizes`` edge.
    links = WriteBatch()
    links.apply(store, plan.namespace, summary_links(node, picked), plan.deps.clock())
    plan.rebuilt_edges.extend(links.edges.values())
    node_attrs = {**node.attrs, "description": description, "keywords": topics[:3],
                  "time_range": [times[0].isoformat(), times[-1].isoformat()],
                  "turn_terms": {t: turn_terms[t] for t in turns if t in turn_terms}}
    return attrs.evolve(node, sources=tuple(turns), description=description,
                        keywords=tuple(topics[:3]), time_start=times[0], time_end=times[-1],
                        attrs=node_attrs)


def _reembed(plan: ForgetPlan, nodes: list[Node]) -> None:
    """New vectors for the nodes whose description changed."""
    before = {n.id: n.description for n in plan.deps.store.get_nodes(
        plan.namespace, [n.id for n in nodes])}
    changed = [n for n in nodes if n.description != before.get(n.id)]
    if changed:
        vectors = plan.deps.embedder.embed([n.description or n.content for n in changed])
        for node, vec in zip(changed, vectors, strict=True):
            node.embedding = vec
