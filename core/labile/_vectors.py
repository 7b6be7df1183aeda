"""Vector helpers shared by the bundles."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["cosine"]


def cosine(a: Any, b: Any) -> float:
    """Cosine similarity of two vectors; 0 when either is missing or all zeros.

    Inputs are read as float32 (what embedders and stores hold), so float32
    arrays are used as they are, without a copy.
    """
    if a is None or b is None:
        return 0.0
    va = np.asarray(a, dtype=np.float32)
    vb = np.asarray(b, dtype=np.float32)
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(va, vb) / (na * nb))
