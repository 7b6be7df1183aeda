"""`MemoryStore`: the in-process reference implementation of the `Store` protocol.

It keeps everything in dictionaries (nothing survives the process) and
defines the contract's semantics in the simplest possible code: the LanceDB
store is tested against the same contract suite. Useful for tests and for
short-lived agents.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from labile._errors import StoreError
from labile._model import Edge, Node, NodeFilter, Observation
from labile._protocols import Direction, Scored
from labile.text.bm25 import BM25Index


@attrs.frozen
class MemoryStoreConfig:
    """The in-memory store takes no options."""


@attrs.define
class _Space:
    observations: dict[str, Observation] = attrs.field(factory=dict)
    nodes: dict[str, Node] = attrs.field(factory=dict)
    edges: dict[str, Edge] = attrs.field(factory=dict)
    out: dict[str, set[str]] = attrs.field(factory=dict)
    into: dict[str, set[str]] = attrs.field(factory=dict)
    bm25: BM25Index = attrs.field(factory=BM25Index)
    matrix: tuple[list[str], NDArray[np.float32]] | None = None


class MemoryStore:
    """Dictionaries per namespace; searches by brute force."""

    def __init__(self, config: MemoryStoreConfig | None = None, deps: Any = None) -> None:
        self._spaces: dict[str, _Space] = {}
        self._lock = threading.RLock()
        self._batch_depth: dict[str, int] = {}

    def _space(self, namespace: str, create: bool = False) -> _Space:
        if not isinstance(namespace, str) or not namespace:
            raise StoreError(f"namespace must be a non-empty string, got {namespace!r}")
        space = self._spaces.get(namespace)
        if space is None:
            space = _Space()
            if create:
                self._spaces[namespace] = space
        return space

    @contextmanager
    def reading(self, namespace: str) -> Iterator[None]:
        """A no-op: this store lives in one process, so there is nothing to check."""
        yield

    @contextmanager
    def batch(self, namespace: str) -> Iterator[None]:
        """Writes inside the block commit together or not at all."""
        with self._lock:
            space = self._space(namespace, create=True)
            depth = self._batch_depth.get(namespace, 0)
            snapshot = None
            if depth == 0:
                snapshot = (
                    dict(space.observations), dict(space.nodes), dict(space.edges),
                    copy.deepcopy(space.out), copy.deepcopy(space.into),
                )
            self._batch_depth[namespace] = depth + 1
            try:
                yield
            except BaseException:
                if snapshot is not None:
                    space.observations, space.nodes, space.edges, space.out, space.into = snapshot
                    space.bm25 = BM25Index()
                    for node in space.nodes.values():
                        space.bm25.add(node.id, node.search_text)
                    space.matrix = None
                raise
            finally:
                self._batch_depth[namespace] = depth

    # -- observations -------------------------------------------------------
    def add_observations(self, namespace: str, observations: Sequence[Observation]) -> None:
        with self._lock:
            space = self._space(namespace, create=True)
            seen: set[str] = set()
            for obs in observations:
                if obs.id in space.observations or obs.id in seen:
                    raise StoreError(f"observation {obs.id!r} already stored in {namespace!r}")
                seen.add(obs.id)
            for obs in observations:
                space.observations[obs.id] = attrs.evolve(obs, namespace=namespace)

    def existing_observation_ids(self, namespace: str, ids: Iterable[str]) -> set[str]:
        space = self._space(namespace)
        return {i for i in ids if i in space.observations}

    def get_observations(self, namespace: str, ids: Sequence[str]) -> list[Observation]:
        space = self._space(namespace)
        return [space.observations[i] for i in ids if i in space.observations]

    def iter_observations(self, namespace: str) -> Iterator[Observation]:
        return iter(list(self._space(namespace).observations.values()))

    # -- nodes --------------------------------------------------------------
    def upsert_nodes(self, namespace: str, nodes: Sequence[Node]) -> None:
        with self._lock:
            space = self._space(namespace, create=True)
            for node in nodes:
                old = space.nodes.get(node.id)
                if old is not None and old.content != node.content:
                    raise StoreError(
                        f"node {node.id!r}: content is evidence and cannot be changed"
                    )
            for node in nodes:
                stored = attrs.evolve(node, namespace=namespace)
                if stored.embedding is not None:
                    vec = np.array(stored.embedding, dtype=np.float32)
                    vec.setflags(write=False)  # shared with readers: in-place edits must fail
                    stored.embedding = vec
                if node.id in space.nodes:
                    space.bm25.remove(node.id)
                space.nodes[node.id] = stored
                space.bm25.add(node.id, stored.search_text)
            space.matrix = None

    def get_nodes(self, namespace: str, ids: Sequence[str]) -> list[Node]:
        space = self._space(namespace)
        return [_copy_node(space.nodes[i]) for i in ids if i in space.nodes]

    def iter_nodes(self, namespace: str, where: NodeFilter | None = None) -> Iterator[Node]:
        nodes = list(self._space(namespace).nodes.values())
        return iter([_copy_node(n) for n in nodes if where is None or where.accepts(n)])

    def count_nodes(self, namespace: str, where: NodeFilter | None = None) -> int:
        nodes = self._space(namespace).nodes.values()
        return sum(1 for n in nodes if where is None or where.accepts(n))

    # -- edges --------------------------------------------------------------
    def upsert_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        with self._lock:
            space = self._space(namespace, create=True)
            for edge in edges:
                for end in (edge.src, edge.dst):
                    if end not in space.nodes:
                        raise StoreError(f"edge {edge.id!r} references unknown node {end!r}")
            for edge in edges:
                old = space.edges.get(edge.id)
                if old is not None:  # its ends may have changed
                    space.out.get(old.src, set()).discard(edge.id)
                    space.into.get(old.dst, set()).discard(edge.id)
                space.edges[edge.id] = attrs.evolve(edge, namespace=namespace)
                space.out.setdefault(edge.src, set()).add(edge.id)
                space.into.setdefault(edge.dst, set()).add(edge.id)

    def get_edges(self, namespace: str, ids: Sequence[str]) -> list[Edge]:
        space = self._space(namespace)
        return [attrs.evolve(space.edges[i]) for i in ids if i in space.edges]

    def edges_of(
        self,
        namespace: str,
        node_ids: Collection[str],
        *,
        direction: Direction = "out",
        predicates: Collection[str] | None = None,
    ) -> list[Edge]:
        if direction not in ("out", "in", "both"):
            raise StoreError(f"direction must be 'out', 'in' or 'both', got {direction!r}")
        space = self._space(namespace)
        ids: list[str] = []
        seen: set[str] = set()
        for node_id in node_ids:
            groups = []
            if direction in ("out", "both"):
                groups.append(space.out.get(node_id, ()))
            if direction in ("in", "both"):
                groups.append(space.into.get(node_id, ()))
            for group in groups:
                for eid in sorted(group):
                    if eid not in seen:
                        seen.add(eid)
                        ids.append(eid)
        edges = [space.edges[i] for i in ids]
        if predicates is not None:
            wanted = set(predicates)
            edges = [e for e in edges if e.predicate in wanted]
        return [attrs.evolve(e) for e in edges]

    def iter_edges(self, namespace: str) -> Iterator[Edge]:
        return iter([attrs.evolve(e) for e in self._space(namespace).edges.values()])

    def count_edges(self, namespace: str) -> int:
        return len(self._space(namespace).edges)

    # -- search -------------------------------------------------------------
    def vector_search(
        self,
        namespace: str,
        vector: NDArray[np.float32],
        k: int,
        *,
        where: NodeFilter | None = None,
    ) -> list[Scored]:
        space = self._space(namespace)
        if space.matrix is None:
            ids = [n.id for n in space.nodes.values() if n.embedding is not None]
            dim = len(vector)
            mat = (
                np.stack([space.nodes[i].embedding for i in ids]).astype(np.float32)  # type: ignore[misc]
                if ids else np.zeros((0, dim), np.float32)
            )
            norms = np.linalg.norm(mat, axis=1, keepdims=True)
            space.matrix = (ids, mat / np.clip(norms, 1e-12, None))
        ids, mat = space.matrix
        if not ids or k <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        sims = mat @ q
        order = np.argsort(-sims, kind="stable")
        out: list[Scored] = []
        for idx in order:
            node = space.nodes[ids[idx]]
            if where is None or where.accepts(node):
                out.append((_copy_node(node), float(sims[idx])))
                if len(out) >= k:
                    break
        return out

    def text_search(
        self, namespace: str, text: str, k: int, *, where: NodeFilter | None = None
    ) -> list[Scored]:
        space = self._space(namespace)
        allowed = None
        if where is not None:
            def allowed(node_id: str) -> bool:
                return where.accepts(space.nodes[node_id])
        hits = space.bm25.search(text, k, allowed=allowed)
        return [(_copy_node(space.nodes[i]), s) for i, s in hits]

    # -- lifecycle ----------------------------------------------------------
    def namespaces(self) -> list[str]:
        return sorted(
            ns for ns, s in self._spaces.items() if s.observations or s.nodes or s.edges
        )

    def delete(
        self,
        namespace: str,
        *,
        observation_ids: Collection[str] = (),
        node_ids: Collection[str] = (),
        edge_ids: Collection[str] = (),
    ) -> None:
        with self._lock:
            space = self._space(namespace)
            doomed = set(edge_ids)
            for node_id in node_ids:
                doomed |= space.out.get(node_id, set()) | space.into.get(node_id, set())
            for eid in doomed:
                edge = space.edges.pop(eid, None)
                if edge is not None:
                    space.out.get(edge.src, set()).discard(eid)
                    space.into.get(edge.dst, set()).discard(eid)
            for node_id in node_ids:
                if space.nodes.pop(node_id, None) is not None:
                    space.bm25.remove(node_id)
                space.out.pop(node_id, None)
                space.into.pop(node_id, None)
            for obs_id in observation_ids:
                space.observations.pop(obs_id, None)
            space.matrix = None

    def purge(self, namespace: str) -> None:
        with self._lock:
            space = self._space(namespace)
            # Emptied in place, so a rollback of an enclosing batch can restore it.
            space.observations, space.nodes, space.edges = {}, {}, {}
            space.out, space.into, space.bm25, space.matrix = {}, {}, BM25Index(), None

    def erase_history(self) -> None:
        """Nothing is kept once removed."""

    def optimize(self) -> None:
        """Nothing to compact in memory."""

    def stats(self, namespace: str | None = None) -> dict[str, Any]:
        names = [namespace] if namespace else self.namespaces()
        spaces = [self._space(n) for n in names]
        return {
            "store": "memory",
            "namespaces": len([s for s in spaces if s.observations or s.nodes]),
            "observations": sum(len(s.observations) for s in spaces),
            "nodes": sum(len(s.nodes) for s in spaces),
            "visible_nodes": sum(1 for s in spaces for n in s.nodes.values() if n.visible),
            "edges": sum(len(s.edges) for s in spaces),
        }

    def close(self) -> None:
        """Nothing to flush."""


def _copy_node(node: Node) -> Node:
    # Callers may mutate what they get back; the stored record must not change.
    return attrs.evolve(node)
