"""LlamaIndex's chat `Memory` on a labile memory (``labile[llamaindex]``).

* `labile_llamaindex.block`: `LabileMemoryBlock`, a long-term memory block
  for ``llama_index.core.memory.Memory`` (why a block and not a retriever
  is said there).

Importing this package imports llama-index-core; the rest of labile never does.
"""

from __future__ import annotations

from labile import MissingDependencyError

try:
    import llama_index.core.memory  # noqa: F401
except ImportError as exc:  # say what to install, not which module was missing
    raise MissingDependencyError(
        "labile_llamaindex needs llama-index-core: pip install -e '.[llamaindex]' "
        "(from a labile checkout)") from exc

from labile_llamaindex.block import LabileMemoryBlock, message_text

__all__ = ["LabileMemoryBlock", "message_text"]
