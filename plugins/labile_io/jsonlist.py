"""Reading a dataset file that is one JSON list (LoCoMo's samples, LongMemEval's items)."""

from __future__ import annotations

import json
import os
from typing import Any


def load_json_list(
    path: str | os.PathLike[str], *, what: str, limit: int | None = None
) -> list[Any]:
    """The first ``limit`` entries (all by default) of the JSON list in ``path``.

    Args:
        path: The file.
        what: What the entries are ("samples", "items"), for the error message.
        limit: Keep only this many entries.

    Raises:
        ValueError: ``limit`` is negative, or the file holds no JSON list.
        OSError: The file cannot be read.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of {what}")
    return data[:limit] if limit is not None else data
