"""How one expansion action walks the graph: the beam and the path search, plus what a walk reads.

The expansion atoms (`labile_realm.retrieve.expand`) decide *what* to expand
and how a reached node is scored; this module holds the two walks over the
scored one-hop candidates they supply, and the per-search cache of edges and
nodes the walks read:

* `beam` (``subgraph_beam``): per hop, pool the candidates of the whole
  frontier, keep the best entry per target, admit by score (edge score, or
  activation) until the seed's node budget is spent; the admitted nodes are
  the next frontier.
* `path_search`: extend every active path by one edge, keep the best path per
  terminal node (mean hop score − the hop penalty per extra hop), keep
  ``path_top_k`` paths, at most ``path_max_depth`` hops; a pruned terminal
  never comes back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from labile.plugin import Edge, Node, Store
from labile_realm.retrieve.plan import ExpansionAction
from labile_realm.retrieve.score import path_score

__all__ = ["Candidates", "ExpansionCache", "Reached", "beam", "path_search"]


@attrs.define
class Reached:
    """A node reached by one action: its hit data.

    ``access`` is eq. 8 for the last edge; ``activation`` is the score the hit
    gets (eq. 8, possibly propagated from the node it was reached from, and
    with the node's own relevance to the question when the expander reads it).
    """

    node: Node
    edge_score: float
    access: float
    path: tuple[str, ...]
    edges: tuple[str, ...]
    hop_scores: tuple[float, ...]
    activation: float = 0.0


#: ``(sources, blocked) -> [(source id, one-hop candidate, edge)]``: the scored
#: neighbours of the partial paths ``sources``, none of them in ``blocked``.
Candidates = Callable[[Sequence[Reached], set[str]], list[tuple[str, Reached, Edge]]]


class ExpansionCache:
    """Edges and nodes read during one ``expand`` call (each is read once), and the
    reached nodes' own relevance (each scored once: a node is a candidate of many
    sources and rounds, and its relevance to the question does not change)."""

    def __init__(self, store: Store, namespace: str) -> None:
        self.store, self.namespace = store, namespace
        self.edges: dict[str, list[Edge]] = {}
        self.nodes: dict[str, Node] = {}
        self.relevance: dict[str, float] = {}

    def edges_of(self, ids: Sequence[str]) -> dict[str, list[Edge]]:
        """Every edge touching each of ``ids`` (one store call for the unknown ones)."""
        missing = [i for i in dict.fromkeys(ids) if i not in self.edges]
        if missing:
            for i in missing:
                self.edges[i] = []
            wanted = set(missing)
            for e in self.store.edges_of(self.namespace, missing, direction="both"):
                for end in {e.src, e.dst}:
                    if end in wanted:
                        self.edges[end].append(e)
        return {i: self.edges[i] for i in ids}

    def get_nodes(self, ids: Sequence[str]) -> dict[str, Node]:
        """Nodes by id (one store call for the unknown ones)."""
        missing = [i for i in dict.fromkeys(ids) if i not in self.nodes]
        if missing:
            for n in self.store.get_nodes(self.namespace, missing):
                self.nodes[n.id] = n
        return {i: self.nodes[i] for i in ids if i in self.nodes}


def _extend(parent: Reached, cand: Reached, edge_score: float) -> Reached:
    """``cand`` (one hop from ``parent``) as the end of ``parent``'s path."""
    return Reached(
        node=cand.node, edge_score=edge_score, access=cand.access, path=cand.path,
        edges=parent.edges + cand.edges, hop_scores=parent.hop_scores + cand.hop_scores,
        activation=cand.activation,
    )


def beam(seed: Reached, action: ExpansionAction, hops: int, blocked: set[str],
         candidates: Candidates, *, by_activation: bool = False) -> list[Reached]:
    """The nodes a beam from ``seed`` admits within ``hops`` hops (see the module docstring).

    Candidates compete by edge score, or by activation with ``by_activation``
    (when activation carries the node's own relevance).
    """

    def merit(r: Reached) -> float:
        return r.activation if by_activation else r.edge_score

    admitted: dict[str, Reached] = {}
    frontier: list[Reached] = [seed]
    budget = action.subgraph_max_nodes
    for _hop in range(hops):
        if budget <= 0 or not frontier:
            break
        by_id = {f.node.id: f for f in frontier}
        pool: dict[str, Reached] = {}
        for src, cand, _e in candidates(frontier, blocked | set(admitted)):
            full = _extend(by_id[src], cand, cand.edge_score)
            old = pool.get(cand.node.id)
            if old is None or merit(full) > merit(old):
                pool[cand.node.id] = full
        ranked = sorted(pool.values(), key=lambda r: (-merit(r), r.node.id))[:budget]
        for r in ranked:
            admitted[r.node.id] = r
        budget -= len(ranked)
        frontier = ranked
    return list(admitted.values())


def path_search(seed: Reached, action: ExpansionAction, hop_penalty: float, blocked: set[str],
                candidates: Candidates) -> list[Reached]:
    """The best path's end per node reached from ``seed`` (see the module docstring)."""
    paths: list[Reached] = [seed]
    best: dict[str, Reached] = {}
    pruned: set[str] = set()
    for _depth in range(action.path_max_depth):
        by_last = {p.node.id: p for p in paths}
        extended: dict[str, Reached] = {}
        for src, cand, _e in candidates(paths, blocked | pruned):
            parent = by_last[src]
            full = _extend(parent, cand,
                           path_score(parent.hop_scores + cand.hop_scores, hop_penalty))
            old = extended.get(cand.node.id)
            if old is None or full.edge_score > old.edge_score:
                extended[cand.node.id] = full
        ranked = sorted(extended.values(), key=lambda r: (-r.edge_score, r.node.id))
        keep, drop = ranked[: action.path_top_k], ranked[action.path_top_k:]
        pruned.update(r.node.id for r in drop)
        if not keep:
            break
        for r in keep:
            old = best.get(r.node.id)
            if old is None or r.edge_score > old.edge_score:
                best[r.node.id] = r
        blocked = blocked | {r.node.id for r in keep}
        paths = keep
    return list(best.values())
