"""The kernel's own plugin, registered directly and never blocked.

It provides the in-memory reference store, the ``none`` LLM client (the
"no model" every offline pipeline names, and that `labile._needs` checks
for) and the ``labile.pending`` node kind (`labile._recovery`), so none of
them depends on a bundle being enabled. Concrete embedders, ``hashing``
included, ship in ``labile_offline``.
"""

from __future__ import annotations

from labile._hookspecs import hookimpl
from labile._memstore import MemoryStore, MemoryStoreConfig
from labile._nollm import NoLLM, NoLLMConfig
from labile._recovery import PENDING, PENDING_KIND
from labile._registry import Register


@hookimpl
def labile_register_stores(register: Register) -> None:
    """The in-process reference store."""
    register("memory", MemoryStore, config=MemoryStoreConfig,
             summary="in-process dictionaries; nothing persists (tests, short-lived agents)")


@hookimpl
def labile_register_llms(register: Register) -> None:
    """The offline ``none`` client (``scripted`` comes from the ``labile_llm`` plugin)."""
    register("none", NoLLM, config=NoLLMConfig,
             summary="no model: offline components only (the default)")


@hookimpl
def labile_register_node_kinds(register: Register) -> None:
    """``labile.pending``: the mark of an observation whose memory is still to be built."""
    register(PENDING_KIND, PENDING, summary=PENDING.summary)
