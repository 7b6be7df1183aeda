"""What the adapters' tests share: the smallest offline pipeline, and the docs' examples.

`run_example` runs the code an adapter page shows, as written: the fenced
block marked ``# example: <name>``.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from typing import Any, Final

#: In-memory store, hashing embedder, no model, one node per turn, BM25 seeding.
OFFLINE: Final[dict[str, Any]] = {
    "store": {"type": "memory"}, "embedder": {"type": "hashing"}, "llm": {"type": "none"},
    "extractor": {"type": "baseline.turns"}, "retrieval": {"seed": [{"type": "baseline.bm25"}]},
}
DOCS = Path(__file__).resolve().parents[2] / "docs" / "adapters"
_BLOCK = re.compile(r"```python\n(# example: (?P<name>[\w-]+)\n.*?)```", re.DOTALL)


def example(page: str, name: str) -> str:
    """The source of the block marked ``# example: <name>`` on ``docs/adapters/<page>``."""
    text = (DOCS / page).read_text("utf-8")
    for match in _BLOCK.finditer(text):
        if match["name"] == name:
            return match.group(1)
    raise LookupError(f"no block marked '# example: {name}' in docs/adapters/{page}")


def run_example(page: str, name: str) -> dict[str, Any]:
    """Execute the example as a fresh module and return its namespace.

    The module is registered in `sys.modules` (dataclasses and type hints
    look their module up there), under a name of its own.
    """
    module = types.ModuleType(f"docs_example_{name.replace('-', '_')}")
    sys.modules[module.__name__] = module
    exec(compile(example(page, name), str(DOCS / page), "exec"), module.__dict__)
    return module.__dict__
