"""ATC diagnosis (Algorithm 1, parallel diagnosis): edit proposals over buffered neighbourhoods.

Diagnosis is read-only. `build_neighbourhoods` gathers, for every buffered
visible unit, its top-k most similar visible units. A `Diagnoser` turns the
neighbourhoods into proposals ``(op, target, confidence)``:

* `OfflineDiagnoser` (rules + embeddings + lexical signals; the pair rules
  live in `labile_allmem.consolidate.relate`):

  - **Merge**: units of one speaker that say the same thing: near-duplicates
    (descriptor cosine >= ``merge_cosine``, term Jaccard >= ``merge_overlap``,
    small talk included), turns that perform one ritual and nothing else (two
    greetings, two farewells: `labile_allmem.consolidate.relate.phatic_act`,
    evidence cosine >= ``ritual_cosine``) or restatements of one fact (evidence cosine >=
    ``restate_cosine``, statements sharing their terms and a specific topic
    term, same numbers, polarity and stance, not dated on disjoint days). The
    set is grown greedily and stays *coherent*: every pair in it must pass.
  - **Update**: a newer unit that revises an older one of the same speaker
    from another session (evidence cosine >= ``update_cosine``, a statement of
    each sharing a specific topic term): a plan followed by the report of it,
    a plan whose date moved, a stated change of state, or a new value.
  - **Split**: the anchor's sentences fall into topic segments, each stating
    a fact of its own (`labile_allmem.consolidate.segment`).

  A topic term is *specific* unless it occurs in more than ``generic_share``
  of the units the diagnoser has seen. Each rule names the kind of evidence
  it found and a raw strength (which orders proposals of one kind); the
  proposal's confidence is the judged precision of its kind
  (`labile_allmem.consolidate.calibration`), so θ = 0.9 asks for a kind
  that hand judgements found right nine times in ten (docs/allmem.md).

* `LLMDiagnoser` (`labile_allmem.consolidate.diagnose_llm`, re-exported
  here): one JSON call per neighbourhood that passes a cheap offline
  pre-gate; a call that fails contributes no proposals and is counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
import numpy as np
from numpy.typing import NDArray

from labile.plugin import (
    Deps,
    Embedder,
    Node,
    NodeFilter,
    Store,
    cosine,
    get_logger,
)
from labile_allmem.consolidate.calibration import calibrated
from labile_allmem.consolidate.diagnose_llm import LLMDiagnoser, build_llm_diagnoser
from labile_allmem.consolidate.records import Neighbourhood, OfflineDiagnosisConfig, Proposal
from labile_allmem.consolidate.relate import (
    UnitProfile,
    disjoint_times,
    evidence_text,
    profile,
    restatement,
    revision,
)
from labile_allmem.consolidate.segment import Segmentation, segment, sentence_spans
from labile_allmem.lexical import jaccard, term_set
from labile_allmem.schema import VISIBLE_UNITS, unit_order
from labile_allmem.write import normalized_rows

log = get_logger(__name__)

#: The kind of a Merge whose every pair is near-identical.
NEAR_DUPLICATE = "near-duplicate"
#: The kind of a Merge of turns that only perform one ritual (a greeting, a farewell).
RITUAL = "repeated ritual"
#: Merge kinds from the strongest evidence to the weakest: a set is of its weakest pair's kind.
_MERGE_KINDS = (NEAR_DUPLICATE, RITUAL, "restatement")

__all__ = [
    "LLMDiagnoser",
    "OfflineDiagnoser",
    "OfflineDiagnosisConfig",
    "build_llm_diagnoser",
    "build_neighbourhoods",
    "build_offline_diagnoser",
]


def build_neighbourhoods(
    store: Store, namespace: str, anchors: Sequence[Node], k: int,
    where: NodeFilter = VISIBLE_UNITS,
) -> list[Neighbourhood]:
    """The top-``k`` neighbourhood of every visible anchor with an embedding.

    ``where`` says which nodes are neighbours: visible All-Mem units by
    default; another bundle's evidence-carrying kinds work too, since the
    offline rules read only text, caption, speaker, session, time and
    embedding (`labile_allmem.consolidate.relate`).
    """
    hoods: list[Neighbourhood] = []
    for anchor in anchors:
        if not anchor.visible or anchor.embedding is None:
            continue
        found = store.vector_search(namespace, anchor.embedding, k + 1, where=where)
        others = [node for node, _ in found if node.id != anchor.id][:k]
        hoods.append(Neighbourhood(anchor=anchor, units=(anchor, *others)))
    return hoods


def split_candidates(
    units: Sequence[Node], embedder: Embedder, config: OfflineDiagnosisConfig
) -> dict[str, Segmentation]:
    """Segment every unit that is long enough, embedding all sentences in one call."""
    todo: list[tuple[Node, list[tuple[int, int]]]] = []
    for unit in units:
        if len(term_set(unit.content)) < config.split_min_words:
            continue
        spans = sentence_spans(unit.content)
        if len(spans) >= 2:
            todo.append((unit, spans))
    if not todo:
        return {}
    texts = [unit.content[s:e] for unit, spans in todo for s, e in spans]
    vectors = normalized_rows(embedder.embed(texts))
    out: dict[str, Segmentation] = {}
    row = 0
    for unit, spans in todo:
        block: NDArray[np.float32] = vectors[row : row + len(spans)]
        row += len(spans)
        out[unit.id] = segment(
            unit.content, spans, block, similarity=config.split_similarity,
            min_segment_words=config.split_min_segment_words,
        )
    return out


class OfflineDiagnoser:
    """``allmem.diagnoser.offline``: rule-based diagnosis from embeddings and lexical
    signals (see the module doc).

    Evidence never changes, so the embeddings of units' evidence are cached
    across runs by unit id.
    """

    def __init__(self, config: OfflineDiagnosisConfig, embedder: Embedder) -> None:
        """Create the diagnoser."""
        self.config, self._embedder = config, embedder
        self.failures = 0
        self._profiles: dict[str, UnitProfile] = {}
        self._evidence: dict[str, NDArray[np.float32]] = {}
        self._generic: frozenset[str] = frozenset()
        self._seen_terms: dict[str, frozenset[str]] = {}

    def _p(self, node: Node) -> UnitProfile:
        prof = self._profiles.get(node.id)
        if prof is None:
            prof = self._profiles[node.id] = profile(node)
        return prof

    def _embed_evidence(self, hoods: Sequence[Neighbourhood]) -> None:
        missing = sorted({u.id: u for h in hoods for u in h.units
                          if u.id not in self._evidence}.items())
        if not missing:
            return
        vectors = normalized_rows(self._embedder.embed([evidence_text(u) for _, u in missing]))
        for (uid, _), vec in zip(missing, vectors, strict=True):
            self._evidence[uid] = vec

    def _common_terms(self, hoods: Sequence[Neighbourhood]) -> frozenset[str]:
        """Terms too common among all units seen so far to name a subject.

        Neighbourhoods gather similar units, so counting within them would
        call every term of a frequent topic common; the counts are therefore
        kept over every unit this diagnoser has seen (evidence never changes).
        """
        for hood in hoods:
            for unit in hood.units:
                if unit.id not in self._seen_terms:
                    self._seen_terms[unit.id] = self._p(unit).terms
        df: dict[str, int] = {}
        for terms in self._seen_terms.values():
            for term in terms:
                df[term] = df.get(term, 0) + 1
        limit = max(3.0, self.config.generic_share * len(self._seen_terms))
        return frozenset(t for t, n in df.items() if n > limit)

    def _cos(self, a: Node, b: Node) -> float:
        return float(self._evidence[a.id] @ self._evidence[b.id])

    def diagnose(self, hoods: Sequence[Neighbourhood]) -> list[Proposal]:
        """Proposals for every neighbourhood (deterministic)."""
        self._profiles = {}
        self._embed_evidence(hoods)
        self._generic = self._common_terms(hoods)
        splits = split_candidates([h.anchor for h in hoods], self._embedder, self.config)
        out: list[Proposal] = []
        for hood in hoods:
            seg = splits.get(hood.anchor.id)
            if seg is not None and len(seg.spans) >= 2:
                raw = seg.confidence
                kind = "marked topic change" if seg.marked else "topic segments"
                out.append(Proposal(op="split", target=(hood.anchor.id,),
                                    confidence=round(calibrated("split", kind), 6),
                                    reason=f"{len(seg.spans)} {kind}", kind=kind,
                                    anchor=hood.anchor.id, raw=round(raw, 6)))
            merge = self._merge(hood)
            if merge is not None:
                out.append(merge)
            out.extend(self._updates(hood))
        self._profiles = {}
        return out

    # -- merge --------------------------------------------------------------
    def _near_duplicate(self, a: Node, b: Node) -> float | None:
        """Strength of two near-identical units (small talk included), or ``None``."""
        cfg = self.config
        cos = cosine(a.embedding, b.embedding)
        if cos < cfg.merge_cosine:
            return None
        pa, pb = self._p(a), self._p(b)
        if not pa.terms and not pb.terms:
            jac = 1.0 if a.content.strip().casefold() == b.content.strip().casefold() else 0.0
        else:
            jac = jaccard(pa.terms, pb.terms)
        if jac < cfg.merge_overlap:
            return None
        if pa.numbers != pb.numbers or pa.negated != pb.negated:
            return None  # a different value is an update candidate, not a duplicate
        if disjoint_times(pa.times, pb.times):
            return None  # the same kind of thing on different dates: two events
        return math.sqrt(max(0.0, cos) * min(1.0, jac / 0.75))

    def _pair_duplicate(self, a: Node, b: Node) -> tuple[float, str, str] | None:
        """Merge strength, reason and kind of a pair (``near-duplicate``,
        ``repeated ritual`` or ``restatement``), or ``None``."""
        cfg = self.config
        if cfg.same_speaker and a.attrs.get("speaker") != b.attrs.get("speaker"):
            return None
        near = self._near_duplicate(a, b)
        if near is not None:
            return near, "near-duplicates", NEAR_DUPLICATE
        cos = self._cos(a, b)
        act = self._p(a).act
        if act and act == self._p(b).act and cos >= cfg.ritual_cosine:
            # Two turns that only greet (or only take leave) say the same thing.
            return cos, f"the same {act}", RITUAL
        if cos < cfg.restate_cosine:
            return None
        found = restatement(self._p(a), self._p(b), cos, self._generic)
        return (found.strength, found.why, found.kind) if found is not None else None

    def _merge(self, hood: Neighbourhood) -> Proposal | None:
        anchor = hood.anchor
        scored = []
        for other in hood.units[1:]:
            pair = self._pair_duplicate(anchor, other)
            if pair is not None:
                scored.append((pair[0], pair[1], pair[2], other))
        if not scored:
            return None
        scored.sort(key=lambda item: (-item[0], item[3].id))
        members = [anchor]
        raw = 1.0
        why = scored[0][1]
        kinds: set[str] = set()
        for p, _, kind, other in scored:
            pairs = [self._pair_duplicate(m, other) for m in members[1:]]
            if any(q is None for q in pairs):
                continue  # coherence: every pair of the set must be duplicates
            raw = min(raw, p, *(q[0] for q in pairs if q is not None))
            kinds.update((kind, *(q[2] for q in pairs if q is not None)))
            members.append(other)
        # A set is as weak as its weakest pair: near-duplicates only if every pair is one.
        kind = max(kinds, key=_MERGE_KINDS.index)
        return Proposal(
            op="merge", target=tuple(m.id for m in members),
            confidence=round(calibrated("merge", kind), 6), kind=kind,
            reason=f"{len(members)} units; {why}", anchor=anchor.id, raw=round(raw, 6),
        )

    # -- update -------------------------------------------------------------
    def _updates(self, hood: Neighbourhood) -> list[Proposal]:
        anchor = hood.anchor
        cfg = self.config
        out = []
        for other in hood.units[1:]:
            newer, older = (
                (anchor, other) if unit_order(anchor) > unit_order(other) else (other, anchor)
            )
            if cfg.same_speaker and newer.attrs.get("speaker") != older.attrs.get("speaker"):
                continue
            if self._pair_duplicate(newer, older) is not None:
                continue  # the same thing said twice is a Merge
            cos = self._cos(newer, older)
            if cos < cfg.update_cosine:
                continue
            found = revision(self._p(newer), self._p(older), cos, self._generic)
            if found is not None:
                out.append(Proposal(op="update", target=(newer.id, older.id),
                                    confidence=round(calibrated("update", found.kind), 6),
                                    reason=found.why, anchor=anchor.id, kind=found.kind,
                                    raw=round(found.strength, 6)))
        return out


@attrs.frozen(kw_only=True)
class OfflineRulesConfig:
    """Options of ``allmem.diagnoser.offline`` and ``allmem.repair_planner.offline``.

    Attributes:
        offline: Thresholds of the offline rules (`OfflineDiagnosisConfig`).
    """

    offline: OfflineDiagnosisConfig = attrs.field(factory=OfflineDiagnosisConfig)


def build_offline_diagnoser(config: OfflineRulesConfig, deps: Deps) -> OfflineDiagnoser:
    """Factory of ``allmem.diagnoser.offline``."""
    return OfflineDiagnoser(config.offline, deps.embedder)
