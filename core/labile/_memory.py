"""`Memory`: the facade an agent uses — add, search, feedback, consolidate.

A `Memory` is built from a `PipelineConfig` by `labile._pipeline.build_pipeline`:
the embedder, the LLM client, the store (wrapped so the schema is enforced),
then the extractor, the retrieval atoms and the operators, each handed the
same `Deps`.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs
import pluggy

from labile._config import PipelineConfig, plugins_disabled, read_toml, resolve
from labile._errors import ConfigError, HistoryNotErasedWarning, InputError, StoreError
from labile._limits import Limits
from labile._logconfig import get_logger
from labile._model import (
    AddReport,
    Answer,
    Feedback,
    Hit,
    Node,
    NodeFilter,
    Observation,
    OperationReport,
    Query,
    RetrievalResult,
    Subgraph,
    TraceStep,
    as_known_at,
    utcnow,
)
from labile._page import Page
from labile._pipeline import Pipeline, build_pipeline
from labile._plugins import get_plugin_manager
from labile._protocols import (
    Answerer,
    Consolidator,
    Embedder,
    Expander,
    Extractor,
    Filter,
    LLMClient,
    Reconsolidator,
    Seeder,
    Store,
    embed_queries,
)
from labile._recorded import recorded_pipeline
from labile._recovery import (
    PENDING_KIND,
    add_batch,
    batch_of,
    count_pending,
    feedback_batch,
    repair_pending,
)
from labile._registry import Registries, collect
from labile._schema import Schema
from labile._usage import UsageMeter
from labile._validate import (
    check_bool,
    check_ids,
    check_int,
    check_namespace,
    check_node_filter,
    check_observation,
    check_optional_text,
    check_question,
)

log = get_logger(__name__)

ConfigLike = str | Path | Mapping[str, Any] | PipelineConfig | None


def build_registries(
    pm: pluggy.PluginManager | None = None, *, disable: Iterable[str] = ()
) -> Registries:
    """Registries from ``pm`` (or a fresh manager honouring ``disable``)."""
    return collect(pm or get_plugin_manager(block=disable))


class Memory:
    """A long-term memory pipeline.

    Build one with `Memory.open`. Every call takes a ``namespace``: an agent, a
    user, a conversation. Nothing crosses namespaces.
    """

    def __init__(
        self,
        config: PipelineConfig,
        registries: Registries,
        *,
        llm: LLMClient | None = None,
        embedder: Embedder | None = None,
        store: Store | None = None,
        create: bool = True,
        limits: Limits | None = None,
    ) -> None:
        """Build every component of ``config`` (see `labile._pipeline.build_pipeline`).

        ``llm``, ``embedder`` and ``store`` replace the configured component with
        a ready instance (bring your own client; scripted models in tests). A
        store with a directory records the pipeline there (`labile._recorded`).
        ``limits`` bounds what one ``add`` accepts (default `labile.Limits()`).

        Raises:
            ConfigError: a component needs an LLM and the pipeline has none, or
                the store was built by a pipeline that stores other things.
            StoreError: ``create`` is false and there is no store to open.
        """
        from labile._recorded import check_recorded, record

        if limits is not None and not isinstance(limits, Limits):
            raise InputError(f"limits must be a labile.Limits, got {type(limits).__name__}")
        #: The size limits `add` enforces; replace it to raise them.
        self.limits = Limits() if limits is None else limits
        unrecorded = store is None and check_recorded(config, create=create,
                                                             registries=registries)
        self.config = config
        self.registries = registries
        self.usage = UsageMeter()
        self.schema = Schema.from_registries(registries)
        self._adopt(build_pipeline(config, registries, schema=self.schema, usage=self.usage,
                                   llm=llm, embedder=embedder, store=store))
        if unrecorded:
            record(config)
        self._closed = False
        # One writer at a time: the existence check and the batch must not interleave.
        self._write_lock = threading.RLock()
        #: Other processes' commits the components have been rebuilt for (see
        #: `labile.plugin.SharedStore`); `None` for a store only this process writes.
        self.external_commits_seen: int | None = getattr(self.store, "external_commits", None)

    # -- construction -------------------------------------------------------
    @classmethod
    def open(
        cls,
        config: ConfigLike = None,
        *,
        preset: str | None = None,
        path: str | Path | None = None,
        plugin_manager: pluggy.PluginManager | None = None,
        create: bool = True,
        **instances: Any,
    ) -> Memory:
        """Open a memory from a config file, a table, or a preset.

        Args:
            config: A TOML path, a config table, a resolved `PipelineConfig`,
                or ``None``: the pipeline recorded in the store's directory, else
                the default preset.
            preset: Shorthand for ``{"preset": preset}`` (merged under ``config``).
            path: Shorthand for ``[store] path`` (the store's directory).
            plugin_manager: Use these plugins instead of discovering them.
            create: Create the store if it does not exist (``False``: raise
                `StoreError` instead, for read-only use).
            **instances: ``llm=``, ``embedder=`` or ``store=`` ready instances
                that replace the configured ones, and ``limits=`` (`labile.Limits`).
        """
        if isinstance(config, PipelineConfig):
            registries = build_registries(plugin_manager, disable=config.disable_plugins)
            return cls(config, registries, create=create, **instances)
        table: dict[str, Any] = {}
        if isinstance(config, str | Path):
            table = read_toml(config)
        elif config is not None:
            table = dict(config)
        if preset is not None:
            table.setdefault("preset", preset)
        if path is not None:
            store = dict(table.get("store", {}))
            store["path"] = str(path)
            table["store"] = store
        registries = build_registries(plugin_manager, disable=plugins_disabled(table))
        resolved = resolve(table, registries)
        if config is None and preset is None:
            resolved = recorded_pipeline(resolved, registries) or resolved
        return cls(resolved, registries, create=create, **instances)

    # -- write path ---------------------------------------------------------
    def add(self, observations: Iterable[Observation], *, namespace: str) -> AddReport:
        """Store observations and build memory from the new ones, as one batch.

        Observations whose id is already stored are skipped (and reported), so
        a crashed import can simply be run again; if they are still pending
        (see `repair`), their memory is built now. A batch that fails leaves
        nothing behind; an automatic consolidation pass that fails after it
        is reported in ``details["consolidation_failed"]``, not raised.

        Raises:
            InputError: duplicate ids within the batch, an empty observation
                (no text, no caption), an observation or a batch over `limits`
                (see `labile.Limits`, `labile.chunk_observation`), or a bad
                namespace; nothing is written.
        """
        self._ready(namespace)
        start = time.perf_counter()
        if isinstance(observations, str | bytes | Observation) or not isinstance(
                observations, Iterable):
            raise InputError("observations must be a list of Observation records, got "
                             f"{type(observations).__name__}")
        batch = list(observations)
        seen: set[str] = set()
        for index, obs in enumerate(batch):
            if not isinstance(obs, Observation):
                raise InputError(f"expected Observation records, got {type(obs).__name__}")
            check_observation(index, obs, namespace)
            if obs.id in seen:
                raise InputError(f"observation id {obs.id!r} appears twice in one batch")
            if not obs.text.strip() and not obs.metadata.get("caption"):
                raise InputError(
                    f"observation {obs.id!r} has empty text (and no caption): there is "
                    "nothing to remember; nothing in this batch was written"
                )
            seen.add(obs.id)
        self.limits.check(batch)
        with self._write_lock:
            report = add_batch(self, batch, namespace)
        report.ms = (time.perf_counter() - start) * 1000
        return report

    def repair(self, namespace: str) -> AddReport:
        """Build the observations whose memory could not be built when they were added
        (the model did not answer): batch by batch, in the order they were added.

        Returns a report whose ``added`` lists the observations built now and
        ``pending`` those still waiting (the model is still away). ``stats``
        counts them; a re-add of the same ids repairs them too.
        """
        self._ready(namespace)
        start = time.perf_counter()
        with self._write_lock:
            report = repair_pending(self, namespace)
        report.ms = (time.perf_counter() - start) * 1000
        return report

    # -- read path ----------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        namespace: str,
        k: int = 10,
        as_of: datetime | None = None,
        include_hidden: bool = False,
    ) -> RetrievalResult:
        """Retrieve the ``k`` most useful memories for ``query``.

        Runs the seeders (merged by node id, best score kept), then the
        expanders and filters in order, and returns the hits with the
        activated subgraph and a trace of every atom.

        ``as_of`` is when the question is asked (default now). Given, the
        search sees the memory as it was known then: nodes learned later
        (`Node.learned_at`) are left out (before expansion and before the
        filters, so they never take a place in the list), and a replacement
        (``valid_to``) made after ``as_of`` is not applied to the hits
        (docs/change.md).

        Nodes a retention policy hid by then (`Node.is_hidden`) are left out,
        before expansion and after it, unless ``include_hidden``.
        """
        self._ready(namespace)
        check_question("query", query, k, as_of)
        check_bool("include_hidden", include_hidden)
        t0 = time.perf_counter()
        vector = embed_queries(self.embedder, [query])[0]
        embed_ms = (time.perf_counter() - t0) * 1000
        q = Query(text=query, namespace=namespace, k=k, as_of=as_of or utcnow(), vector=vector)
        # One freshness check of the store for the whole search, not one per
        # store call: a REALM search makes dozens of reads.
        with self.store.reading(namespace):
            state: dict[str, Any] = {}
            trace: list[TraceStep] = []
            merged: dict[str, Hit] = {}
            for name, seeder in self.seeders:
                hits = self._timed(trace, name, "seed", 0, lambda s=seeder: s.seed(q, state))
                for hit in hits:
                    old = merged.get(hit.node.id)
                    if old is None or hit.score > old.score:
                        merged[hit.node.id] = hit
            # What was hidden, or not yet learned, at ``as_of`` is dropped before
            # expansion (a path from it is no better) and before the filters rank and
            # cut the list: learned later, a node would take a place in the top k
            # and then be dropped, leaving the list short or empty.
            def shown(hs: list[Hit]) -> list[Hit]:
                return [h for h in hs
                        if (include_hidden or not h.node.is_hidden(q.as_of))
                        and (as_of is None or h.node.learned_at <= as_of)]

            hits = shown(sorted(merged.values(), key=lambda h: (-h.score, h.node.id)))
            for name, expander in self.expanders:
                hits = self._timed(trace, name, "expand", len(hits),
                                   lambda e=expander, h=hits: e.expand(q, h, state))
            hits = shown(hits)
            for name, filt in self.filters:
                hits = self._timed(trace, name, "filter", len(hits),
                                   lambda f=filt, h=hits: f.filter(q, h, state))
            if not self.filters:
                hits = sorted(hits, key=lambda h: (-h.score, h.node.id))
            hits = [h for h in shown(hits) if h.node.kind != PENDING_KIND]
            if as_of is not None:
                hits = known_at(hits, as_of)
            hits = hits[:k]
            ids = [h.node.id for h in hits]
            id_set = set(ids)
            edges = tuple(
                e for e in self.store.edges_of(namespace, ids, direction="out") if e.dst in id_set
            )
        return RetrievalResult(
            query=q, hits=tuple(hits), subgraph=Subgraph(node_ids=tuple(ids), edges=edges),
            trace=tuple(trace), embed_ms=embed_ms,
            total_ms=(time.perf_counter() - t0) * 1000, state=state,
            renderer=self.registries.render_context,
        )

    def _timed(self, trace: list[TraceStep], name: str, stage: str, n_in: int,
               call: Any) -> list[Hit]:
        before = self.usage.totals()
        t0 = time.perf_counter()
        hits: list[Hit] = list(call())
        after = self.usage.totals()
        trace.append(TraceStep(
            atom=name, stage=stage, ms=(time.perf_counter() - t0) * 1000, n_in=n_in,
            n_out=len(hits), llm_calls=after.calls - before.calls,
            llm_tokens=(after.prompt_tokens + after.completion_tokens)
            - (before.prompt_tokens + before.completion_tokens),
        ))
        return hits

    def answer(
        self,
        question: str,
        *,
        namespace: str,
        k: int = 10,
        as_of: datetime | None = None,
        budget_tokens: int = 2000,
    ) -> Answer:
        """Answer ``question`` from memory with the pipeline's answerer.

        The answerer (``[answerer]``, by default ``llm.answerer``: retrieve,
        build a dated context within ``budget_tokens``, ask the pipeline's LLM,
        map citations to node ids, then run the reconsolidators with the
        answer) is a component like any other; see `labile._protocols.Answerer`.

        Raises:
            ConfigError: the pipeline has no answerer.
            InputError: a bad question, namespace, ``k``, ``as_of`` or budget.
        """
        self._ready(namespace)
        check_question("question", question, k, as_of)
        check_int("budget_tokens", budget_tokens, low=1, high=10_000_000)
        answerer: Answerer | None = self.components.get("answerer")
        if answerer is None:
            raise ConfigError("this pipeline has no answerer: name one in [answerer] "
                              "(the 'llm' plugin registers llm.answerer)")
        return answerer.answer(self, question, namespace=namespace, k=k, as_of=as_of,
                               budget_tokens=budget_tokens)

    # -- learning -----------------------------------------------------------
    def feedback(
        self, result: RetrievalResult, *, answer: str | None = None,
        cited: Sequence[str] = (), useful: bool | None = None,
    ) -> list[OperationReport]:
        """Let the reconsolidators learn from how ``result`` was used (one batch: if any
        fails, none of their edits is kept).

        With a store that defers writes (`labile.plugin.DeferredStore`, such as
        the LanceDB store) the edits are visible at once but become durable
        later, with those of other feedback calls; `close` makes them durable.
        """
        self._check_open()
        if not isinstance(result, RetrievalResult):
            raise InputError("result must be the RetrievalResult a search returned, got "
                             f"{type(result).__name__}")
        check_optional_text("answer", answer)
        cited = check_ids("cited", cited)
        if useful is not None:
            check_bool("useful", useful)
        fb = Feedback(answer=answer, cited=tuple(cited), useful=useful)
        reports: list[OperationReport] = []
        done: list[Reconsolidator] = []  # one batch: the feedback applies whole or not at all
        # A store that can defer the commit (`labile.plugin.DeferredStore`) makes the
        # edits durable with later ones: learning from each query costs no commit.
        with self._write_lock, feedback_batch(self, result.query.namespace, done):
            for _name, op in self.reconsolidators:
                done.append(op)
                reports.append(op.reconsolidate(result, fb))
        return reports

    def consolidate(self, *, namespace: str) -> list[OperationReport]:
        """Run every consolidator over ``namespace`` (one batch), then compact the store."""
        self._ready(namespace)
        reports: list[OperationReport] = []
        done: list[Consolidator] = []  # one batch: the pass applies whole or not at all
        with self._write_lock, batch_of(self, namespace, done):
            for _name, op in self.consolidators:
                done.append(op)
                reports.append(op.consolidate(namespace))
        self.store.optimize()
        return reports

    # -- reading back, forgetting -------------------------------------------
    def get(self, namespace: str, ids: Sequence[str]) -> Sequence[Observation]:
        """Observations by id, in the order asked; unknown ids are left out."""
        self._ready(namespace)
        return self.store.get_observations(namespace, check_ids("ids", ids))

    def get_nodes(self, namespace: str, ids: Sequence[str]) -> Sequence[Node]:
        """Nodes by id, in the order asked, each with its ``sources`` (observation ids)."""
        self._ready(namespace)
        return self.store.get_nodes(namespace, check_ids("ids", ids))

    def list(self, namespace: str, *, offset: int = 0, limit: int = 100) -> Page[Observation]:
        """One page of the namespace's observations, in insertion order."""
        self._ready(namespace)
        return Page.of(self.store.iter_observations(namespace), offset, limit)

    def list_nodes(
        self, namespace: str, *, offset: int = 0, limit: int = 100,
        where: NodeFilter | None = None,
    ) -> Page[Node]:
        """One page of the namespace's nodes passing ``where``, in insertion order."""
        self._ready(namespace)
        check_node_filter("where", where)
        return Page.of(self.store.iter_nodes(namespace, where), offset, limit)

    def forget(
        self, namespace: str, observation_ids: Sequence[str], *, erase: bool = False
    ) -> dict[str, Any]:
        """Remove observations and everything derived from them; returns the counts.

        Nodes built from them alone go with their edges; nodes other
        observations feed too are rebuilt by their bundle's forget handler or
        dropped (see `labile._forget`). Unknown ids are ignored (counted in
        ``unknown``). The components are rebuilt afterwards, as on reopening.
        With ``erase``, the store also drops its earlier data versions
        (`Store.erase_history`), which otherwise keep the removed rows for a
        while (LanceDB: ``keep_versions_s``).
        """
        from labile._forget import apply_forget, plan_forget

        self._ready(namespace)
        ids = check_ids("observation_ids", observation_ids)
        check_bool("erase", erase)
        with self._write_lock:
            plan = plan_forget(self.deps, namespace, ids)
            handlers = [c.factory for c in self.registries["forget_handler"]]
            counts = apply_forget(plan, handlers) if plan.forgotten else {"observations": 0}
            counts["unknown"] = len(set(ids) - plan.forgotten_ids)
            if plan.forgotten:
                self.reload_components()
            if erase and not self._erase_history():
                counts["history_erased"] = False
        log.info("observations_forgotten", namespace=namespace, **counts)
        return counts

    def purge(self, namespace: str, *, erase: bool = False) -> None:
        """Remove the whole namespace (``erase``: and its earlier data versions)."""
        self._ready(namespace)
        check_bool("erase", erase)
        with self._write_lock:
            self.store.purge(namespace)
            self.reload_components()
            if erase:
                self._erase_history()
        log.info("namespace_purged", namespace=namespace)

    def _erase_history(self) -> bool:
        """Erase the store's history after a committed removal; whether it worked.

        The removal stands whatever happens here, so a failure (a full disk) must not
        tell the caller it failed: it is reported as a `HistoryNotErasedWarning` (and
        logged), and ``labile repair`` or a later erase finishes the job.
        """
        try:
            self.store.erase_history()
        except StoreError as exc:
            log.warning("history_erase_failed", error=str(exc)[:500])
            warnings.warn(HistoryNotErasedWarning(
                f"the removal is committed, but erasing the store's history failed: {exc}"),
                stacklevel=3)
            return False
        return True

    @property
    def write_lock(self) -> threading.RLock:
        """Held by every write; hold it to write through ``store`` yourself (an import)."""
        return self._write_lock

    def reload_components(self) -> None:
        """Build the components afresh over the same store, embedder and LLM client,
        as reopening would: components drop in-memory state about the store's
        data (after a forget, a purge, or an import written under them)."""
        self._adopt(build_pipeline(self.config, self.registries, schema=self.schema,
                                   usage=self.usage, llm=self.llm, embedder=self.embedder,
                                   store=getattr(self.store, "inner", self.store)))

    def _adopt(self, built: Pipeline) -> None:
        self.embedder: Embedder = built.embedder
        self.llm: LLMClient = built.llm
        self.store: Store = built.store
        self.deps = built.deps
        #: Every built component by kind, bundle-declared pipeline kinds included.
        self.components = built.components
        self.extractor: Extractor = built.single("extractor")
        self.seeders: list[tuple[str, Seeder]] = built.listed("seeder")
        self.expanders: list[tuple[str, Expander]] = built.listed("expander")
        self.filters: list[tuple[str, Filter]] = built.listed("filter")
        self.reconsolidators: list[tuple[str, Reconsolidator]] = built.listed("reconsolidator")
        self.consolidators: list[tuple[str, Consolidator]] = built.listed("consolidator")

    # -- introspection ------------------------------------------------------
    def namespaces(self) -> dict[str, dict[str, int]]:
        """Every namespace that holds data, sorted by name, with its counts
        (``observations``, ``nodes``, ``edges``): how a mistyped name is found."""
        self._check_open()
        out: dict[str, dict[str, int]] = {}
        for ns in sorted(self.store.namespaces()):
            counts = self.store.stats(ns)
            out[ns] = {k: int(counts.get(k) or 0) for k in ("observations", "nodes", "edges")}
        return out

    def stats(self, namespace: str | None = None) -> dict[str, Any]:
        """Store counts, observations pending repair (`repair`), and LLM usage per operation."""
        if namespace is not None:
            _check_namespace(namespace)
        spaces = [namespace] if namespace is not None else self.store.namespaces()
        return {
            "pipeline": {"preset": self.config.preset, "store": self.config.store.type,
                         "embedder": self.embedder.name, "extractor": self.config.extractor.type},
            "store": self.store.stats(namespace),
            "pending": sum(count_pending(self.store, ns) for ns in spaces),
            "llm": self.usage.snapshot(),
        }

    def close(self) -> None:
        """Flush and release the store. Idempotent."""
        if not self._closed:
            self._closed = True
            self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise InputError("this Memory is closed")

    def _ready(self, namespace: object) -> None:
        """Refuse a call on a closed memory or with a bad namespace."""
        self._check_open()
        _check_namespace(namespace)


def _check_namespace(namespace: object) -> None:
    check_namespace(namespace)


def known_at(hits: list[Hit], as_of: datetime) -> list[Hit]:
    """``hits`` as known at ``as_of``: those learned later dropped, later
    replacements not applied (`labile._model.as_known_at`). Order is kept.

    A node with no time of its own (no statement time, no start: an entity, a
    derived summary) counts as learned when it was created, so it is dropped
    when made after ``as_of``: its sources may reach turns said after then."""
    out: list[Hit] = []
    for h in hits:
        if h.node.learned_at > as_of:
            continue
        node = as_known_at(h.node, as_of)
        out.append(h if node is h.node else attrs.evolve(h, node=node))
    return out
