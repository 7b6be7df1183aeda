"""Exact full-text search per namespace, in memory: BM25 statistics of that namespace only.

LanceDB's full-text index keeps one set of statistics (document count, mean
length, document frequency of every term) for the whole ``nodes`` table, so a
namespace's BM25 scores move whenever another namespace writes or forgets
text: a statistical leak between tenants, and a benchmark over some
conversations ranks differently from one over all of them.

Below `EXACT_TEXT_MAX_NODES` nodes a namespace is therefore searched here
instead: a `labile.text.bm25.BM25Index` (the reference store's, so both stores
rank alike) over its cached records (`labile_lancedb._cache.NodeTable`), whose
statistics are the namespace's own. Like the exact vector scan it costs one
pass over the query terms' postings, well under a millisecond for a
conversation's few hundred nodes, and it needs no flush of the write buffer.

The index follows the table without hooks: the table keeps every node in a
slot and replaces a slot's record object on update, and forgetting rows
(delete, purge, rollback) drops the whole table, so comparing slot by slot
which record objects the index last saw finds every change. Text is folded to
ASCII before tokenising, as LanceDB's analyser does ("café" matches "cafe").
"""

from __future__ import annotations

import operator
import threading
import unicodedata
import weakref
from typing import Final

from labile.plugin import Node, NodeFilter, Scored
from labile.text.bm25 import BM25Index
from labile_lancedb._cache import NodeTable, copy_node

__all__ = ["EXACT_TEXT_MAX_NODES", "NamespaceText", "exact_text_search", "fold"]

#: Namespaces of at most this many nodes are searched in memory with their own BM25
#: statistics; larger ones use LanceDB's index (table-wide statistics). At this size
#: the index holds about 17 MB for conversational turns (20,000 LoCoMo turns, measured).
EXACT_TEXT_MAX_NODES: Final = 20_000

_SLOT_DIGITS: Final = 10


def fold(text: str) -> str:
    """``text`` with accents removed (NFKD, combining marks dropped): "Café" -> "Cafe"."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _doc_id(slot: int) -> str:
    # Zero-padded, so the index's tie order (by id) is the table's insertion order.
    return f"{slot:0{_SLOT_DIGITS}d}"


class NamespaceText:
    """A BM25 index over one namespace's node table, brought up to date before each search.

    Not thread-safe on its own: the store calls it under its lock, as for
    every read of the table.
    """

    def __init__(self) -> None:
        self.index = BM25Index()
        self._seen: list[Node] = []
        self._texts: list[str] = []

    def sync(self, table: NodeTable) -> int:
        """Index what changed in ``table`` since the last call; returns how many slots."""
        records = table.records
        seen = self._seen
        changed = 0
        if any(map(operator.is_not, records, seen)):
            for slot, (now, before) in enumerate(zip(records, seen, strict=False)):
                if now is not before:
                    seen[slot] = now
                    changed += self._put(slot, now, replace=True)
        for slot in range(len(seen), len(records)):
            seen.append(records[slot])
            self._texts.append("")
            changed += self._put(slot, records[slot], replace=False)
        return changed

    def _put(self, slot: int, node: Node, *, replace: bool) -> int:
        text = fold(node.search_text)
        if replace and text == self._texts[slot]:
            return 0  # an update that left the searchable text alone (weights, attrs)
        self._texts[slot] = text
        self.index.add(_doc_id(slot), text)
        return 1

    def search(self, table: NodeTable, text: str, k: int,
               where: NodeFilter | None) -> list[Scored]:
        """Top-``k`` of ``table`` by BM25 over `Node.search_text`, best first; ties in
        insertion order; only scores > 0."""
        self.sync(table)
        allowed = None
        if where is not None:
            mask = table.mask(where)

            def allowed(doc_id: str) -> bool:
                return bool(mask[int(doc_id)])

        hits = self.index.search(fold(text), k, allowed=allowed)
        return [(copy_node(table.records[int(doc_id)]), score) for doc_id, score in hits]


_INDEXES: weakref.WeakKeyDictionary[NodeTable, NamespaceText] = weakref.WeakKeyDictionary()
_INDEXES_LOCK = threading.Lock()


def namespace_text(table: NodeTable) -> NamespaceText:
    """The index of ``table``, made on first use; it lives as long as the table."""
    with _INDEXES_LOCK:
        index = _INDEXES.get(table)
        if index is None:
            index = _INDEXES[table] = NamespaceText()
        return index


def exact_text_search(table: NodeTable, text: str, k: int,
                      where: NodeFilter | None) -> list[Scored] | None:
    """Search ``table`` with its own statistics, or ``None`` when it is too large for that
    (more than `EXACT_TEXT_MAX_NODES` nodes: the caller asks LanceDB instead)."""
    if len(table) > EXACT_TEXT_MAX_NODES:
        return None
    return namespace_text(table).search(table, text, k, where)
