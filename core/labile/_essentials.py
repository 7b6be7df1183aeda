"""The kernel's own plugin, registered directly and never blocked.

It provides the in-memory reference store and the ``none`` LLM client, the
"no model" every offline pipeline names (and that `labile._needs` checks
for), so neither depends on a bundle being enabled. Concrete embedders,
``hashing`` included, ship in ``labile_offline``.
"""

from __future__ import annotations

from labile._hookspecs import hookimpl
from labile._memstore import MemoryStore, MemoryStoreConfig
from labile._nollm import NoLLM, NoLLMConfig
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
