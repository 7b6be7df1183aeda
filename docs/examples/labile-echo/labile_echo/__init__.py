"""labile-echo: the sample plugin of the plugin-authoring guide.

It registers one filter, ``echo.min_score``, that drops hits scoring below a
threshold and records in the search state how many it dropped.
"""

from __future__ import annotations

from typing import Any

import attrs
from attrs.validators import ge, le

from labile import Deps, Hit, Query, hookimpl
from labile.registry import Register


@attrs.frozen(kw_only=True)
class MinScoreConfig:
    """Options of ``echo.min_score``.

    Attributes:
        threshold: Hits scoring below this are dropped.
    """

    threshold: float = attrs.field(default=0.0, validator=[ge(0.0), le(1.0)])


class MinScoreFilter:
    """Keeps the hits whose score is at least the threshold, best first."""

    def __init__(self, config: MinScoreConfig, deps: Deps) -> None:
        self._threshold = config.threshold

    def filter(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        """Drop low-scoring hits."""
        kept = [h for h in hits if h.score >= self._threshold]
        state["echo.dropped"] = len(hits) - len(kept)
        return sorted(kept, key=lambda h: -h.score)


@hookimpl
def labile_register_filters(register: Register) -> None:
    """Register ``echo.min_score``."""
    register("echo.min_score", MinScoreFilter, config=MinScoreConfig,
             summary="drop hits scoring below a threshold")
