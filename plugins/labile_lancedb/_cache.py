"""The in-memory structures that serve a namespace's reads: node records with numpy
filter columns and a vector matrix, and edge records with their topology in igraph.

The store keeps one `Space` per namespace it has touched, loaded lazily from
LanceDB (`labile_lancedb._spaces`) and updated on every write (write-through),
so reads are served from memory: a LanceDB round trip costs milliseconds, a
dictionary lookup microseconds. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np
from numpy.typing import NDArray

from labile.plugin import Edge, Node, NodeFilter, Observation
from labile_lancedb._partitions import Partitions
from labile_lancedb._quantized import BinaryCodes
from labile_lancedb._rows import to_us
from labile_lancedb._training import CellTraining

if TYPE_CHECKING:
    import igraph

#: Time sentinel for nodes without ``time_start`` (they pass every time filter).
NO_TIME: Final = np.iinfo(np.int64).min


_FIELDS: Final[dict[type, tuple[str, ...]]] = {
    cls: tuple(f.name for f in attrs.fields(cls)) for cls in (Node, Edge, Observation)
}


def _copier(cls: type) -> Callable[[Any], Any]:
    """A function copying a ``cls`` record field by field, its mapping dict too.

    Generated once per class, with each slot's setter bound, so a copy is one
    call per field and no loop: stores copy every record they hand out, and a
    REALM search reads hundreds of them (2.4x faster than the loop it replaces).
    """
    names = _FIELDS[cls]
    mapping = "metadata" if cls is Observation else "attrs"
    lines = ["def copy(r):", "    n = new(cls)"]
    for i, name in enumerate(names):
        value = f"dict(r.{name})" if name == mapping else f"r.{name}"
        lines.append(f"    set{i}(n, {value})")
    lines.append("    return n")
    scope: dict[str, Any] = {"new": object.__new__, "cls": cls}
    for i, name in enumerate(names):
        slot = cls.__dict__.get(name)
        # a slot's own setter (no attrs validators: the record was validated when built)
        scope[f"set{i}"] = (slot.__set__ if slot is not None and hasattr(slot, "__set__")
                            else lambda obj, v, _n=name: object.__setattr__(obj, _n, v))
    exec("\n".join(lines), scope)  # the source is built from field names only
    fn: Callable[[Any], Any] = scope["copy"]
    return fn


_COPIERS: Final[dict[type, Callable[[Any], Any]]] = {cls: _copier(cls) for cls in _FIELDS}


def clone(record: Any, **changes: Any) -> Any:
    """A shallow copy of a kernel record with ``changes`` applied; its dict is copied.

    Far faster than `attrs.evolve`, which re-runs every validator: the record
    was validated when built (and attrs validates mutations too), so the copy
    needs no check. Subclasses fall back to `attrs.evolve`.
    """
    cls = type(record)
    copier = _COPIERS.get(cls)
    if copier is None:
        return attrs.evolve(record, **changes)
    new = copier(record)
    if changes:
        mapping = "metadata" if cls is Observation else "attrs"
        for name, value in changes.items():
            object.__setattr__(new, name, dict(value) if name == mapping else value)
    return new


def copy_node(node: Node) -> Node:
    """A copy callers may mutate (the embedding array too) without touching the cache."""
    out: Node = _COPIERS[Node](node) if type(node) is Node else clone(node)
    if out.embedding is not None:
        # no attrs setter: the stored array was validated when it was written
        object.__setattr__(out, "embedding", out.embedding.copy())
    return out


class NodeTable:
    """The nodes of one namespace, in insertion order, with columns for fast filters.

    Slot ``i`` is the ``i``-th node inserted; an update keeps its slot. Numpy
    columns (by slot) let `mask` evaluate a `NodeFilter` over every node at
    once with exactly `NodeFilter.accepts` semantics. The normalised vector
    matrix, the binary codes of the quantized scan and the partitions in front
    of them are each built on first use and then maintained row by row.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids: list[str] = []
        self.slot: dict[str, int] = {}
        self.records: list[Node] = []
        self.seqs: list[int] = []
        self.kind_codes: dict[str, int] = {}
        self._cap = 0
        self.visible = np.zeros(0, bool)
        self.kind = np.zeros(0, np.int32)
        self.t_start = np.zeros(0, np.int64)
        self.t_end = np.zeros(0, np.int64)
        self.has_emb = np.zeros(0, bool)
        self.visible_count = 0
        self.embedded_count = 0
        self._matrix: NDArray[np.float32] | None = None
        self._codes: BinaryCodes | None = None
        self._partitions: Partitions | None = None
        self._training: CellTraining | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def get(self, node_id: str) -> Node | None:
        """The stored record (not a copy), or ``None``."""
        i = self.slot.get(node_id)
        return None if i is None else self.records[i]

    def seq_of(self, node_id: str) -> int | None:
        """The ``seq`` of a stored node, or ``None``."""
        i = self.slot.get(node_id)
        return None if i is None else self.seqs[i]

    def _grow(self, need: int) -> None:
        if need <= self._cap:
            return
        cap = max(need, 2 * self._cap, 64)

        def grown(a: NDArray[Any]) -> NDArray[Any]:
            b = np.zeros((cap, *a.shape[1:]), a.dtype)
            b[: len(a)] = a
            return b

        self.visible, self.kind = grown(self.visible), grown(self.kind)
        self.t_start, self.t_end = grown(self.t_start), grown(self.t_end)
        self.has_emb = grown(self.has_emb)
        if self._matrix is not None:
            self._matrix = grown(self._matrix)
        if self._codes is not None:
            self._codes.grow(cap)
        if self._partitions is not None:
            self._partitions.grow(cap)
        self._cap = cap

    def put(self, node: Node, seq: int) -> None:
        """Insert or replace ``node`` (already a private copy the cache may keep)."""
        i = self.slot.get(node.id)
        if i is None:
            i = len(self.ids)
            self._grow(i + 1)
            self.ids.append(node.id)
            self.slot[node.id] = i
            self.records.append(node)
            self.seqs.append(seq)
        else:
            self.visible_count -= int(self.visible[i])
            self.embedded_count -= int(self.has_emb[i])
            self.records[i] = node
        code = self.kind_codes.setdefault(node.kind, len(self.kind_codes))
        self.kind[i] = code
        self.visible[i] = node.visible
        self.visible_count += int(node.visible)
        if node.time_start is None:
            self.t_start[i] = self.t_end[i] = NO_TIME
        else:
            self.t_start[i] = to_us(node.time_start)
            self.t_end[i] = to_us(node.time_end or node.time_start)
        self.has_emb[i] = node.embedding is not None
        self.embedded_count += int(node.embedding is not None)
        if self._training is not None:  # re-placed when the trained cells are laid out
            self._training.dirty.append(i)
        if self._matrix is None and self._codes is None:
            return
        unit = _unit(node.embedding, self.dim)
        if self._matrix is not None:
            self._matrix[i] = unit
        if self._codes is not None:  # searchable by the quantized scan at once
            self._codes.set(i, unit)
            if self._partitions is not None:  # ... and by the partitioned one
                self._partitions.set(i, unit)

    def load(self, nodes: list[Node], seqs: list[int], t_start_us: NDArray[np.int64],
             t_end_us: NDArray[np.int64], null_us: int) -> None:
        """Fill an empty table in one go (the cold-start path; `put` per node is 3x slower).

        ``t_*_us`` are the nodes' times in µs with ``null_us`` for missing ones.
        """
        assert not self.ids, "load() fills an empty table"
        n = len(nodes)
        self._grow(n)
        self.ids = [node.id for node in nodes]
        self.slot = {node_id: i for i, node_id in enumerate(self.ids)}
        self.records = list(nodes)
        self.seqs = list(seqs)
        codes = self.kind_codes
        self.kind[:n] = [codes.setdefault(node.kind, len(codes)) for node in nodes]
        self.visible[:n] = [node.visible for node in nodes]
        self.has_emb[:n] = [node.embedding is not None for node in nodes]
        has_time = t_start_us != null_us
        self.t_start[:n] = np.where(has_time, t_start_us, NO_TIME)
        self.t_end[:n] = np.where(has_time, np.where(t_end_us != null_us, t_end_us, t_start_us),
                                  NO_TIME)
        self.visible_count = int(self.visible[:n].sum())
        self.embedded_count = int(self.has_emb[:n].sum())

    def mask(self, where: NodeFilter | None) -> NDArray[np.bool_]:
        """Which slots pass ``where`` (a fresh array of length ``len(self)``)."""
        n = len(self.ids)
        m = np.ones(n, bool)
        if where is None:
            return m
        if where.kinds is not None:
            codes = [self.kind_codes[k] for k in where.kinds if k in self.kind_codes]
            m &= np.isin(self.kind[:n], np.asarray(codes, np.int32))
        if where.visible is not None:
            m &= self.visible[:n] == where.visible
        if where.ids is not None:
            sel = np.zeros(n, bool)
            sel[[self.slot[i] for i in where.ids if i in self.slot]] = True
            m &= sel
        if where.time_range is not None:
            lo, hi = (to_us(t) for t in where.time_range)
            ts, te = self.t_start[:n], self.t_end[:n]
            m &= (ts == NO_TIME) | ~((te < lo) | (ts > hi))
        return m

    def matrix(self) -> NDArray[np.float32]:
        """Unit rows by slot (zero rows for nodes without an embedding)."""
        if self._matrix is None:
            mat = np.zeros((self._cap, self.dim), np.float32)
            for i, node in enumerate(self.records):
                mat[i] = _unit(node.embedding, self.dim)
            self._matrix = mat
        return self._matrix[: len(self.ids)]

    def drop_matrix(self) -> None:
        """Free the matrix (namespaces searched through the ANN index do not need it)."""
        self._matrix = None

    @property
    def has_matrix(self) -> bool:
        """Whether the matrix is currently materialised."""
        return self._matrix is not None

    def unit_rows(self, start: int, stop: int) -> NDArray[np.float32]:
        """Unit vectors of slots ``start..stop-1`` (zero rows where no embedding); a copy."""
        if self._matrix is not None:
            return self._matrix[start:stop].copy()
        rows = np.zeros((stop - start, self.dim), np.float32)
        for j, node in enumerate(self.records[start:stop]):
            if node.embedding is not None:
                rows[j] = _unit(node.embedding, self.dim)
        return rows

    def unit_rows_at(self, slots: NDArray[np.intp]) -> NDArray[np.float32]:
        """Unit vectors of ``slots`` (zero rows where no embedding); a copy."""
        if self._matrix is not None:
            picked: NDArray[np.float32] = self._matrix[slots]
            return picked
        rows = np.zeros((len(slots), self.dim), np.float32)
        for j, i in enumerate(slots.tolist()):
            rows[j] = _unit(self.records[i].embedding, self.dim)
        return rows

    def codes(self) -> BinaryCodes:
        """The binary codes of every slot, built on first use and kept current by `put`.

        They are rebuilt (re-centred on the current mean) once the table has
        doubled since they were built: a one-off O(n) pass per doubling, so
        adding nodes stays amortised O(1) each and no small addition rebuilds.
        """
        n = len(self.ids)
        if self._codes is None or n >= 2 * max(self._codes.built_rows, 1):
            self._codes = BinaryCodes.build(self.dim, n, self._cap, self.unit_rows)
        return self._codes

    def partitions(self) -> Partitions:
        """The cells in front of the codes, trained on first use and kept current by `put`.

        Retrained only together with the codes (when the table has doubled):
        nodes written in between join their nearest cell at once.
        """
        codes = self.codes()
        if self._partitions is None or self._partitions.codes is not codes:
            training = self._training
            if training is not None and training.codes is codes:
                training.wait()  # one started in the background: use it, not a second one
                installed = self._install(training)
                if installed is not None:
                    return installed
            n = len(self.ids)
            self._partitions = Partitions.train(codes, n, self.has_emb[:n], self.unit_rows_at,
                                                self.unit_rows)
            self._partitions.grow(self._cap)
        return self._partitions

    def partitions_if_ready(self) -> Partitions | None:
        """The partitions if they are current, else ``None`` while they train in the background.

        The first call for the current codes starts a `CellTraining` and
        returns ``None``; the first call after it has finished lays the cells
        out (a sort, no training) and returns them. A failed training is
        logged and started again at the next call. Callers fall back to the
        quantized scan meanwhile.
        """
        codes = self.codes()
        if self._partitions is not None and self._partitions.codes is codes:
            return self._partitions
        training = self._training
        if training is not None and training.codes is codes:
            if not training.done.is_set():
                return None
            installed = self._install(training)
            if installed is not None:
                return installed
        self._training = CellTraining(
            codes, self.records, self.has_emb, self.dim,
            lambda node: _unit(node.embedding, self.dim)).start()
        return None

    def _install(self, training: CellTraining) -> Partitions | None:
        """Lay out a finished training's cells as the partitions (``None`` if it failed)."""
        self._training = None
        if training.error is not None:
            return None
        dirty = dict.fromkeys(training.dirty)  # each slot once, in write order
        units = {i: _unit(self.records[i].embedding, self.dim) for i in dirty}
        self._partitions = training.partitions(self._cap, units)
        return self._partitions

    @property
    def partitions_training(self) -> CellTraining | None:
        """The background training in flight, if any (tests and benchmarks wait on it)."""
        return self._training

    def drop_partitions(self) -> None:
        """Free the partitions (a benchmark measuring their build; searches rebuild them)."""
        self._partitions = None
        self._training = None

    def nbytes(self) -> int:
        """Approximate bytes of the numpy parts (columns and matrix)."""
        total = sum(a.nbytes for a in (self.visible, self.kind, self.t_start, self.t_end,
                                        self.has_emb))
        total += self._codes.nbytes() if self._codes is not None else 0
        total += self._partitions.nbytes() if self._partitions is not None else 0
        return total + (self._matrix.nbytes if self._matrix is not None else 0)


def _unit(embedding: NDArray[np.float32] | None, dim: int) -> NDArray[np.float32]:
    if embedding is None:
        return np.zeros(dim, np.float32)
    v = np.asarray(embedding, np.float32)
    # Same clip as the reference store: a zero vector stays zero (similarity 0).
    unit: NDArray[np.float32] = v / max(float(np.linalg.norm(v)), 1e-12)
    return unit


def top_k(scores: NDArray[np.float32], candidates: NDArray[np.intp], k: int) -> list[int]:
    """Indices into ``candidates`` of the ``k`` best scores, best first.

    Ties keep slot (insertion) order, as the reference store's stable sort does;
    `np.argpartition` first so the full sort only touches ``k`` (plus ties).
    """
    if len(candidates) == 0 or k <= 0:
        return []
    s = scores[candidates]
    if len(s) > k:
        part = np.argpartition(-s, k - 1)[:k]
        threshold = s[part].min()
        keep = np.flatnonzero(s >= threshold)
    else:
        keep = np.arange(len(s))
    order = keep[np.argsort(-s[keep], kind="stable")]
    return [int(candidates[i]) for i in order[:k]]


class EdgeGraph:
    """The edges of one namespace: records by id and the topology in igraph.

    igraph mutation costs O(E) per call whatever the batch size (about 85 ms at
    1M edges), so new edges go to a buffer that `incident` reads alongside the
    graph; the buffer is merged into the graph in one ``add_edges`` call once it
    holds a quarter of the graph and at least 1,024 edges (amortised O(1) per
    edge). An edge whose ends change (same id, new src or dst) marks the graph
    for a rebuild from the records.
    """

    def __init__(self) -> None:
        self.records: dict[str, Edge] = {}
        self.seqs: dict[str, int] = {}
        self._g: igraph.Graph | None = None
        self._vindex: dict[str, int] = {}
        self._vnames: list[str] = []
        self._geids: list[str] = []
        self._pending: list[str] = []
        self._pend_out: dict[str, list[str]] = {}
        self._pend_in: dict[str, list[str]] = {}
        self._stale = True

    def __len__(self) -> int:
        return len(self.records)

    def put(self, edge: Edge, seq: int) -> None:
        """Insert or replace ``edge`` (a private copy the cache may keep)."""
        old = self.records.get(edge.id)
        self.records[edge.id] = edge
        if old is None:
            self.seqs[edge.id] = seq
            if not self._stale:
                self._pending.append(edge.id)
                self._pend_out.setdefault(edge.src, []).append(edge.id)
                self._pend_in.setdefault(edge.dst, []).append(edge.id)
                if len(self._pending) >= max(1024, len(self._geids) // 4):
                    self._apply_pending()
        elif (old.src, old.dst) != (edge.src, edge.dst):
            self._stale = True

    def _rebuild(self) -> None:
        import igraph

        vindex: dict[str, int] = {}
        pairs: list[tuple[int, int]] = []
        geids: list[str] = []
        for eid, e in self.records.items():
            a = vindex.setdefault(e.src, len(vindex))
            b = vindex.setdefault(e.dst, len(vindex))
            pairs.append((a, b))
            geids.append(eid)
        # A list of tuples, not an ndarray: igraph builds 2.5x faster from it.
        self._g = igraph.Graph(n=len(vindex), edges=pairs, directed=True)
        self._vindex, self._vnames, self._geids = vindex, list(vindex), geids
        self._pending, self._pend_out, self._pend_in = [], {}, {}
        self._stale = False

    def _apply_pending(self) -> None:
        assert self._g is not None
        new_names: list[str] = []
        pairs: list[tuple[int, int]] = []
        for eid in self._pending:
            e = self.records[eid]
            for end in (e.src, e.dst):
                if end not in self._vindex:
                    self._vindex[end] = len(self._vnames)
                    self._vnames.append(end)
                    new_names.append(end)
            pairs.append((self._vindex[e.src], self._vindex[e.dst]))
        if new_names:
            self._g.add_vertices(len(new_names))
        self._g.add_edges(pairs)
        self._geids.extend(self._pending)
        self._pending, self._pend_out, self._pend_in = [], {}, {}

    def _ready(self) -> igraph.Graph:
        if self._stale or self._g is None:
            self._rebuild()
        assert self._g is not None
        return self._g

    def incident(self, node_id: str, mode: str) -> list[str]:
        """Ids of the edges leaving (``out``) or entering (``in``) ``node_id``."""
        g = self._ready()
        out: list[str] = []
        v = self._vindex.get(node_id)
        if v is not None:
            out.extend(self._geids[i] for i in g.incident(v, mode=mode))
        pend = self._pend_out if mode == "out" else self._pend_in
        out.extend(pend.get(node_id, ()))
        return out


@attrs.define
class Space:
    """What the store caches about one namespace; each part loads on first use."""

    nodes: NodeTable | None = None
    edges: EdgeGraph | None = None
    obs_ids: set[str] | None = None
