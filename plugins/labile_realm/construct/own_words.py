"""How close two turns are in their own words, not in their stored descriptions.

An event's stored vector embeds its description: the date, who said it to
whom, and the question it answers ("On 6 September 2025, Hannah said to Zoe:
…"). That frame is what a search needs, but it makes any two short turns of one
speaker look alike, so a rule that asks "is this turn about that one?" (a change
told in passing, `labile_realm.construct.supersede.implied_supersession`)
compares the turns' verbatim text instead. Only the turns such a rule looks at
are embedded, each once: vectors are kept by node and text, up to a bound.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from labile.plugin import Node

__all__ = ["OwnWords"]


class OwnWords:
    """Cosines of turns' own words (``Node.content``), embedded on demand and cached.

    Args:
        embed: The pipeline's embedder (rows in the order of the texts).
        capacity: Most vectors kept; the least recently used go first.
    """

    def __init__(self, embed: Callable[[list[str]], np.ndarray], capacity: int = 4096) -> None:
        self._embed = embed
        self._capacity = capacity
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    def __call__(self, event: Node, others: Sequence[Node]) -> list[float]:
        """The cosine of ``event``'s text with each of ``others``' (in their order)."""
        nodes = [event, *others]
        keys = [(n.id, n.content or "") for n in nodes]
        missing = list(dict.fromkeys(k for k in keys if k not in self._vectors))
        if missing:
            rows = np.asarray(self._embed([text for _, text in missing]), dtype=np.float32)
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            for key, row in zip(missing, rows / np.where(norms > 0, norms, 1.0), strict=True):
                self._vectors[key] = row
        for key in keys:
            self._vectors.move_to_end(key)
        while len(self._vectors) > self._capacity:
            self._vectors.popitem(last=False)
        mine = self._vectors[keys[0]]
        return [float(mine @ self._vectors[k]) for k in keys[1:]]
