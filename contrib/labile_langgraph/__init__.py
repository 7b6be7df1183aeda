"""LangGraph's long-term store on a labile memory (``labile[langgraph]``).

* `labile_langgraph.store` holds `LabileStore`, a ``langgraph.store.base.BaseStore``;
* `labile_langgraph.values` reads item values (their text, speaker, filters).

Importing this package imports LangGraph; the rest of labile never does.
"""

from __future__ import annotations

from labile import MissingDependencyError

try:
    import langgraph.store.base  # noqa: F401
except ImportError as exc:  # say what to install, not which module was missing
    raise MissingDependencyError(
        "labile_langgraph needs LangGraph: pip install -e '.[langgraph]' "
        "(from a labile checkout)") from exc

from labile_langgraph.store import DEFAULT_PREFIX, LabileStore

__all__ = ["DEFAULT_PREFIX", "LabileStore"]
