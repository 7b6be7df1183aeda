"""`LanceStoreConfig`: the options of the ``lancedb`` store (TOML ``[store]`` table).

Kept in its own module, with no heavy import, so that registering the plugin and
validating a config never imports lancedb (which costs about 1.4 s).
"""

from __future__ import annotations

from typing import Any

import attrs

from labile.plugin import bounded

__all__ = ["LanceStoreConfig"]


def _count(high: int) -> list[Any]:
    """Validators of a positive integer option up to ``high``."""
    return [attrs.validators.instance_of(int), bounded(1, high)]

#: The stemmer languages of LanceDB's full-text index (its ``lang_mapping``):
#: checked here so a config naming another fails at ``labile check``, not at open.
FTS_LANGUAGES = ("Arabic", "Danish", "Dutch", "English", "Finnish", "French", "German",
                 "Greek", "Hungarian", "Italian", "Norwegian", "Portuguese", "Romanian",
                 "Russian", "Spanish", "Swedish", "Tamil", "Turkish")


@attrs.frozen(kw_only=True)
class LanceStoreConfig:
    """Settings of `labile_lancedb.store.LanceStore`.

    Attributes:
        path: The store's directory (one LanceDB database per memory). It is
            created when missing. ``"memory://"`` gives a fresh temporary
            directory that is deleted on `close`; an empty path is refused (a
            store that keeps nothing must be asked for by name). An object-store URI
            (``s3://bucket/prefix``, ``gs://…``, ``az://…``) puts the store there
            (see `labile_lancedb._location` and the "Scaling out" docs page).
        storage_options: Object-store options that are not secret (endpoint,
            region, ``allow_http``), passed to LanceDB as they are.
        storage_options_env: Object-store options read from environment
            variables, by option name (credentials go here: their variable's
            name, never their value, is in the config).
        lease_ttl_s: On an object store, how long the writer lease lasts
            without renewal: a writer that died holds the store at most this
            long (a live one renews it every third of it).
        ann_threshold: Row count of the ``nodes`` table from which an IVF_RQ
            vector index is built (and kept refreshed), and node count of a
            namespace from which its ``auto`` vector searches use the quantized
            scan instead of the exact float scan.
        quantized_rerank: The quantized scan re-scores ``k * quantized_rerank``
            candidates (at least 256, and one in 1,024 of the namespace's nodes)
            with their float vectors (more: better recall, slower).
        partition_threshold: Node count of a namespace from which its ``auto``
            vector searches use the partitioned scan (the quantized scan
            restricted to the cells nearest the query) instead of the full
            quantized scan.
        partition_probe_share: Share of a namespace's cells that the
            partitioned scan reads per query (more: better recall, slower).
        nprobes: IVF partitions probed by an ANN search (more: better recall,
            slower).
        refine_factor: An ANN search re-ranks ``k * refine_factor`` candidates
            with full vectors (more: better recall, slower).
        ann_partition_rows: Target rows per IVF partition when the index is
            (re)trained.
        ann_retrain_growth: Retrain the index from scratch when the table has
            grown by this factor since the last training (in between, new rows
            are folded in incrementally by `LanceStore.optimize`).
        optimize_every: Compact the tables and fold new rows into the indexes
            after this many committed batches (small appends fragment LanceDB
            and slow queries down several-fold).
        keep_versions_s: Table versions younger than this survive `optimize`;
            readers in other processes still working on an older version can
            fail once it is cleaned up.
        read_consistency_s: How stale this process may be about commits made
            by another process, in seconds; ``0`` checks on every read.
        fts_language: Language of the full-text index's stemmer and stop words
            (one of `FTS_LANGUAGES`).
        deferred_commit_every: How many `LanceStore.deferred` blocks (one per
            `labile.Memory.feedback`) wait in memory before their edge writes are
            committed together; ``1`` commits each block at its exit, like a batch.
            A process killed meanwhile loses the waiting edits (see
            `labile_lancedb._carry`).
        deferred_max_age_s: ... or how old the oldest waiting edit may be at the
            end of a block before they are committed (an idle process commits
            them at its next batch, `LanceStore.flush` or `LanceStore.close`).
        lock_timeout_s: How long a writer waits for another process's batch
            (which holds the store's write lock, or its lease on an object
            store) before giving up with `labile_lancedb._lock.StoreBusyError`.
    """

    path: str = attrs.field(default="./memory", validator=attrs.validators.instance_of(str))
    ann_threshold: int = attrs.field(default=20_000, validator=_count(1_000_000_000))
    quantized_rerank: int = attrs.field(default=40, validator=_count(1000))
    partition_threshold: int = attrs.field(default=500_000, validator=_count(1_000_000_000))
    partition_probe_share: float = attrs.field(default=0.25, validator=[
        attrs.validators.instance_of(float), attrs.validators.gt(0.0),
        attrs.validators.le(1.0)])
    nprobes: int = attrs.field(default=20, validator=_count(100_000))
    refine_factor: int = attrs.field(default=10, validator=_count(1000))
    ann_partition_rows: int = attrs.field(default=4096, validator=[
        attrs.validators.instance_of(int), bounded(64, 10_000_000)])
    ann_retrain_growth: float = attrs.field(default=2.0, validator=attrs.validators.ge(1.1))
    optimize_every: int = attrs.field(default=20, validator=_count(1_000_000))
    keep_versions_s: float = attrs.field(default=600.0, validator=bounded(0.0, 2_592_000.0))
    read_consistency_s: float = attrs.field(default=0.0, validator=bounded(0.0, 86_400.0))
    fts_language: str = attrs.field(default="English", validator=[
        attrs.validators.instance_of(str), attrs.validators.in_(FTS_LANGUAGES)])
    lock_timeout_s: float = attrs.field(default=60.0, validator=bounded(0.0, 86_400.0))
    storage_options: dict[str, str] = attrs.field(factory=dict)
    storage_options_env: dict[str, str] = attrs.field(factory=dict)
    lease_ttl_s: float = attrs.field(default=30.0, validator=bounded(1.0, 86_400.0))
    deferred_commit_every: int = attrs.field(default=32, validator=_count(100_000))
    deferred_max_age_s: float = attrs.field(default=10.0, validator=bounded(0.0, 86_400.0))

    def __attrs_post_init__(self) -> None:
        from labile_lancedb._location import check_options

        check_options(self.path, self.storage_options, self.storage_options_env)
