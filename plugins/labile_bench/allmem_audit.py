"""What ATC does to one LoCoMo conversation: every proposal and every outcome.

`audit_conversation` ingests a conversation session by session exactly as
``labile bench locomo`` does (one ``add`` per session, automatic ATC every
``every_n_sessions``), then runs one last ``consolidate`` so that the turns
after the last automatic run are diagnosed too. It records every proposal
the diagnoser made (with its raw strength and calibrated confidence) and every
queued target's outcome, each named by unit ids *and* by the LoCoMo turn ids
of its evidence, so that a person can judge it against the source turns.

`judge_key` names an operation the same way in the judged files under
``tests/allmem/judged/`` (ids and verdicts only; the text stays in the data).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from labile.plugin import Node, Store
from labile_allmem.consolidate.records import OPS, Neighbourhood, Proposal
from labile_allmem.decisions import Diagnoser

__all__ = [
    "ATCAudit",
    "AuditedOp",
    "audit_conversation",
    "format_audit",
    "judge_key",
    "split_spans",
]


@attrs.frozen(kw_only=True)
class AuditedOp:
    """One proposal or outcome, named by unit ids and source turn ids.

    Attributes:
        op: ``split`` / ``merge`` / ``update``.
        target: The unit ids (Update: current, superseded).
        turns: For each target unit, the turn ids of its evidence.
        status: ``proposed`` (below θ or dropped), ``executed``, ``skipped`` or ``noop``.
        confidence: Calibrated confidence.
        raw: Raw strength of the offline rules (``None`` from a model).
        reason: The diagnoser's or executor's reason.
        segments: For an executed Split, the ``(start, end)`` of each sibling
            in the source's evidence.
        run: The consolidation run (1-based).
        kind: The offline rule's kind (``near-duplicate``, ``plan realised`` …),
            on proposals; empty on outcomes and from a model.
    """

    op: str
    target: tuple[str, ...]
    turns: tuple[tuple[str, ...], ...]
    status: str
    confidence: float
    raw: float | None = None
    reason: str = ""
    segments: tuple[tuple[int, int], ...] = ()
    run: int = 0
    kind: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"op": self.op, "target": list(self.target),
                "turns": [list(t) for t in self.turns], "status": self.status,
                "confidence": round(self.confidence, 4),
                "raw": None if self.raw is None else round(self.raw, 4),
                "reason": self.reason, "segments": [list(s) for s in self.segments],
                "run": self.run, "kind": self.kind}


@attrs.frozen(kw_only=True)
class ATCAudit:
    """Everything ATC proposed and did on one conversation.

    Attributes:
        conversation: The conversation id (namespace).
        turns: Turns ingested.
        visible_before: Visible units had no consolidation run (one per turn).
        visible_after: Visible units after the last run.
        counts: ``<op>.<stage>`` summed over runs (proposed, gated, queued,
            executed, skipped, noop, dropped).
        proposals: Every proposal, with its fate.
        outcomes: Every queued target's outcome.
    """

    conversation: str
    turns: int
    visible_before: int
    visible_after: int
    counts: dict[str, int]
    proposals: tuple[AuditedOp, ...]
    outcomes: tuple[AuditedOp, ...]

    def executed(self) -> list[AuditedOp]:
        """The executed operations."""
        return [o for o in self.outcomes if o.status == "executed"]

    def table_row(self) -> dict[str, Any]:
        """Counts per operator (proposed / gated / executed / skipped / noop) and the surface."""
        row: dict[str, Any] = {"conversation": self.conversation, "turns": self.turns}
        for op in OPS:
            row[op] = {stage: self.counts.get(f"{op}.{stage}", 0)
                       for stage in ("proposed", "gated", "executed", "skipped", "noop")}
        row["visible_before"], row["visible_after"] = self.visible_before, self.visible_after
        return row


def judge_key(op: str, target: Sequence[str]) -> str:
    """The key of an operation in the judged files: ``op`` and its unit ids."""
    return f"{op}:" + "|".join(target)


def split_spans(source: Node, siblings: Iterable[Node]) -> tuple[tuple[int, int], ...]:
    """Where each split sibling's evidence lies in its source's evidence (in order)."""
    out, cursor = [], 0
    for sib in siblings:
        start = source.content.find(sib.content, cursor)
        if start < 0:
            continue
        out.append((start, start + len(sib.content)))
        cursor = start + len(sib.content)
    return tuple(out)


class _Recorder:
    """Wraps a diagnoser, remembering every proposal of every run."""

    def __init__(self, inner: Diagnoser) -> None:
        self.inner = inner
        self.failures = 0
        self.runs: list[list[Proposal]] = []

    def diagnose(self, hoods: Sequence[Neighbourhood]) -> list[Proposal]:
        out = self.inner.diagnose(hoods)
        self.failures = self.inner.failures
        self.runs.append(list(out))
        return out


def _turns_of(store: Store, namespace: str, ids: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    nodes = {n.id: n for n in store.get_nodes(namespace, list(ids))}
    return tuple(tuple(nodes[i].sources) if i in nodes else () for i in ids)


def audit_conversation(conversation: Any, table: dict[str, Any], *,
                       flush: bool = True) -> ATCAudit:
    """Ingest ``conversation`` (a `labile_io.locomo.Conversation`) and audit ATC.

    Args:
        conversation: The conversation.
        table: A pipeline config table with one ``allmem.atc`` consolidator
            (e.g. the ``allmem`` preset with ``store = {"type": "memory"}``).
        flush: Run a final ``consolidate`` after the last session.

    Returns:
        The audit.
    """
    from labile import Memory
    from labile.plugin import Observation
    from labile_allmem.consolidate.atc import ATC, run_records

    memory = Memory.open(table)
    try:
        atc = next(c for _, c in memory.consolidators if isinstance(c, ATC))
        recorder = _Recorder(atc.diagnoser)
        atc.diagnoser = recorder
        ns = conversation.sample_id
        n_turns = 0
        for session in conversation.sessions:
            n_turns += len(session.turns)
            memory.add([Observation(id=t.id, text=t.text, speaker=t.speaker,
                                    timestamp=t.timestamp, session=str(session.number),
                                    metadata={"caption": t.caption, "date_text": t.date_text})
                        for t in session.turns], namespace=ns)
        if flush:
            memory.consolidate(namespace=ns)
        return _collect(memory.store, ns, n_turns, recorder.runs, run_records(memory.store, ns))
    finally:
        memory.close()


def _collect(store: Store, ns: str, n_turns: int, runs: list[list[Proposal]],
             records: list[dict[str, Any]]) -> ATCAudit:
    counts: Counter[str] = Counter()
    outcomes: list[AuditedOp] = []
    proposals: list[AuditedOp] = []
    for run, record in enumerate(records, start=1):
        for key, value in record["counts"].items():
            if isinstance(value, int) and "." in key:
                counts[key] += value
        for op, target, status, reason, conf in record["outcomes"]:
            segments: tuple[tuple[int, int], ...] = ()
            if op == "split" and status == "executed":
                (source,) = store.get_nodes(ns, target)
                sibs = sorted((n for n in store.iter_nodes(ns)
                               if n.attrs.get("origin") == "split"
                               and source.id in n.attrs.get("derived_from", ())),
                              key=lambda n: int(n.attrs.get("segment", 0)))
                segments = split_spans(source, sibs)
            outcomes.append(AuditedOp(op=op, target=tuple(target),
                                      turns=_turns_of(store, ns, target), status=status,
                                      confidence=conf, reason=reason, segments=segments,
                                      run=run))
    # Norm orders a Merge set oldest first; the diagnoser lists its anchor first.
    done = {(o.op, o.run, frozenset(o.target) if o.op == "merge" else o.target): o
            for o in outcomes}
    for run, props in enumerate(runs, start=1):
        for p in props:
            fate = done.get((p.op, run, frozenset(p.target) if p.op == "merge" else p.target))
            target = fate.target if fate is not None else p.target
            proposals.append(AuditedOp(
                op=p.op, target=target, turns=_turns_of(store, ns, target),
                status=fate.status if fate is not None else "proposed",
                confidence=p.confidence, raw=p.raw, reason=p.reason,
                segments=fate.segments if fate is not None else (), run=run, kind=p.kind))
    visible_after = records[-1]["visible_units"] if records else n_turns
    return ATCAudit(conversation=ns, turns=n_turns, visible_before=n_turns,
                    visible_after=int(visible_after), counts=dict(counts),
                    proposals=tuple(proposals), outcomes=tuple(outcomes))


def format_audit(audit: ATCAudit, *, show: str = "executed",
                 turns: dict[str, Any] | None = None) -> str:
    """A readable report: counts per operator, surface sizes, and the chosen operations.

    Args:
        audit: The audit.
        show: ``"executed"``, ``"proposals"`` or ``"none"``.
        turns: Turn id -> turn (with ``speaker``, ``text``, ``caption``); when
            given, each operation is followed by its source turns and, for a
            Split, its segments.
    """
    row = audit.table_row()
    lines = [f"{audit.conversation}: {audit.turns} turns, visible surface "
             f"{audit.visible_before} -> {audit.visible_after}"]
    lines.append("  op      proposed  gated  executed  skipped  noop")
    for op in OPS:
        c = row[op]
        lines.append(f"  {op:<7} {c['proposed']:>8} {c['gated']:>6} {c['executed']:>9} "
                     f"{c['skipped']:>8} {c['noop']:>5}")
    items = (audit.executed() if show == "executed"
             else list(audit.proposals) if show == "proposals" else [])
    for item in items:
        raw = "" if item.raw is None else f" raw {item.raw:.3f}"
        kind = f" [{item.kind}]" if item.kind else ""
        lines.append(f"- {item.op}{kind} {item.status} p {item.confidence:.3f}{raw} "
                     f"{' / '.join(','.join(t) for t in item.turns)}  ({item.reason})")
        if turns is None:
            continue
        for tid in dict.fromkeys(t for group in item.turns for t in group):
            turn = turns.get(tid)
            if turn is not None:
                caption = f" [photo: {turn.caption}]" if turn.caption else ""
                lines.append(f"    {tid} {turn.speaker}: {turn.text}{caption}")
        if item.segments and item.turns and item.turns[0]:
            source = turns.get(item.turns[0][0])
            if source is not None:
                lines.append("    segments: " + " || ".join(
                    source.text[s:e] for s, e in item.segments))
    return "\n".join(lines)
