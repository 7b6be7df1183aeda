"""Forgetting observations: what goes with them, and how bundles take part.

`plan_forget` sorts the namespace's nodes by provenance (`labile._model.Node.sources`):

* a node built from forgotten observations only is **dropped** with its edges;
* a node that other observations feed too is **affected**: it is dropped as
  well unless a *forget handler* rebuilds it from what remains (an entity that
  keeps its other mentions, an episode that keeps its other turns).

Forget handlers are registered by bundles (``labile_register_forget_handlers``,
kind ``forget_handler``); each is called once per forget with the `ForgetPlan`
and may rebuild affected nodes, drop or rewrite edges, and scrub state of its
own outside the store (a reply cache). Edges carry no provenance, and a node can
quote a turn it does not name as a source, so the kernel then drops every edge and
every node (rebuilt or not) whose text still holds a word found only in the
forgotten observations (`ForgetPlan.leaks`): any word, however short (a PIN, an
age, "HIV", a two-letter name), except function words and the parts of the
observations' own timestamps, which templates write into every node.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any

import attrs

from labile._model import Edge, Node, Observation
from labile._protocols import Deps
from labile.text.tokenize import is_stopword

#: A forget handler: rebuilds or drops what its bundle derived (see the module docs).
ForgetHandler = Callable[["ForgetPlan"], None]

_WORD = re.compile(r"\w+")


def words(text: str) -> set[str]:
    """The case-folded words of ``text``, however short ("913", "hiv", "bo")."""
    return set(_WORD.findall(text.casefold()))


def time_words(when: datetime) -> set[str]:
    """The words a template may write for ``when``: year, month (number and name),
    day, weekday, hour, minute, am/pm, and the pieces of its ISO form."""
    parts = {str(when.year), str(when.month), f"{when.month:02d}", str(when.day),
             f"{when.day:02d}", str(when.hour), f"{when.hour:02d}", str(when.hour % 12 or 12),
             f"{when.minute:02d}", str(when.minute), when.strftime("%B"), when.strftime("%b"),
             when.strftime("%A"), when.strftime("%a"), "am", "pm"}
    return {p.casefold() for p in parts} | words(when.isoformat())


@attrs.define(kw_only=True)
class ForgetPlan:
    """What one `labile.Memory.forget` call removes, as handlers see and change it.

    Attributes:
        namespace: The namespace.
        forgotten: The observations being forgotten.
        remaining: The observations of the namespace that stay.
        drop_nodes: Ids of nodes built from forgotten observations only.
        affected: Nodes that also have other sources: dropped unless rebuilt.
        rebuilt: Nodes written back by handlers, by id: an affected node rebuilt,
            or a surviving node changed (an archived unit made visible again).
            Their sources must not name a forgotten observation; an affected
            node's content may differ (it is then removed and written anew).
        drop_edges: Edge ids to remove besides those of removed nodes.
        rebuilt_edges: Edges to write after the removal (ends must survive).
        deps: The pipeline's services (store, embedder, LLM client).
    """

    namespace: str
    forgotten: tuple[Observation, ...]
    remaining: tuple[Observation, ...]
    drop_nodes: set[str]
    affected: dict[str, Node]
    deps: Deps
    rebuilt: dict[str, Node] = attrs.field(factory=dict)
    drop_edges: set[str] = attrs.field(factory=set)
    rebuilt_edges: list[Edge] = attrs.field(factory=list)
    _private: set[str] | None = None

    @property
    def forgotten_ids(self) -> set[str]:
        """The ids of the forgotten observations."""
        return {o.id for o in self.forgotten}

    @property
    def private_words(self) -> set[str]:
        """The words only the forgotten observations hold (see the module docs)."""
        if self._private is None:
            kept = set().union(*(words(_obs_text(o)) for o in self.remaining))
            times = set().union(*(time_words(o.timestamp)
                                  for o in (*self.remaining, *self.forgotten)))
            said = set().union(*(words(_obs_text(o)) for o in self.forgotten))
            self._private = {w for w in said - kept - times if not is_stopword(w)}
        return self._private

    def leaks(self, text: str) -> bool:
        """Whether ``text`` holds a word that only forgotten observations contain."""
        private = self.private_words
        return bool(private and words(text) & private)

    def remaining_sources(self, node: Node) -> tuple[str, ...]:
        """``node.sources`` without the forgotten observations."""
        gone = self.forgotten_ids
        return tuple(s for s in node.sources if s not in gone)


def _obs_text(obs: Observation) -> str:
    return " ".join([obs.text, obs.speaker or "", _json(obs.metadata)])


def _json(value: object) -> str:
    # Unescaped: "\u00e9" would hide the word "é" and show a word "u00e9" instead.
    return json.dumps(value, default=str, ensure_ascii=False)


def _values(value: object) -> str:
    """The values inside attrs, not their keys: a key such as ``"key"`` or ``"value"`` is the
    schema of a derived record, not something a turn said."""
    if isinstance(value, dict):
        return " ".join(_values(v) for v in value.values())
    if isinstance(value, list | tuple | set):
        return " ".join(_values(v) for v in value)
    return "" if value is None else str(value)


def _edge_text(edge: Edge) -> str:
    return " ".join([edge.description, _values(edge.attrs)])


def _node_text(node: Node) -> str:
    return " ".join([node.search_text, _values(node.attrs)])


def plan_forget(deps: Deps, namespace: str, ids: Collection[str]) -> ForgetPlan:
    """Sort the namespace's nodes for forgetting the observations ``ids`` (unknown ids skipped)."""
    store = deps.store
    gone = set(ids)
    forgotten: list[Observation] = []
    remaining: list[Observation] = []
    for obs in store.iter_observations(namespace):
        (forgotten if obs.id in gone else remaining).append(obs)
    drop: set[str] = set()
    affected: dict[str, Node] = {}
    for node in store.iter_nodes(namespace):
        hit = gone.intersection(node.sources)
        if hit and hit == set(node.sources):
            drop.add(node.id)
        elif hit:
            affected[node.id] = node
    return ForgetPlan(namespace=namespace, forgotten=tuple(forgotten), remaining=tuple(remaining),
                      drop_nodes=drop, affected=affected, deps=deps)


def apply_forget(plan: ForgetPlan, handlers: Collection[ForgetHandler]) -> dict[str, Any]:
    """Run the handlers, then remove and rewrite, in one batch; returns the counts.

    A rebuilt node that still holds a forgotten-only word is dropped instead, and
    so is any other surviving node that holds one.

    Raises:
        ValueError: a handler rebuilt a node that is being dropped or does not
            exist, or one that still names a forgotten source; nothing is written.
    """
    for handler in handlers:
        handler(plan)
    store, ns, gone = plan.deps.store, plan.namespace, plan.forgotten_ids
    old = dict(plan.affected)
    old.update((n.id, n) for n in store.get_nodes(ns, [i for i in plan.rebuilt if i not in old]))
    rebuilt, leaking = {}, set()
    for nid, node in plan.rebuilt.items():
        if nid in plan.drop_nodes or nid not in old or gone.intersection(node.sources):
            raise ValueError(f"forget handler rebuilt node {nid!r} wrongly: it must be a "
                             "surviving node, and name no forgotten source")
        if plan.leaks(_node_text(node)):
            leaking.add(nid)
        else:
            rebuilt[nid] = node
    dropped = plan.drop_nodes | leaking | (set(plan.affected) - set(rebuilt))
    # A node can quote a forgotten observation without naming it as a source
    # (a turn indexed with the turn before it): every other node is checked too.
    dropped |= {n.id for n in store.iter_nodes(ns)
                if n.id not in dropped and n.id not in rebuilt and plan.leaks(_node_text(n))}
    # A rebuilt node whose content changed is removed and written anew (content is
    # evidence: it never changes in place); its surviving edges are written back.
    renewed = {n for n, node in rebuilt.items() if node.content != old[n].content}
    kept_edges = [e for e in store.edges_of(ns, renewed, direction="both")
                  if e.src not in dropped and e.dst not in dropped]
    doomed = set(plan.drop_edges)
    for edge in store.iter_edges(ns):
        if edge.src in dropped or edge.dst in dropped or plan.leaks(_edge_text(edge)):
            doomed.add(edge.id)
    # A handler's new edge can reach a node dropped above (a highlight that quotes a
    # forgotten word): it goes with that node, as a stored edge would.
    writes = [e for e in [*kept_edges, *plan.rebuilt_edges]
              if e.id not in doomed and e.src not in dropped and e.dst not in dropped
              and not plan.leaks(_edge_text(e))]
    with store.batch(ns):
        store.delete(ns, observation_ids=gone, node_ids=dropped | renewed, edge_ids=doomed)
        store.upsert_nodes(ns, list(rebuilt.values()))
        store.upsert_edges(ns, writes)
    return {"observations": len(plan.forgotten), "nodes_removed": len(dropped),
            "nodes_rebuilt": len(rebuilt), "edges_removed": len(doomed)}
