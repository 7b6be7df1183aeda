"""Recovering from failed batches, and the pending work they leave.

Two things can go wrong while a `Memory` writes, and both are handled here:

* **A batch rolls back** (an exception, a failed commit, Ctrl-C). The store
  undoes its writes; every component whose call ran inside the batch is told
  (`labile.plugin.RollbackAware.on_rollback`) and returns to its state before
  the call. A participant that cannot makes the memory rebuild every component
  from the store, as reopening would.
* **The extractor could not build memory** because the model did not answer
  (it lists those observations in `AddReport.pending`). The observations are
  evidence and are kept, but the batch's memory is built all or nothing: its
  derived writes are rolled back and each of its observations gets a *pending
  mark*, a node of kind ``labile.pending`` citing it. Marks live in the store
  (they survive reopening, go with a forgotten observation, and never reach a
  search); `repair` builds the marked observations later in their original
  batches and order, so a repaired namespace equals one that never failed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

import attrs

from labile._logconfig import get_logger
from labile._model import AddReport, Node, NodeFilter, NodeKind, Observation
from labile._protocols import DeferredStore, RollbackAware, Store

if TYPE_CHECKING:
    from labile._memory import Memory

__all__ = ["PENDING", "PENDING_KIND", "add_batch", "batch_of", "build", "count_pending",
           "feedback_batch", "pending_ids", "repair_pending", "roll_back", "rolling_back"]

log = get_logger(__name__)

#: The node kind of a pending mark (registered by the kernel's own plugin).
PENDING_KIND: Final = "labile.pending"
#: Its registration: no text of its own, so no search finds it.
PENDING: Final = NodeKind(name=PENDING_KIND, fields=("batch", "position"),
                          summary="an observation whose memory is still to be built")


def roll_back(memory: Memory, namespace: str, participants: Sequence[Any]) -> None:
    """The store rolled back a batch of ``namespace`` in which ``participants`` ran:
    each returns to its state before the batch, or every component is rebuilt."""
    rebuild = False
    for component in participants:
        if not isinstance(component, RollbackAware):
            rebuild = True
            continue
        try:
            component.on_rollback(namespace)
        except Exception:
            log.exception("component_rollback_failed", namespace=namespace,
                          component=type(component).__name__)
            rebuild = True
    if rebuild:
        memory.reload_components()


@contextmanager
def rolling_back(memory: Memory, namespace: str, participants: Sequence[Any]) -> Iterator[None]:
    """Roll ``participants`` back if the block raises (the block opens the store batch).

    ``participants`` is read when the block fails, so a caller can append a
    component just before calling it: one whose call never started is not told.
    """
    try:
        yield
    except BaseException:
        roll_back(memory, namespace, participants)
        raise


@contextmanager
def batch_of(memory: Memory, namespace: str, participants: Sequence[Any]) -> Iterator[None]:
    """``memory.store.batch(namespace)`` that rolls ``participants`` back with the store.

    Once the batch holds the store's write lock, the memory first catches up
    with other processes' commits (`catch_up`): callers read the components
    they run from ``memory`` inside the block, not before it.
    """
    with rolling_back(memory, namespace, participants), memory.store.batch(namespace):
        catch_up(memory)
        yield


@contextmanager
def feedback_batch(memory: Memory, namespace: str, participants: Sequence[Any]) -> Iterator[None]:
    """The block a feedback runs in: the store's ``deferred`` block when it has one
    (`labile.plugin.DeferredStore`: durable later, not one commit per feedback),
    else `batch_of`. Either way an exception rolls ``participants`` back with it."""
    store = memory.store
    if not isinstance(store, DeferredStore):
        with batch_of(memory, namespace, participants):
            yield
        return
    with rolling_back(memory, namespace, participants), store.deferred(namespace):
        catch_up(memory)
        yield


def catch_up(memory: Memory) -> None:
    """Rebuild the components if the store took in another process's commit since the
    memory last looked (`labile.plugin.SharedStore`); call with the write lock held.

    Components keep in-memory state about what they wrote (the last event of a
    session, the previous unit, a consolidation buffer); data another process
    wrote is not in it, so the next write would build on a stale picture. A
    rebuild reads that state back from the store, as reopening would.
    """
    seen = getattr(memory.store, "external_commits", None)
    if seen is None or seen == memory.external_commits_seen:
        return
    log.info("components_rebuilt_after_external_commit", commits=seen,
             before=memory.external_commits_seen)
    memory.reload_components()
    memory.external_commits_seen = seen


class _Unbuilt(Exception):
    """The extractor reported pending observations: roll the batch's memory back."""


def build(memory: Memory, namespace: str, observations: Sequence[Observation],
          report: AddReport, *, stored: bool = False) -> None:
    """Store ``observations`` (unless already ``stored``) and build their memory, as one batch.

    If the extractor reports any of them pending, the batch's derived writes are
    rolled back and every observation of the batch is stored with a pending mark
    instead (``report.pending`` then lists them all). Once built, each
    consolidator's ``after_add`` runs in a batch of its own; if one fails, its
    pass is rolled back and reported in ``details["consolidation_failed"]``
    (the add stays acknowledged: it is stored and built).
    """
    store = memory.store
    ids = [o.id for o in observations]
    participants: list[Any] = []
    try:
        with batch_of(memory, namespace, participants):
            if stored:
                store.delete(namespace, node_ids=[_mark_id(i) for i in ids])
            else:
                # Which ids are new is decided again inside the batch: a store shared
                # by processes holds its write lock for the whole batch, so another
                # writer's commit of the same ids since the caller's check is seen
                # here, never duplicated.
                late = store.existing_observation_ids(namespace, set(ids))
                if late:
                    observations = [o for o in observations if o.id not in late]
                    ids = [o.id for o in observations]
                    report.added[:] = [i for i in report.added if i not in late]
                if not observations:
                    return
                store.add_observations(namespace, observations)
            extractor = memory.extractor  # read after `catch_up`, which may rebuild it
            participants.append(extractor)
            extractor.ingest(namespace, observations, report)
            if report.pending:
                raise _Unbuilt
    except _Unbuilt:
        pass
    else:
        for name, consolidator in memory.consolidators:
            try:
                with rolling_back(memory, namespace, [consolidator]):
                    auto = consolidator.after_add(namespace, report)
            except Exception as exc:
                # The add is durable already: a failed automatic pass must not
                # make it look lost. Its buffer stays; the next pass takes it.
                log.warning("auto_consolidation_failed", namespace=namespace,
                            consolidator=name, error=str(exc)[:300])
                report.details.setdefault("consolidation_failed", {})[name] = str(exc)[:300]
                continue
            if auto is not None:
                report.details.setdefault("consolidation", {})[name] = auto.counts
        return
    log.warning("memory_pending", namespace=namespace, observations=len(ids),
                unbuilt=len(report.pending))
    report.pending = ids
    report.nodes_written = report.edges_written = 0
    if stored:
        return  # the rollback kept the marks
    now = memory.deps.clock()
    key = hashlib.blake2b("\n".join(ids).encode("utf-8", "surrogatepass"),
                          digest_size=8).hexdigest()
    marks = [Node(id=_mark_id(oid), kind=PENDING_KIND, sources=(oid,), created_at=now,
                  updated_at=now, attrs={"batch": key, "position": i})
             for i, oid in enumerate(ids)]
    with store.batch(namespace):
        store.add_observations(namespace, observations)
        store.upsert_nodes(namespace, marks)


def add_batch(memory: Memory, batch: Sequence[Observation], namespace: str) -> AddReport:
    """What `Memory.add` does once its input is checked (its write lock held): skip the
    stored ids (repairing those still pending), store and build the new ones."""
    ids = {o.id for o in batch}
    existing = memory.store.existing_observation_ids(namespace, ids)
    new = [attrs.evolve(o, namespace=namespace) for o in batch if o.id not in existing]
    report = AddReport(namespace=namespace, added=[o.id for o in new],
                       skipped_existing=[o.id for o in batch if o.id in existing])
    if existing:
        log.info("observations_already_stored", namespace=namespace, count=len(existing))
        waiting = pending_ids(memory.store, namespace) & existing
        if waiting:  # a re-add of pending observations builds them
            repaired = repair_pending(memory, namespace, waiting)
            report.details["repaired"] = repaired.added
            report.pending += repaired.pending
    if new:
        built = AddReport(namespace=namespace, added=list(report.added))
        build(memory, namespace, new, built)
        if len(built.added) < len(report.added):  # another process stored some meanwhile
            report.skipped_existing += [i for i in report.added if i not in set(built.added)]
            report.added = built.added
        report.nodes_written, report.edges_written = built.nodes_written, built.edges_written
        report.details.update(built.details)
        report.pending += built.pending
    return report


def _mark_id(observation_id: str) -> str:
    return f"{PENDING_KIND}:{observation_id}"


def _pending_batches(store: Store, namespace: str) -> list[list[str]]:
    """Pending observation ids grouped by the batch that stored them, oldest first."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for mark in store.iter_nodes(namespace, NodeFilter(kinds={PENDING_KIND})):
        group = groups.setdefault(str(mark.attrs.get("batch", mark.id)), [])
        group.append((int(mark.attrs.get("position", 0)), mark.sources[0]))
    return [[oid for _, oid in sorted(group)] for group in groups.values()]


def pending_ids(store: Store, namespace: str) -> set[str]:
    """Ids of ``namespace``'s observations whose memory is still to be built."""
    return {oid for group in _pending_batches(store, namespace) for oid in group}


def count_pending(store: Store, namespace: str) -> int:
    """How many observations of ``namespace`` are pending."""
    return store.count_nodes(namespace, NodeFilter(kinds={PENDING_KIND}))


def repair_pending(memory: Memory, namespace: str, only: set[str] | None = None) -> AddReport:
    """Build the pending observations of ``namespace`` (those in ``only``, if given).

    Each original batch is built as one batch again, oldest first; the first
    that stays pending stops the repair, so later batches never overtake it.
    The report's ``added`` lists the observations built now, ``pending`` the
    ones still waiting.
    """
    report = AddReport(namespace=namespace)
    waiting = _pending_batches(memory.store, namespace)
    for index, group in enumerate(waiting):
        ids = [i for i in group if only is None or i in only]
        if not ids:
            continue
        part = AddReport(namespace=namespace, added=ids)
        build(memory, namespace, memory.store.get_observations(namespace, ids), part,
              stored=True)
        if part.pending:
            report.pending = [i for g in waiting[index:] for i in g
                              if only is None or i in only]
            break
        report.added += ids
        report.nodes_written += part.nodes_written
        report.edges_written += part.edges_written
        for key, value in part.details.items():
            report.details.setdefault(key, value)
    if report.added:
        log.info("memory_repaired", namespace=namespace, observations=len(report.added),
                 still_pending=len(report.pending))
    return report
