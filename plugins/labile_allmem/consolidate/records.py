"""Records passed between the ATC stages: proposals, plans and outcomes."""

from __future__ import annotations

from typing import Final, Literal

import attrs
from attrs.validators import ge, le

from labile.plugin import Node

Op = Literal["split", "merge", "update"]
#: The operators, in their fixed execution order.
OPS: Final[tuple[Op, ...]] = ("split", "merge", "update")

Status = Literal["executed", "skipped", "noop"]


@attrs.frozen(kw_only=True)
class Proposal:
    """One diagnosed edit.

    Attributes:
        op: ``"split"`` (one conflated unit), ``"merge"`` (a redundant set) or
            ``"update"`` (``(current, superseded)``).
        target: The unit ids, as the diagnoser gave them (Norm canonicalises them).
        confidence: The diagnoser's confidence p in [0, 1].
        reason: Why, in a few words.
        anchor: The buffered unit whose neighbourhood produced the proposal.
        raw: The offline rules' uncalibrated strength behind ``confidence``
            (``None`` for proposals from a model).
        kind: The offline rule that made it (``near-duplicate``,
            ``restatement``, ``plan realised`` …; empty from a model): the
            confidence is the judged precision of that kind.
    """

    op: str
    target: tuple[str, ...]
    confidence: float
    reason: str = ""
    anchor: str = ""
    raw: float | None = None
    kind: str = ""


@attrs.frozen(kw_only=True)
class Neighbourhood:
    """A local context for diagnosis: a buffered unit and its nearest visible units.

    Attributes:
        anchor: The buffered unit.
        units: The anchor first, then its neighbours, most similar first.
    """

    anchor: Node
    units: tuple[Node, ...]


@attrs.frozen(kw_only=True)
class SplitPlan:
    """A Split repair plan: evidence segments (must be exact passages of the evidence)."""

    segments: tuple[str, ...]
    reason: str = ""


@attrs.frozen(kw_only=True)
class DescriptorPlan:
    """A Merge or Update repair plan: the canonical / refreshed descriptor.

    ``decline`` means the planner looked and judged the edit wrong (Noop).
    """

    summary: str
    keywords: tuple[str, ...] = ()
    decline: bool = False
    reason: str = ""


class PlanError(Exception):
    """The planner produced no usable plan (invalid JSON, model failure): Skipped."""


@attrs.frozen(kw_only=True)
class Outcome:
    """How one queued target ended.

    Attributes:
        op: The operator.
        target: Canonical unit ids.
        status: ``"executed"``, ``"skipped"`` or ``"noop"``.
        reason: Why (always set for skipped and noop).
        confidence: The gated confidence.
        created: Ids of units the edit created.
        archived: Ids of units the edit archived.
    """

    op: str
    target: tuple[str, ...]
    status: Status
    reason: str = ""
    confidence: float = 0.0
    created: tuple[str, ...] = ()
    archived: tuple[str, ...] = ()

    def to_log(self) -> dict[str, object]:
        """The entry for `OperationReport.log` and the edit log."""
        return {
            "op": self.op, "target": list(self.target), "status": self.status,
            "reason": self.reason, "confidence": round(self.confidence, 4),
            "created": list(self.created), "archived": list(self.archived),
        }


@attrs.frozen(kw_only=True)
class OfflineDiagnosisConfig:
    """Thresholds of the offline diagnoser (before the confidence gate).

    Attributes:
        merge_cosine: Minimum descriptor cosine of two near-duplicates.
        merge_overlap: Minimum term Jaccard of their evidence.
        restate_cosine: Minimum evidence cosine of two restatements of one fact.
        ritual_cosine: Minimum evidence cosine of two turns performing one ritual.
        update_cosine: Minimum evidence cosine of a current/superseded pair.
        generic_share: A term in more than this share of the diagnosed units
            (and more than 3) is too common to name the subject of a pair.
        same_speaker: Merge and Update only units of one speaker.
        split_similarity: Adjacent sentence blocks this similar stay together.
        split_min_words: A unit needs this many content words to be split.
        split_min_segment_words: Each segment needs this many content words.
    """

    merge_cosine: float = attrs.field(default=0.9, validator=[ge(-1.0), le(1.0)])
    merge_overlap: float = attrs.field(default=0.6, validator=[ge(0.0), le(1.0)])
    restate_cosine: float = attrs.field(default=0.5, validator=[ge(-1.0), le(1.0)])
    ritual_cosine: float = attrs.field(default=0.6, validator=[ge(-1.0), le(1.0)])
    generic_share: float = attrs.field(default=0.04, validator=[ge(0.0), le(1.0)])
    update_cosine: float = attrs.field(default=0.45, validator=[ge(-1.0), le(1.0)])
    same_speaker: bool = True
    split_similarity: float = attrs.field(default=0.3, validator=[ge(-1.0), le(1.0)])
    split_min_words: int = attrs.field(default=12, validator=ge(1))
    split_min_segment_words: int = attrs.field(default=5, validator=ge(1))
