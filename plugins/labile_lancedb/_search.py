"""The search paths: exact and quantized vector search in numpy, ANN (IVF_RQ) and
full-text in LanceDB.

Vector search runs over the namespace's in-memory structures
(`labile_lancedb._cache.NodeTable`), which hold that namespace's rows only, so
a search never pays for other namespaces' data:

* **exact**: a float scan of the normalised vector matrix. Below tens of
  thousands of vectors it beats every index, and it is what ``auto`` uses in a
  namespace of at most ``ann_threshold`` nodes (or when the filter leaves at
  most `EXACT_CANDIDATES`), so small memories get exact results.
* **quantized**: a Hamming scan of the binary codes
  (`labile_lancedb._quantized`) picks `rerank_count` candidates, which are
  re-scored exactly with their float vectors. At 100k vectors it costs about
  a third of the float scan's CPU at recall@10 1.0 on latent-structured data;
  new rows are searchable at once. ``auto`` uses it in larger namespaces.
* **partitioned**: the same, but the Hamming distances are computed only in
  the cells (`labile_lancedb._partitions`) whose centroids are nearest the
  query, a share `probe_count` of them; ``auto`` uses it in namespaces of more
  than ``partition_threshold`` nodes, where even the code scan is too long.
  ``auto`` never waits for the cells to be trained: the first search past the
  threshold starts their training in a background thread
  (`labile_lancedb._training`) and the quantized scan answers until it is done.
* **ann**: LanceDB's IVF_RQ index, only when asked for (``mode="ann"``): at
  30k and 100k vectors it costs several times the quantized scan's CPU time
  (``labile bench scale``; see ``docs/store.md``).

Full-text search (BM25 over ``search_text``) runs in memory too, with the
namespace's own statistics, in namespaces of at most
`labile_lancedb._lexical.EXACT_TEXT_MAX_NODES` nodes; larger ones are
searched by LanceDB's full-text index, whose statistics span the whole table.
Searches that run inside LanceDB cannot see the transaction's in-memory write
buffer, so the caller flushes this thread's buffered rows out first (under the
transaction's intent: a rollback or a crash still undoes them).

Every result is a list of ``(node, score)`` with copies of the cached
records, best first; ties keep insertion order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final, Literal

import numpy as np
from numpy.typing import NDArray

from labile.plugin import NodeFilter, Scored
from labile_lancedb import _sql
from labile_lancedb._cache import NodeTable, copy_node, top_k
from labile_lancedb._lexical import exact_text_search
from labile_lancedb._tables import LanceTables

__all__ = ["EXACT_CANDIDATES", "MAX_SHARE_RERANK", "MIN_RERANK", "RERANK_FRACTION", "SearchMode",
           "ann_search", "auto_path", "partitioned_search", "probe_count", "quantized_search",
           "rerank_count", "text_search", "vector_search"]

#: Namespaces with at most this many filter candidates are searched exactly even
#: when an approximate path applies: scoring a few thousand vectors is fast and exact.
EXACT_CANDIDATES: Final = 4096

#: The quantized scan re-ranks at least this many candidates, whatever ``k``: with
#: fewer, a small ``k`` would lose recall to the coarse 1-bit ranking.
MIN_RERANK: Final = 256

#: The quantized scan re-ranks at least one in this many of the namespace's nodes. On
#: MiniLM vectors of LoCoMo turns, re-ranking 1% of them gives recall@10 0.974, 0.4%
#: only 0.829 (real questions sit far from every turn, so many codes tie); the
#: synthetic benchmark needs far less.
RERANK_FRACTION: Final = 100

#: ... but that share stops growing past this many, reached at ~100k nodes: the
#: asymmetric step and the float re-rank grow with it (CPU per query at 1M nodes:
#: 976 candidates 13.8 ms, 2,048 33 ms, 10,000 86 ms; at 100k, 1,000 cost 5.1 ms
#: against 2.8 ms for 400).
MAX_SHARE_RERANK: Final = 1024

SearchMode = Literal["auto", "exact", "quantized", "partitioned", "ann"]


def vector_search(tables: LanceTables, namespace: str, table: NodeTable, q: NDArray[np.float32],
                  k: int, where: NodeFilter | None, mode: SearchMode,
                  flush: Callable[[], None]) -> list[Scored]:
    """Top-``k`` nodes of ``table`` (``namespace``'s) by cosine to the unit vector ``q``.

    ``mode`` as in `labile_lancedb.store.LanceStore.vector_search`; ``"ann"``
    falls back to exact when no index exists. ``k`` is positive and the table
    is not empty (the caller has checked).
    """
    n = len(table)
    # Without a filter the candidates are the embedded nodes, already counted: the mask
    # (a pass over the namespace, ~1 ms at 1M nodes) is built only for paths that read it.
    cand = None if where is None else table.mask(where) & table.has_emb[:n]
    n_cand = table.embedded_count if cand is None else int(cand.sum())
    config = tables.config
    if mode == "ann" and tables.has_ann_index():
        # A filter that keeps every embedded node need not reach LanceDB (a
        # prefilter costs a pass over the table).
        needed = where if n_cand < table.embedded_count else None
        flush()
        return ann_search(tables, namespace, table, q, k, needed)
    path = auto_path(n, n_cand, config.ann_threshold, config.partition_threshold) if (
        mode == "auto") else mode
    if path == "exact" or path == "ann":  # "ann" without an index: exact
        # A namespace the exact scan serves keeps its matrix (built once, then kept
        # current by every write): stacking a filter's candidates per query costs more.
        return _exact(table, q, k, np.flatnonzero(table.has_emb[:n] if cand is None else cand),
                      use_matrix=n <= config.ann_threshold)
    if mode == "auto":  # an approximate path serves this namespace: free the float matrix
        table.drop_matrix()
    if path == "partitioned":
        # ``auto`` does not wait for the cells: they train in the background, and the
        # quantized scan (exact scores, more CPU) answers until they are ready.
        parts = table.partitions() if mode == "partitioned" else table.partitions_if_ready()
        if parts is not None:
            probes = probe_count(parts.cells, config.partition_probe_share, n_cand,
                                 table.embedded_count)
            return partitioned_search(table, q, k, cand,
                                      rerank_count(k, 0, config.quantized_rerank), probes)
    return quantized_search(table, q, k, table.has_emb[:n].copy() if cand is None else cand,
                            rerank_count(k, n, config.quantized_rerank))


def auto_path(n: int, n_cand: int, ann_threshold: int,
              partition_threshold: int) -> Literal["exact", "quantized", "partitioned"]:
    """The path ``auto`` takes for a namespace of ``n`` nodes whose filter leaves ``n_cand``.

    Exact up to ``ann_threshold`` nodes or `EXACT_CANDIDATES` candidates (exact
    and fast there); the partitioned scan past ``partition_threshold`` nodes;
    the quantized scan in between (``labile bench scale`` measures each).
    """
    if n <= ann_threshold or n_cand <= min(EXACT_CANDIDATES, ann_threshold):
        return "exact"
    return "partitioned" if n > partition_threshold else "quantized"


def probe_count(cells: int, share: float, n_cand: int, embedded: int) -> int:
    """Cells the partitioned scan probes: ``share`` of them, more under a filter.

    A filter that keeps a fraction of the embedded nodes scales the probe up
    by its inverse, so about as many candidates are scored as without it (the
    search itself doubles the probe again if the cells still hold too few).
    """
    keep = max(n_cand, 1) / max(embedded, 1)
    return max(1, min(cells, math.ceil(cells * share / min(keep, 1.0))))


def rerank_count(k: int, n: int, per_result: int) -> int:
    """How many Hamming-nearest candidates the quantized scan re-scores.

    ``k * per_result``, at least `MIN_RERANK`, and at least one in
    `RERANK_FRACTION` of the ``n`` nodes up to `MAX_SHARE_RERANK`: the more
    nodes, the more of them share a code distance with the true neighbours,
    so the re-rank widens with the namespace (at 100k nodes 1,000
    candidates). The partitioned
    scan passes ``n = 0``: it reads a share of the cells, and 1% of a 1M
    namespace would cost more than its whole probe.
    """
    return max(k * per_result, MIN_RERANK, min(n // RERANK_FRACTION, MAX_SHARE_RERANK))


def quantized_search(table: NodeTable, q: NDArray[np.float32], k: int,
                     candidates: NDArray[np.bool_], rerank: int) -> list[Scored]:
    """Top-``k`` among the ``rerank`` slots of ``candidates`` nearest in Hamming distance.

    The scores are exact cosines (the re-rank uses the float vectors); only
    which nodes get scored is approximate.
    """
    slots = table.codes().nearest(q, candidates, rerank)
    return _score_slots(table, q, k, slots)


def partitioned_search(table: NodeTable, q: NDArray[np.float32], k: int,
                       candidates: NDArray[np.bool_] | None, rerank: int,
                       probes: int) -> list[Scored]:
    """Top-``k`` among the ``rerank`` slots of ``candidates`` (``None``: every embedded node)
    in the ``probes`` nearest cells, picked by Hamming distance and the asymmetric step;
    scores are exact cosines."""
    slots = table.partitions().nearest(q, candidates, rerank, probes)
    return _score_slots(table, q, k, slots)


def _exact(table: NodeTable, q: NDArray[np.float32], k: int,
           idx: NDArray[np.intp], *, use_matrix: bool = False) -> list[Scored]:
    """Exact cosine over the candidate slots ``idx`` (with the matrix, built if need be,
    when ``use_matrix``)."""
    if use_matrix or table.has_matrix or len(idx) > EXACT_CANDIDATES:
        sims = table.matrix() @ q
        best = top_k(sims, idx, k)
        return [(copy_node(table.records[i]), float(sims[i])) for i in best]
    # Few candidates and no matrix (a large namespace): score just them.
    return _score_slots(table, q, k, idx)


def _score_slots(table: NodeTable, q: NDArray[np.float32], k: int,
                 idx: NDArray[np.intp]) -> list[Scored]:
    """Exact cosine of the embedded slots ``idx`` (ascending), without the matrix."""
    rows = [table.records[i].embedding for i in idx]
    # np.array, not np.stack: the same matrix from equal-length rows at a sixth of the
    # cost (stack checks and reshapes every row; 0.85 against 0.14 ms for 400 rows).
    mat = (np.array([r for r in rows if r is not None], dtype=np.float32) if len(idx)
           else np.zeros((0, table.dim), np.float32))
    norms = np.clip(np.linalg.norm(mat, axis=1), 1e-12, None)
    sims_c = ((mat @ q) / norms).astype(np.float32)
    best_c = top_k(sims_c, np.arange(len(idx)), k)
    return [(copy_node(table.records[idx[i]]), float(sims_c[i])) for i in best_c]


def ann_search(tables: LanceTables, namespace: str, table: NodeTable, q: NDArray[np.float32],
               k: int, where: NodeFilter | None) -> list[Scored]:
    """Top-``k`` by the IVF_RQ index; the buffer must already be flushed."""
    # A prefilter costs LanceDB a pass over the whole table (40 ms at 1M rows, 10 ms
    # with bitmap indexes) against ~10 ms for the search itself. When this namespace
    # owns every row, or every node has an embedding, those clauses select everything:
    # leave them out, and check the namespace of each row that comes back instead.
    sole = len(table) == tables.node_rows()
    out = ann_query(tables, namespace, table, q, k, where, namespace_clause=not sole)
    if out is None:  # another namespace's rows appeared meanwhile: filter properly
        out = ann_query(tables, namespace, table, q, k, where, namespace_clause=True)
    assert out is not None  # with the namespace clause every row is the namespace's
    return out


def ann_query(tables: LanceTables, namespace: str, table: NodeTable, q: NDArray[np.float32],
              k: int, where: NodeFilter | None, *, namespace_clause: bool) -> list[Scored] | None:
    """One index query; ``None`` if a row of another namespace came back (no clause)."""
    config = tables.config
    sql = _sql.node_filter(namespace if namespace_clause else None, where,
                           embedded=table.embedded_count < len(table))
    query = (tables.reader("nodes", namespace).search(q, vector_column_name="embedding")
             .distance_type("cosine"))
    if sql:
        query = query.where(sql, prefilter=True)
    # maximum_nprobes 0: LanceDB may probe past `nprobes` when the filter leaves too
    # few rows in the probed partitions, so narrow filters still get k results.
    res = (query.minimum_nprobes(config.nprobes).maximum_nprobes(0)
           .refine_factor(config.refine_factor)
           .select(["id", "namespace", "_distance"]).limit(k).to_arrow())
    out: list[Scored] = []
    for node_id, ns, dist in zip(res.column("id").to_pylist(),
                                 res.column("namespace").to_pylist(),
                                 res.column("_distance").to_pylist(), strict=True):
        if ns != namespace:
            return None
        node = table.get(node_id)
        if node is not None and node.embedding is not None:
            out.append((copy_node(node), 1.0 - float(dist)))
    out.sort(key=lambda item: -item[1])
    return out


def text_search(tables: LanceTables, namespace: str, table: NodeTable, text: str, k: int,
                where: NodeFilter | None) -> list[Scored]:
    """Top-``k`` by BM25; ``text`` non-blank, ``k > 0``.

    Exact, with the namespace's own statistics, when the namespace is small
    enough (`labile_lancedb._lexical`); otherwise LanceDB's index answers, and
    the buffer must already be flushed.
    """
    exact = exact_text_search(table, text, k, where)
    if exact is not None:
        return exact
    # As in `ann_search`: no namespace prefilter when it would select every row.
    sole = len(table) == tables.node_rows()
    hits = fts_query(tables, namespace, table, text, k, where, namespace_clause=not sole)
    if hits is None:
        hits = fts_query(tables, namespace, table, text, k, where, namespace_clause=True)
    assert hits is not None  # with the namespace clause every row is the namespace's
    return hits


def fts_query(tables: LanceTables, namespace: str, table: NodeTable, text: str, k: int,
              where: NodeFilter | None, *, namespace_clause: bool) -> list[Scored] | None:
    """One full-text query, the words OR-ed; ``None`` as for `ann_query`."""
    from lancedb.query import FullTextOperator, MatchQuery

    match = MatchQuery(text, "search_text", operator=FullTextOperator.OR)  # type: ignore[call-arg]
    query = tables.reader("nodes", namespace).search(match, query_type="fts")
    sql = _sql.node_filter(namespace if namespace_clause else None, where)
    if sql:
        query = query.where(sql, prefilter=True)
    res = query.select(["id", "namespace", "_score"]).limit(k).to_arrow()
    hits = []
    for node_id, ns, score in zip(res.column("id").to_pylist(),
                                  res.column("namespace").to_pylist(),
                                  res.column("_score").to_pylist(), strict=True):
        if ns != namespace:
            return None
        node = table.get(node_id)
        if node is not None and score > 0:
            hits.append((table.slot[node_id], node, float(score)))
    hits.sort(key=lambda h: (-h[2], h[0]))
    return [(copy_node(node), score) for _, node, score in hits]
