"""The records the `Store` contract suite writes: small, hand-made and predictable.

Vectors have `DIM` = 8 components, mostly one-hot (`vec`), so cosine scores
are known in advance; times are whole minutes or days after `T0`, which every
store can hold exactly.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import attrs
import numpy as np
from numpy.typing import NDArray

from labile._model import Edge, Node, Observation, edge_id

__all__ = ["DIM", "NS", "T0", "ContractEmbedder", "edge", "node", "obs", "vec"]

#: Length of every vector the suite writes or searches with.
DIM: Final = 8
#: The namespace most checks write to.
NS: Final = "user-1"
#: The time every record's timestamps are counted from.
T0: Final = datetime(2024, 1, 1, tzinfo=UTC)


@attrs.frozen
class ContractEmbedder:
    """The embedder a store under the contract is built for: ``DIM``-d vectors.

    Stores use only ``name`` and ``dim`` (to size and label what they hold);
    `embed` exists so the object satisfies `labile._protocols.Embedder`, and
    hashes words into the ``dim`` components.
    """

    name: str = "store-contract-8"
    dim: int = DIM

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit row per text (a text without words gets the first axis)."""
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, zlib.crc32(word.encode()) % self.dim] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm == 0.0:
                out[row, 0] = 1.0
            else:
                out[row] /= norm
        return out


def vec(*hot: int) -> NDArray[np.float32]:
    """A vector with 1 at the ``hot`` positions and 0 elsewhere."""
    v = np.zeros(DIM, np.float32)
    for i in hot:
        v[i] = 1.0
    return v


def obs(i: int, text: str = "", **kw: Any) -> Observation:
    """Observation ``o<i>``, ``i`` minutes after `T0`."""
    return Observation(id=f"o{i}", text=text or f"turn {i}", timestamp=T0 + timedelta(minutes=i),
                       **kw)


def node(nid: str, content: str = "", **kw: Any) -> Node:
    """Node ``nid`` (kind ``fact`` unless given) with a content derived from its id."""
    kw.setdefault("kind", "fact")
    return Node(id=nid, content=content or f"content of {nid}", **kw)


def edge(src: str, dst: str, predicate: str = "rel", **kw: Any) -> Edge:
    """Edge ``src -predicate-> dst`` with the id `labile._model.edge_id` gives it."""
    return Edge(id=edge_id(src, predicate, dst), src=src, dst=dst, predicate=predicate, **kw)
