"""The offline repair planner (no model).

* Split: the topic segments of `labile_allmem.consolidate.segment` (exact
  passages of the evidence, cut at sentence boundaries); fewer than two
  segments is a plan that declines the edit (Noop).
* Merge: the canonical descriptor is the summary of the most recent member
  (near-duplicates say the same thing; the latest wording wins) and the
  members' keywords ranked by how many members share them, at most five.
* Update: the current unit's descriptor regenerated from its own evidence,
  keeping the older unit's keywords that the current evidence also states (the
  shared subject), so a question phrased like the old fact still lands on the
  current unit. Nothing is taken from the older evidence that the current one
  does not say.
"""

from __future__ import annotations

from collections.abc import Sequence

from labile.plugin import Deps, Embedder, Node, Store
from labile_allmem.consolidate.diagnose import (
    OfflineDiagnosisConfig,
    OfflineRulesConfig,
    split_candidates,
)
from labile_allmem.consolidate.records import DescriptorPlan, SplitPlan
from labile_allmem.decisions import Describer
from labile_allmem.describe import Evidence, untagged
from labile_allmem.lexical import term_set
from labile_allmem.schema import unit_order

__all__ = ["OfflinePlanner", "build_offline_planner", "evidence_of"]


def evidence_of(unit: Node, store: Store | None = None) -> Evidence:
    """The describer's view of a unit's evidence.

    With a ``store``, the message the unit replies to (``attrs["reply_to"]``,
    looked up in the unit's namespace) is passed as context, as on the write path.
    """
    previous = None
    reply_to = unit.attrs.get("reply_to")
    if store is not None and reply_to and unit.namespace:
        found = store.get_nodes(unit.namespace, [reply_to])
        if found:
            previous = (found[0].attrs.get("speaker"), found[0].content)
    return Evidence(
        text=unit.content, speaker=unit.attrs.get("speaker"), caption=unit.attrs.get("caption"),
        when=unit.attrs.get("date_text"), previous=previous,
    )


class OfflinePlanner:
    """``allmem.repair_planner.offline``: deterministic plans from the evidence and
    existing descriptors."""

    def __init__(
        self, config: OfflineDiagnosisConfig, embedder: Embedder, describer: Describer,
        *, max_keywords: int = 5, store: Store | None = None,
    ) -> None:
        """Create the planner.

        Args:
            config: The segmentation thresholds (shared with the diagnoser).
            embedder: Embeds sentences for segmentation.
            describer: Regenerates descriptors (Update).
            max_keywords: Keywords of a merged descriptor.
            store: Where reply context is looked up (Update descriptors).
        """
        self._config, self._embedder, self._describer = config, embedder, describer
        self._store = store
        self._max_keywords = max_keywords

    def plan_split(self, unit: Node) -> SplitPlan:
        """Topic segments of ``unit``'s evidence (empty when it is one topic)."""
        seg = split_candidates([unit], self._embedder, self._config).get(unit.id)
        if seg is None or len(seg.spans) < 2:
            return SplitPlan(segments=(), reason="one topic")
        return SplitPlan(segments=seg.segments(unit.content),
                         reason=f"{len(seg.spans)} segments, max similarity "
                                f"{seg.max_similarity:.2f}")

    def plan_merge(self, units: Sequence[Node]) -> DescriptorPlan:
        """The latest member's summary with the most shared keywords."""
        ordered = sorted(units, key=unit_order)
        latest = ordered[-1]
        stats: dict[str, list[int]] = {}  # keyword -> [members using it, first position]
        forms: dict[str, str] = {}
        for pos, unit in enumerate(ordered):
            for kw in unit.keywords:
                key = kw.casefold()
                forms.setdefault(key, kw)
                stats.setdefault(key, [0, pos])
            for key in {kw.casefold() for kw in unit.keywords}:
                stats[key][0] += 1
        ranked = sorted(stats, key=lambda k: (-stats[k][0], stats[k][1], k))
        keywords = tuple(forms[k] for k in ranked[: self._max_keywords])
        summary = untagged(latest.description, latest.attrs.get("date_text"))
        return DescriptorPlan(summary=summary or latest.content, keywords=keywords,
                              reason=f"latest of {len(ordered)} near-duplicates")

    def plan_update(self, current: Node, old: Node) -> DescriptorPlan:
        """A regenerated descriptor of ``current`` plus the shared-subject keywords."""
        fresh = self._describer.describe([evidence_of(current, self._store)])[0]
        current_terms = term_set(current.content, current.attrs.get("caption") or "")
        shared = [kw for kw in old.keywords
                  if term_set(kw) and term_set(kw) <= current_terms]
        keywords = tuple(dict.fromkeys([*fresh.keywords, *shared]))[: self._max_keywords + 2]
        return DescriptorPlan(summary=fresh.summary, keywords=keywords,
                              reason="regenerated from the current evidence")


def build_offline_planner(
    config: OfflineRulesConfig, deps: Deps, describer: Describer
) -> OfflinePlanner:
    """Factory of ``allmem.repair_planner.offline`` (Update descriptors by ``describer``,
    the consolidator's descriptor)."""
    return OfflinePlanner(config.offline, deps.embedder, describer, store=deps.store)
