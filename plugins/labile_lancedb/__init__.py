"""The ``lancedb`` store bundle: LanceDB on disk, the embedded default store.

Only the registration hook lives here. The store imports lancedb when it is
built (the import costs about 1.4 s), never when the plugin is loaded. Its
benchmarks (``labile bench scale``, ``labile bench workers``) are in
`labile_bench`.
"""

from __future__ import annotations

from labile.plugin import Register, hookimpl


@hookimpl
def labile_register_stores(register: Register) -> None:
    """Register ``lancedb`` (`labile_lancedb.store.LanceStore`)."""
    from labile_lancedb.config import LanceStoreConfig
    from labile_lancedb.store import LanceStore

    register("lancedb", LanceStore, config=LanceStoreConfig,
             summary="LanceDB directory per memory: durable, crash-safe batches, vector "
                     "(exact, quantized or IVF_RQ) and BM25 full-text search; the embedded default")
