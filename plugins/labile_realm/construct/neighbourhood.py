"""The neighbourhood N(x) = N_sim(x) ∪ N_recent(x) of a candidate unit (Algorithm 1, step 2).

Similar nodes come from the store's vector search (committed nodes) plus a
brute-force pass over the nodes pending in the current ``add`` batch (they are
written together at the end of the batch). Recent nodes are the ones the
namespace touched last. Every candidate says where it came from:
``similarity``, ``time`` or ``both``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import attrs

from labile.plugin import Node, NodeFilter, Store, Vector, cosine
from labile_realm.construct.passages import PASSAGE_KEY

Source = Literal["similarity", "time", "both"]


@attrs.define(kw_only=True)
class Candidate:
    """One neighbour of a unit.

    Attributes:
        node: The neighbouring node (a copy; edit it only through a decision).
        similarity: Cosine similarity to the unit's embedding, if known.
        source: ``"similarity"``, ``"time"`` or ``"both"``.
        previous_turn: The node is the event of the turn just before the unit's
            (set by the host for deciders that read replies).
    """

    node: Node
    similarity: float
    source: Source
    previous_turn: bool = False


class Neighbourhood:
    """Finds the similar and the recent nodes of a unit.

    Args:
        store: The (checked) store.
        similar_k: How many similar nodes to take.
        recent_k: How many recently touched nodes to take.
    """

    def __init__(self, store: Store, *, similar_k: int = 6, recent_k: int = 6) -> None:
        self.store = store
        self.similar_k = similar_k
        self.recent_k = recent_k

    def find(
        self,
        namespace: str,
        vector: Vector,
        *,
        kinds: frozenset[str],
        recent_ids: Sequence[str],
        pending: Mapping[str, Node],
        exclude: frozenset[str] = frozenset(),
    ) -> list[Candidate]:
        """The tagged neighbourhood of a unit, most similar first.

        Args:
            namespace: The namespace.
            vector: The unit's embedding.
            kinds: Node kinds to consider for similarity.
            recent_ids: Recently touched node ids, oldest first.
            pending: Nodes of the current batch not yet written (id -> node).
            exclude: Ids never returned (e.g. the unit's own node).

        Returns:
            Candidates with their cosine similarity and source tag; a document's
            passages (`labile_realm.construct.passages`) are never among them:
            they are reached through their turn.
        """
        out: dict[str, Candidate] = {}
        if self.similar_k > 0:
            hits = self.store.vector_search(
                namespace, vector, self.similar_k, where=NodeFilter(kinds=kinds)
            )
            for node, sim in hits:
                if node.id not in exclude and node.id not in pending \
                        and PASSAGE_KEY not in node.attrs:
                    out[node.id] = Candidate(node=node, similarity=float(sim), source="similarity")
            local = [
                (cosine(vector, n.embedding), n) for n in pending.values()
                if n.kind in kinds and n.id not in exclude and PASSAGE_KEY not in n.attrs
            ]
            local.sort(key=lambda t: -t[0])
            merged = sorted(
                [(c.similarity, c.node) for c in out.values()] + local[: self.similar_k],
                key=lambda t: -t[0],
            )[: self.similar_k]
            out = {n.id: Candidate(node=n, similarity=s, source="similarity") for s, n in merged}
        if self.recent_k > 0:
            recent = [i for i in recent_ids if i not in exclude][-self.recent_k:]
            missing = [i for i in recent if i not in pending and i not in out]
            fetched = {n.id: n for n in self.store.get_nodes(namespace, missing)} if missing else {}
            for node_id in reversed(recent):
                if node_id in out:
                    out[node_id].source = "both"
                    continue
                found = pending.get(node_id) or fetched.get(node_id)
                if found is not None:
                    out[node_id] = Candidate(
                        node=found, similarity=cosine(vector, found.embedding), source="time"
                    )
        return sorted(out.values(), key=lambda c: -c.similarity)
