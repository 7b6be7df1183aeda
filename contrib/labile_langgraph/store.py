"""`LabileStore`: LangGraph's long-term `BaseStore` backed by a labile `Memory`.

How LangGraph's items map onto labile:

* a namespace tuple ``("memories", "u1")`` is the labile namespace
  ``"<prefix>memories.u1"`` (default prefix ``"langgraph:"``). LangGraph
  forbids periods in labels, so the mapping is reversible, and the prefix
  keeps the store's namespaces apart from others in the same memory;
* an item is one observation: its id is the item's key, its text is read
  from the value (see `item_text`), and the whole value (with the item's
  creation time) rides in its metadata, so ``get`` gives it back unchanged;
* ``put`` of a new value for a key forgets the old observation and adds the
  new one (labile never rewrites what was said, so an update is a forget
  and an add); ``put`` of the same value again changes nothing;
* ``search`` with a ``query`` runs labile's retrieval in each matching
  namespace and returns the items whose observations the hits were built
  from, best first (``score`` is the best hit's); without a query it lists
  items in insertion order. ``filter`` compares value fields (``$eq``,
  ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``).

Not supported: TTLs (``supports_ttl`` is false, as LangGraph's base expects),
and ``index=False``: labile builds memory from every item, so such an item
is found by queries too.

The async methods run the same batch in a worker thread; one lock orders all
batches, so a search never sees a half-applied update.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from labile import InputError, Memory, Observation
from labile_langgraph.values import item_text, matches_filter, speaker_of
from labile_llm.context import PromptContext, render_context

__all__ = ["DEFAULT_PREFIX", "LabileStore"]

#: What the store's labile namespaces start with.
DEFAULT_PREFIX: Final = "langgraph:"
#: The metadata key holding the LangGraph value and its creation time.
META_KEY: Final = "langgraph"
#: How many more hits than items a query asks labile for: hits of one item
#: (several nodes from one observation) and filtered-out items use some up.
_OVERFETCH: Final = 3


# The ignore is for type-checking without LangGraph installed (its base is then Any).
class LabileStore(BaseStore):  # type: ignore[misc,unused-ignore]
    """A LangGraph store whose items become a labile memory (see the module doc).

    Build it over an open memory: ``LabileStore(Memory.open(path="./mem"))``
    and pass it to ``graph.compile(store=...)``. The memory stays the
    caller's to close.
    """

    supports_ttl: bool = False

    def __init__(self, memory: Memory, *, prefix: str = DEFAULT_PREFIX) -> None:
        """Wrap ``memory``; ``prefix`` starts every labile namespace this store writes."""
        if not isinstance(prefix, str) or "." in prefix:
            raise InputError(f"prefix must be a string without periods, got {prefix!r}")
        self.memory = memory
        self.prefix = prefix
        self._lock = threading.Lock()

    # -- namespaces --------------------------------------------------------------
    def labile_namespace(self, namespace: Sequence[str]) -> str:
        """The labile namespace of LangGraph's ``namespace`` tuple."""
        return self.prefix + ".".join(namespace)

    def langgraph_namespace(self, name: str) -> tuple[str, ...] | None:
        """The tuple a labile namespace stands for, or ``None`` if this store did not make it."""
        if not name.startswith(self.prefix) or len(name) == len(self.prefix):
            return None
        return tuple(name[len(self.prefix):].split("."))

    def _stored(self) -> list[tuple[str, ...]]:
        found = (self.langgraph_namespace(n) for n in self.memory.store.namespaces())
        return sorted(ns for ns in found if ns is not None)

    # -- the protocol ------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; results match them one for one."""
        todo = list(ops)
        for op in todo:
            validate_op_namespace(op)
        with self._lock:
            return [self._run(op) for op in todo]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` in a worker thread, so the event loop never waits on the memory."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise InputError(f"unknown store operation {type(op).__name__}: expected GetOp, "
                         "PutOp, SearchOp or ListNamespacesOp")

    # -- reading -------------------------------------------------------------------
    @staticmethod
    def _fields(obs: Observation) -> dict[str, Any]:
        """An observation as an item's value, key and times."""
        meta = obs.metadata.get(META_KEY)
        value = dict(meta["value"]) if isinstance(meta, Mapping) else {"content": obs.text}
        created = obs.timestamp
        if isinstance(meta, Mapping) and isinstance(meta.get("created_at"), str):
            created = datetime.fromisoformat(meta["created_at"])
        return {"key": obs.id, "value": value, "created_at": created,
                "updated_at": obs.timestamp}

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        found = self.memory.get(self.labile_namespace(namespace), [key])
        return Item(namespace=namespace, **self._fields(found[0])) if found else None

    def _under(self, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
        return [ns for ns in self._stored() if ns[:len(prefix)] == prefix]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        wanted = op.offset + op.limit
        scored: list[tuple[float, int, SearchItem]] = []
        for namespace in self._under(tuple(op.namespace_prefix)):
            if op.query:
                items = self._query(namespace, op.query, wanted * _OVERFETCH)
            else:
                page = self.memory.list(self.labile_namespace(namespace), limit=1_000_000)
                items = [(None, obs) for obs in page.items]
            for score, obs in items:
                item = SearchItem(namespace=namespace, score=score, **self._fields(obs))
                if matches_filter(item.value, op.filter):
                    scored.append((score if score is not None else 0.0, len(scored), item))
        if op.query:
            scored.sort(key=lambda t: (-t[0], t[1]))
        return [item for _, _, item in scored[op.offset:wanted]]

    def _query(self, namespace: tuple[str, ...], query: str,
               k: int) -> list[tuple[float | None, Observation]]:
        name = self.labile_namespace(namespace)
        result = self.memory.search(query, namespace=name, k=max(k, 1))
        best: dict[str, float] = {}
        for hit in result.hits:
            for source in hit.node.sources:
                best.setdefault(source, hit.score)  # hits come best first
        found = {o.id: o for o in self.memory.get(name, list(best))}
        return [(score, found[key]) for key, score in best.items() if key in found]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        out: list[tuple[str, ...]] = []
        for namespace in self._stored():
            if all(_matches(namespace, c) for c in op.match_conditions or ()):
                cut = namespace[:op.max_depth] if op.max_depth is not None else namespace
                if cut not in out:
                    out.append(cut)
        return out[op.offset:op.offset + op.limit]

    # -- writing -------------------------------------------------------------------
    def _put(self, op: PutOp) -> None:
        if op.ttl is not None:
            raise NotImplementedError("LabileStore does not support TTLs: pass ttl=None")
        if op.value is not None and not op.namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        name = self.labile_namespace(op.namespace)
        old = self.memory.get(name, [op.key])
        if op.value is None:
            if old:
                self.memory.forget(name, [op.key])
            return
        value = dict(op.value)
        now = datetime.now(UTC)
        created = now
        if old:
            previous = old[0].metadata.get(META_KEY)
            if isinstance(previous, Mapping):
                if previous.get("value") == value:
                    return  # the same item again: nothing to learn
                created = datetime.fromisoformat(str(previous["created_at"]))
        obs = Observation(
            id=op.key, text=item_text(value, op.index), timestamp=now,
            speaker=speaker_of(value),
            metadata={META_KEY: {"value": value, "created_at": created.isoformat()}},
        )
        if old:
            self.memory.forget(name, [op.key])
        self.memory.add([obs], namespace=name)

    # -- labile's own ---------------------------------------------------------------
    def context(self, namespace: tuple[str, ...], query: str, *, k: int = 10,
                budget_tokens: int = 1000, style: str = "lines") -> PromptContext:
        """Labile's dated evidence for ``query`` in ``namespace``, ready for a prompt.

        What `labile_llm.context.render_context` gives: the memories (not the raw
        items) within ``budget_tokens``, newest first, in ``style``.
        """
        with self._lock:
            result = self.memory.search(query, namespace=self.labile_namespace(namespace), k=k)
        return render_context(result.hits, budget_tokens=budget_tokens, style=style)


def _matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[:len(path)] if condition.match_type == "prefix" else namespace[-len(path):]
    return all(p in ("*", n) for p, n in zip(path, part, strict=True)) if path else True
