"""The ports: one `typing.Protocol` per component kind.

A plugin's factory is called as ``factory(config, deps)`` and must return an
object satisfying the protocol of its kind. Protocols are structural: a
component does not inherit from them. Every method here is synchronous; an
async facade can wrap them later without changing these contracts.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import attrs
import numpy as np
from numpy.typing import NDArray

from labile._model import (
    AddReport,
    Answer,
    Edge,
    Feedback,
    Hit,
    Node,
    NodeFilter,
    Observation,
    OperationReport,
    Query,
    RetrievalResult,
    utcnow,
)

if TYPE_CHECKING:
    from labile._memory import Memory
    from labile._registry import Registries
    from labile._schema import Schema
    from labile._usage import UsageMeter

Direction = Literal["out", "in", "both"]
Scored = tuple[Node, float]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors.

    ``name`` identifies the model and is persisted by stores, so a store never
    mixes vectors of two models; ``dim`` is the vector length. A model that
    embeds questions differently from stored texts also has an optional
    ``embed_queries(texts)`` (same contract); see `embed_queries`.
    """

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed ``texts`` as a float32 ``(len(texts), dim)`` array of unit rows."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> NDArray[np.float32]:
    """Embed ``texts`` as search queries: the side of a search that asks.

    Some models embed a question and the passage that answers it differently
    (an instruction prefix per side). Such an embedder has an optional
    ``embed_queries(texts)`` beside ``embed``; ``embed`` then embeds what is
    stored. Callers that embed a query go through this function, so an
    embedder without the method (one space for both sides) needs nothing new.
    """
    method = getattr(embedder, "embed_queries", None)
    if callable(method):
        out: NDArray[np.float32] = method(texts)
        return out
    return embedder.embed(texts)


@runtime_checkable
class LLMClient(Protocol):
    """A chat model behind one interface (hosted, local, or scripted).

    ``operation`` names what the call is for (``"extract"``, ``"plan"``,
    ``"answer"`` …) so usage is accounted per operation.
    """

    name: str

    def complete_json(
        self,
        prompt: str,
        schema: Mapping[str, Any],
        *,
        operation: str,
        system: str | None = None,
    ) -> Any:
        """Return the model's JSON answer, already validated against ``schema``.

        Raises:
            LLMOutputError: the output stayed invalid after the allowed
                repairs; callers apply nothing from it (fail closed).
            LLMError: the call failed for good (auth, retries exhausted).
        """
        ...

    def complete_text(
        self,
        prompt: str,
        *,
        operation: str,
        system: str | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """Return the model's free-text answer."""
        ...


@runtime_checkable
class Store(Protocol):
    """Durable storage of observations, nodes and edges, scoped by namespace.

    Every method takes the namespace first, and no method reads or writes rows
    of another namespace. Reading an unknown namespace gives empty results,
    never an error. ``batch(ns)`` groups writes: they become durable together
    when the block exits normally, are rolled back if it raises, and reads
    inside the block see them. A write outside a block is its own batch.
    A node's ``content`` is evidence: upserting an existing node with different
    content raises `StoreError`.
    """

    def batch(self, namespace: str) -> AbstractContextManager[None]:
        """Group the writes made inside the block into one crash-safe batch."""
        ...

    def reading(self, namespace: str) -> AbstractContextManager[None]:
        """One logical read (a search): the store may check once, on entry,
        whether other processes committed, instead of before every call.

        Reads inside the block see at least every commit that completed before
        it was entered, and this process's own writes. A store with nothing to
        check returns a no-op context. Blocks may nest.
        """
        ...

    def add_observations(self, namespace: str, observations: Sequence[Observation]) -> None:
        """Append observations to the verbatim log (ids must be new)."""
        ...

    def existing_observation_ids(self, namespace: str, ids: Iterable[str]) -> set[str]:
        """The subset of ``ids`` already in the log."""
        ...

    def get_observations(self, namespace: str, ids: Sequence[str]) -> list[Observation]:
        """Observations by id, in the order asked; unknown ids are left out."""
        ...

    def iter_observations(self, namespace: str) -> Iterator[Observation]:
        """Every observation of the namespace, in insertion order."""
        ...

    def upsert_nodes(self, namespace: str, nodes: Sequence[Node]) -> None:
        """Insert or update nodes by id (content must not change)."""
        ...

    def get_nodes(self, namespace: str, ids: Sequence[str]) -> list[Node]:
        """Nodes by id, in the order asked; unknown ids are left out."""
        ...

    def iter_nodes(self, namespace: str, where: NodeFilter | None = None) -> Iterator[Node]:
        """Every node of the namespace passing ``where``, in insertion order."""
        ...

    def count_nodes(self, namespace: str, where: NodeFilter | None = None) -> int:
        """How many nodes pass ``where``."""
        ...

    def upsert_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        """Insert or update edges by id; both ends must be existing nodes."""
        ...

    def get_edges(self, namespace: str, ids: Sequence[str]) -> list[Edge]:
        """Edges by id, in the order asked; unknown ids are left out."""
        ...

    def edges_of(
        self,
        namespace: str,
        node_ids: Collection[str],
        *,
        direction: Direction = "out",
        predicates: Collection[str] | None = None,
    ) -> list[Edge]:
        """Edges leaving (``out``), entering (``in``) or touching the given nodes."""
        ...

    def iter_edges(self, namespace: str) -> Iterator[Edge]:
        """Every edge of the namespace."""
        ...

    def count_edges(self, namespace: str) -> int:
        """How many edges the namespace has."""
        ...

    def vector_search(
        self,
        namespace: str,
        vector: NDArray[np.float32],
        k: int,
        *,
        where: NodeFilter | None = None,
    ) -> list[Scored]:
        """Top-``k`` nodes by cosine similarity, best first."""
        ...

    def text_search(
        self, namespace: str, text: str, k: int, *, where: NodeFilter | None = None
    ) -> list[Scored]:
        """Top-``k`` nodes by BM25 over `Node.search_text`, best first (score > 0)."""
        ...

    def namespaces(self) -> list[str]:
        """Every namespace that holds at least one row."""
        ...

    def delete(
        self,
        namespace: str,
        *,
        observation_ids: Collection[str] = (),
        node_ids: Collection[str] = (),
        edge_ids: Collection[str] = (),
    ) -> None:
        """Remove these records of ``namespace`` (unknown ids are ignored).

        Removing a node removes every edge touching it. A removed node id may
        be written again afterwards, with any content. Inside a batch, the
        removal commits or rolls back with it.
        """
        ...

    def purge(self, namespace: str) -> None:
        """Remove every observation, node and edge of ``namespace``; others are untouched."""
        ...

    def erase_history(self) -> None:
        """Make removals unrecoverable: drop every earlier version of the data and
        rebuild the indexes from the rows that remain (a no-op for a store that
        keeps no history). Not inside a batch.
        """
        ...

    def optimize(self) -> None:
        """Compact storage and refresh indexes (safe to call any time)."""
        ...

    def stats(self, namespace: str | None = None) -> dict[str, Any]:
        """Sizes and counts, for one namespace or all."""
        ...

    def close(self) -> None:
        """Flush pending writes and release resources."""
        ...


@runtime_checkable
class Extractor(Protocol):
    """Turns new observations into nodes and edges (the write path).

    Called inside ``store.batch(namespace)`` with observations not seen before,
    in the caller's order. It writes through ``deps.store`` and records what
    it wrote in ``report`` (``nodes_written``, ``edges_written``, ``details``).
    """

    def ingest(
        self, namespace: str, observations: Sequence[Observation], report: AddReport
    ) -> None:
        """Write the nodes and edges for ``observations``."""
        ...


@runtime_checkable
class Seeder(Protocol):
    """Finds the first hits for a query. ``state`` is shared by the atoms of one search."""

    def seed(self, query: Query, state: dict[str, Any]) -> list[Hit]:
        """Return seed hits, best first."""
        ...


@runtime_checkable
class Expander(Protocol):
    """Grows the hit set over the graph; returns the whole new hit list."""

    def expand(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        """Return ``hits`` plus what expansion reached (no duplicate node ids)."""
        ...


@runtime_checkable
class Filter(Protocol):
    """Re-scores, reorders or trims the hit list."""

    def filter(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        """Return the hits to keep, best first."""
        ...


@runtime_checkable
class Reconsolidator(Protocol):
    """Re-weights memory after a retrieval was used (REALM Algorithm 3)."""

    def reconsolidate(self, result: RetrievalResult, feedback: Feedback) -> OperationReport:
        """Apply feedback about ``result``; report every decision."""
        ...


@runtime_checkable
class Consolidator(Protocol):
    """Reorganises a namespace offline (All-Mem ATC)."""

    def consolidate(self, namespace: str) -> OperationReport:
        """Run one consolidation pass over ``namespace``."""
        ...

    def after_add(self, namespace: str, report: AddReport) -> OperationReport | None:
        """Called after every ``add``; may run a pass (e.g. every N sessions)."""
        ...


@runtime_checkable
class Answerer(Protocol):
    """Answers a question from a memory: what ``Memory.answer`` delegates to."""

    def answer(self, memory: Memory, question: str, *, namespace: str, k: int,
               as_of: datetime | None, budget_tokens: int) -> Answer:
        """Retrieve ``k`` hits from ``memory`` (as of ``as_of``), answer from at most
        ``budget_tokens`` of evidence, and let the memory learn from the answer."""
        ...


@runtime_checkable
class RollbackAware(Protocol):
    """Optional: a component that holds in-memory state about what it wrote.

    When a store batch rolls back (an exception, a failed commit, Ctrl-C),
    the memory calls ``on_rollback(namespace)`` on each component whose call
    ran inside that batch: the extractor of an ``add``, the reconsolidator of
    a ``feedback``, the consolidator of a ``consolidate`` (or of its
    ``after_add`` pass). Implement it if your component keeps in memory
    anything about the namespace that the batch changed (a running summary,
    the last event of a session, a buffer): return it to what it was before
    the call, so that the next call behaves as if the failed one never ran.
    A component holding nothing of the kind implements it as a no-op.
    A participant without the method makes the memory rebuild every
    component from the store instead, as reopening would (always safe, but
    it loses state the store does not hold). Called with no batch open,
    after the store rolled back.
    """

    def on_rollback(self, namespace: str) -> None:
        """Drop or restore what this component changed in ``namespace`` during the
        call that ran inside the rolled-back batch."""
        ...


@runtime_checkable
class SharedStore(Protocol):
    """Optional: a store that other processes may write at the same time.

    ``external_commits`` counts the times this store object has seen another
    process's commit (and reloaded its own view of the data). The memory reads
    it at the start of every write batch, with the store's write lock held:
    when it has moved, components may hold in-memory state about data written
    by someone else (the last event of a session, a running summary, a
    buffer), so the memory rebuilds them from the store, as reopening would,
    before the batch's work. A store only this process writes need not have it.
    """

    @property
    def external_commits(self) -> int:
        """How many commits of other processes this store object has taken in."""
        ...


@runtime_checkable
class DeferredStore(Protocol):
    """Optional: a store that can make a group of edge writes durable later.

    The memory runs `labile.Memory.feedback` in ``deferred(namespace)``
    instead of ``batch(namespace)`` when its store has it, so that learning
    from each answered query does not cost a durable commit. Inside the block
    the writes behave as in a batch for this process: reads see them at once,
    and an exception escaping the block undoes all of them. Unlike a batch,
    they become durable later, together with those of other deferred blocks:
    at the store's next ordinary batch, when enough blocks have accumulated,
    at ``flush()`` or at ``close()``. A process killed before that loses them
    (and nothing else); the store opens consistent, as of its last commit.
    The store documents what a block may write and how many blocks wait.
    """

    def deferred(self, namespace: str) -> AbstractContextManager[None]:
        """Group the writes made inside the block; they become durable later."""
        ...

    def flush(self) -> None:
        """Make every deferred write durable now (a no-op when none waits)."""
        ...


@attrs.frozen(kw_only=True)
class CoreDeps:
    """What embedder and LLM factories get: the pipeline's shared services.

    Embedders and LLM clients are built first, so neither sees the other nor
    the store. A component never reaches for globals: everything it shares
    with the pipeline comes from its deps.

    Attributes:
        schema: The registered node kinds and predicates.
        usage: The LLM usage meter of the pipeline.
        registries: Every registered component, by kind (to build nested ones).
        clock: The pipeline's notion of "now" (tests replace it).
    """

    schema: Schema
    usage: UsageMeter
    registries: Registries
    clock: Callable[[], datetime] = utcnow


@attrs.frozen(kw_only=True)
class StoreDeps(CoreDeps):
    """What store factories get: the shared services plus the embedder and LLM client.

    ``embedder`` names the vectors the store will hold.
    """

    embedder: Embedder
    llm: LLMClient


@attrs.frozen(kw_only=True)
class Deps(StoreDeps):
    """What every component built after the store gets: extractors, atoms,
    operators and the components nested in their options.

    ``store`` is the schema-checked store of the pipeline (a
    `labile._schema.CheckedStore`): write through it.
    """

    store: Store
