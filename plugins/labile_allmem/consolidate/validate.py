"""Deterministic validation of repair plans (ATC, Algorithm 1: validation).

A `Verdict` says whether the plan may be executed, and if not whether the
target ends as Noop (the planner validly declined) or Skipped (the plan is
unusable). The rules:

* Split: segments are stripped and empty ones ignored; fewer than two left is
  Noop. Every segment must occur in the evidence, in order and without
  overlapping the previous one (grounded), else Skipped.
* Merge: ``decline`` is Noop. The canonical summary must be non-empty and
  supported by the sources: at least ``support_min`` of its content terms occur
  in the members' evidence, captions, summaries and keywords. Else Skipped.
* Update: ``decline`` is Noop. The current unit must still be visible, and the
  refreshed summary non-empty and supported by the *current* unit alone (the
  superseded unit is not a source of facts). Else Skipped.

Keywords are cleaned (stripped, deduplicated case-insensitively, empties
dropped), never a reason to reject a plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import attrs

from labile.plugin import Node
from labile_allmem.consolidate.records import DescriptorPlan, SplitPlan
from labile_allmem.lexical import support_ratio

__all__ = ["Verdict", "clean_keywords", "validate_merge", "validate_split", "validate_update"]


@attrs.frozen(kw_only=True)
class Verdict:
    """The result of validating a plan.

    Attributes:
        status: ``"ok"`` (execute), ``"noop"`` or ``"skipped"``.
        reason: Why, when not ok.
        segments: The grounded segments (Split, when ok).
        summary: The cleaned summary (Merge/Update, when ok).
        keywords: The cleaned keywords (Merge/Update, when ok).
    """

    status: Literal["ok", "noop", "skipped"]
    reason: str = ""
    segments: tuple[str, ...] = ()
    summary: str = ""
    keywords: tuple[str, ...] = ()


def clean_keywords(keywords: Sequence[str], limit: int = 8) -> tuple[str, ...]:
    """Stripped, non-empty keywords, first spelling of each kept, at most ``limit``."""
    seen: dict[str, str] = {}
    for kw in keywords:
        text = " ".join(str(kw).split())
        if text and text.casefold() not in seen:
            seen[text.casefold()] = text
    return tuple(seen.values())[:limit]


def validate_split(unit: Node, plan: SplitPlan) -> Verdict:
    """Check a Split plan against the unit's evidence."""
    segments = [s.strip() for s in plan.segments if s.strip()]
    if len(segments) < 2:
        return Verdict(status="noop", reason="fewer than two non-empty segments")
    cursor = 0
    for seg in segments:
        pos = unit.content.find(seg, cursor)
        if pos < 0:
            where = "at all" if seg not in unit.content else "in order without overlap"
            return Verdict(status="skipped",
                           reason=f"ungrounded segment (not in the evidence {where}): "
                                  f"{seg[:60]!r}")
        cursor = pos + len(seg)
    return Verdict(status="ok", segments=tuple(segments))


def _support_texts(unit: Node) -> list[str]:
    return [unit.content, unit.attrs.get("caption") or "", unit.description,
            " ".join(unit.keywords), unit.attrs.get("speaker") or ""]


def validate_merge(units: Sequence[Node], plan: DescriptorPlan, *, support_min: float) -> Verdict:
    """Check a Merge plan: a non-empty canonical descriptor supported by the members."""
    if plan.decline:
        return Verdict(status="noop", reason="planner declined: " + (plan.reason or "no reason"))
    summary = " ".join(plan.summary.split())
    if not summary:
        return Verdict(status="skipped", reason="empty canonical descriptor")
    support = support_ratio(summary, [t for u in units for t in _support_texts(u)])
    if support < support_min:
        return Verdict(status="skipped",
                       reason=f"descriptor not supported by the sources ({support:.2f})")
    return Verdict(status="ok", summary=summary, keywords=clean_keywords(plan.keywords))


def validate_update(
    current: Node, old: Node, plan: DescriptorPlan, *, support_min: float
) -> Verdict:
    """Check an Update plan: a non-empty descriptor, supported by the visible current unit."""
    if plan.decline:
        return Verdict(status="noop", reason="planner declined: " + (plan.reason or "no reason"))
    if not current.visible:
        return Verdict(status="skipped", reason="the current unit is not visible")
    summary = " ".join(plan.summary.split())
    if not summary:
        return Verdict(status="skipped", reason="empty refreshed descriptor")
    support = support_ratio(summary, _support_texts(current))
    if support < support_min:
        return Verdict(status="skipped",
                       reason=f"descriptor not supported by the current unit ({support:.2f})")
    return Verdict(status="ok", summary=summary, keywords=clean_keywords(plan.keywords))
