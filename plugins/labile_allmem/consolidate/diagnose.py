"""ATC diagnosis (SPEC §4.3 step 1): edit proposals over buffered neighbourhoods.

Diagnosis is read-only. `build_neighbourhoods` gathers, for every buffered
visible unit, its top-k most similar visible units. A `Diagnoser` turns the
neighbourhoods into proposals ``(op, target, confidence)``:

* `OfflineDiagnoser` (rules + embeddings + lexical signals):

  - **Merge**: near-duplicates of the anchor (cosine >= ``merge_cosine``,
    term Jaccard >= ``merge_overlap``, same speaker, no differing numbers or
    negation); the set is grown greedily and stays *coherent*: every pair in
    it must pass the same test. p = min over pairs of
    sqrt(cosine * min(1, jaccard / 0.85)).
  - **Update**: a newer unit and an older one of the same speaker about the
    same subject (cosine >= ``update_cosine``, Jaccard >= ``update_overlap``)
    where the newer one shows a changed value: a change-of-state phrase absent
    from the older one ("now", "no longer", "anymore", "switched to" …),
    different numbers, or flipped negation. p = 0.4 + cue + 0.2·numbers + 0.15·negation
    + 0.25·closeness (capped at 0.99), where cue is 0.3 for a strong phrase
    ("no longer", "switched to" …) and 0.15 for a weak one ("now", "these
    days"); neither unit may be only questions. Without a change signal
    nothing is proposed, and a weak cue alone cannot pass the default gate.
  - **Split**: the anchor's sentences fall into topic segments
    (`labile_allmem.consolidate.segment`); p = 1 - the highest similarity
    between adjacent segments.

* `LLMDiagnoser`: one JSON call per neighbourhood, run in a thread pool
  (``workers``); a call that fails or returns invalid JSON contributes no
  proposals and is counted in ``failures``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import attrs
import numpy as np
import structlog
from attrs.validators import ge, le
from numpy.typing import NDArray

from labile.plugin import Deps, Embedder, LLMClient, LLMError, NoConfig, Node, Store, cosine
from labile_allmem import prompts
from labile_allmem.consolidate.records import Neighbourhood, Proposal
from labile_allmem.consolidate.segment import Segmentation, segment, sentence_spans
from labile_allmem.lexical import change_cues, jaccard, negated, numbers, term_set
from labile_allmem.schema import VISIBLE_UNITS, unit_order
from labile_allmem.write import normalized_rows
from labile_text.entities import is_filler
from labile_text.keywords import keyphrases
from labile_text.timeparse import resolve_time_expressions

if TYPE_CHECKING:
    from labile_allmem.consolidate.atc import ATCConfig

log = structlog.get_logger(__name__)

__all__ = [
    "LLMDiagnoser",
    "OfflineDiagnoser",
    "OfflineDiagnosisConfig",
    "build_llm_diagnoser",
    "build_neighbourhoods",
    "build_offline_diagnoser",
]


def build_neighbourhoods(
    store: Store, namespace: str, anchors: Sequence[Node], k: int
) -> list[Neighbourhood]:
    """The top-``k`` visible neighbourhood of every visible anchor with an embedding."""
    hoods: list[Neighbourhood] = []
    for anchor in anchors:
        if not anchor.visible or anchor.embedding is None:
            continue
        found = store.vector_search(namespace, anchor.embedding, k + 1, where=VISIBLE_UNITS)
        others = [node for node, _ in found if node.id != anchor.id][:k]
        hoods.append(Neighbourhood(anchor=anchor, units=(anchor, *others)))
    return hoods


@attrs.frozen(kw_only=True)
class OfflineDiagnosisConfig:
    """Thresholds of the offline diagnoser (before the confidence gate).

    Attributes:
        merge_cosine: Minimum descriptor cosine of two near-duplicates.
        merge_overlap: Minimum term Jaccard of their evidence.
        update_cosine: Minimum cosine of a current/superseded pair.
        update_overlap: Minimum term Jaccard of their evidence (same subject).
        same_speaker: Merge and Update only units of one speaker.
        split_similarity: Adjacent sentence blocks this similar stay together.
        split_min_words: A unit needs this many content words to be split.
        split_min_segment_words: Each segment needs this many content words.
    """

    merge_cosine: float = attrs.field(default=0.9, validator=[ge(-1.0), le(1.0)])
    merge_overlap: float = attrs.field(default=0.6, validator=[ge(0.0), le(1.0)])
    update_cosine: float = attrs.field(default=0.6, validator=[ge(-1.0), le(1.0)])
    update_overlap: float = attrs.field(default=0.25, validator=[ge(0.0), le(1.0)])
    same_speaker: bool = True
    split_similarity: float = attrs.field(default=0.3, validator=[ge(-1.0), le(1.0)])
    split_min_words: int = attrs.field(default=12, validator=ge(1))
    split_min_segment_words: int = attrs.field(default=5, validator=ge(1))


def _evidence(node: Node) -> str:
    caption = node.attrs.get("caption")
    return f"{node.content}\n{caption}" if caption else node.content


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


# Change cues that are common in talk without any change of state ("try it now").
_WEAK_CUES = frozenset({"now", "these days"})


@attrs.frozen
class _Profile:
    """The lexical facts of one unit the offline rules look at (computed once per run)."""

    terms: frozenset[str]
    topic: frozenset[str]
    numbers: frozenset[str]
    negated: bool
    cues: tuple[str, ...]
    filler: bool
    asks_only: bool
    times: tuple[tuple[datetime, datetime], ...]


def _profile(node: Node) -> _Profile:
    text = node.content
    anchor = node.time_start or datetime(2000, 1, 1, tzinfo=UTC)
    return _Profile(
        terms=term_set(_evidence(node)),
        topic=term_set(*keyphrases(text, k=8)),
        numbers=numbers(text),
        negated=negated(text),
        cues=tuple(change_cues(text)),
        filler=is_filler(text),
        asks_only=not any(
            not text[a:b].rstrip().endswith("?") and term_set(text[a:b])
            for a, b in sentence_spans(text)
        ),
        times=tuple((m.start, m.end) for m in resolve_time_expressions(text, anchor)),
    )


def _disjoint_times(a: _Profile, b: _Profile) -> bool:
    """Both units date what they say, and no two of their time spans overlap."""
    if not a.times or not b.times:
        return False
    return not any(s1 < e2 and s2 < e1 for s1, e1 in a.times for s2, e2 in b.times)


class OfflineDiagnoser:
    """``allmem.diagnoser.offline``: rule-based diagnosis from embeddings and lexical
    signals (see the module doc)."""

    def __init__(self, config: OfflineDiagnosisConfig, embedder: Embedder) -> None:
        """Create the diagnoser."""
        self.config, self._embedder = config, embedder
        self.failures = 0
        self._profiles: dict[str, _Profile] = {}

    def _p(self, node: Node) -> _Profile:
        prof = self._profiles.get(node.id)
        if prof is None:
            prof = self._profiles[node.id] = _profile(node)
        return prof

    def diagnose(self, hoods: Sequence[Neighbourhood]) -> list[Proposal]:
        """Proposals for every neighbourhood (deterministic)."""
        self._profiles = {}
        splits = split_candidates([h.anchor for h in hoods], self._embedder, self.config)
        out: list[Proposal] = []
        for hood in hoods:
            seg = splits.get(hood.anchor.id)
            if seg is not None and len(seg.spans) >= 2:
                out.append(Proposal(op="split", target=(hood.anchor.id,),
                                    confidence=round(seg.confidence, 6),
                                    reason=f"{len(seg.spans)} topic segments",
                                    anchor=hood.anchor.id))
            merge = self._merge(hood)
            if merge is not None:
                out.append(merge)
            out.extend(self._updates(hood))
        self._profiles = {}
        return out

    # -- merge --------------------------------------------------------------
    def _pair_duplicate(self, a: Node, b: Node) -> float | None:
        """Near-duplicate confidence of a pair, or ``None`` if they are not duplicates."""
        cfg = self.config
        if cfg.same_speaker and a.attrs.get("speaker") != b.attrs.get("speaker"):
            return None
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
        if _disjoint_times(pa, pb):
            return None  # the same kind of thing on different dates: two events
        return math.sqrt(max(0.0, cos) * min(1.0, jac / 0.75))

    def _merge(self, hood: Neighbourhood) -> Proposal | None:
        anchor = hood.anchor
        scored = []
        for other in hood.units[1:]:
            p = self._pair_duplicate(anchor, other)
            if p is not None:
                scored.append((p, other))
        if not scored:
            return None
        scored.sort(key=lambda item: (-item[0], item[1].id))
        members = [anchor]
        conf = 1.0
        for p, other in scored:
            pairs = [self._pair_duplicate(m, other) for m in members[1:]]
            if any(q is None for q in pairs):
                continue  # coherence: every pair of the set must be near-duplicates
            conf = min(conf, p, *(q for q in pairs if q is not None))
            members.append(other)
        return Proposal(
            op="merge", target=tuple(m.id for m in members), confidence=round(conf, 6),
            reason=f"{len(members)} near-duplicates", anchor=anchor.id,
        )

    # -- update -------------------------------------------------------------
    def _updates(self, hood: Neighbourhood) -> list[Proposal]:
        anchor = hood.anchor
        out = []
        for other in hood.units[1:]:
            newer, older = (
                (anchor, other) if unit_order(anchor) > unit_order(other) else (other, anchor)
            )
            scored = self._update_confidence(newer, older)
            if scored is not None:
                p, why = scored
                out.append(Proposal(op="update", target=(newer.id, older.id),
                                    confidence=round(p, 6), reason=why, anchor=anchor.id))
        return out

    def _update_confidence(self, newer: Node, older: Node) -> tuple[float, str] | None:
        """Supersession confidence of ``(newer, older)``, or ``None`` without a change signal."""
        cfg = self.config
        if cfg.same_speaker and newer.attrs.get("speaker") != older.attrs.get("speaker"):
            return None
        pn, po = self._p(newer), self._p(older)
        if pn.filler or po.filler or pn.asks_only or po.asks_only:
            return None  # small talk and questions state nothing that could be superseded
        if self._pair_duplicate(newer, older) is not None:
            return None
        cos = cosine(newer.embedding, older.embedding)
        if cos < cfg.update_cosine:
            return None
        if not pn.terms or not po.terms or jaccard(pn.terms, po.terms) < cfg.update_overlap:
            return None
        if not pn.topic & po.topic:
            return None  # no shared topic phrase: not the same subject
        cues = [c for c in pn.cues if c not in po.cues]
        num_change = bool(pn.numbers) and bool(po.numbers) and pn.numbers != po.numbers
        neg_flip = pn.negated != po.negated
        if not (cues or num_change or neg_flip):
            return None
        span = max(1e-6, 0.9 - cfg.update_cosine)
        closeness = min(1.0, max(0.0, (cos - cfg.update_cosine) / span))
        strong = any(c not in _WEAK_CUES for c in cues)
        cue = 0.3 if strong else 0.15 if cues else 0.0
        p = 0.4 + cue + 0.2 * num_change + 0.15 * neg_flip + 0.25 * closeness
        signals = [*cues, *(["numbers"] if num_change else []), *(["negation"] if neg_flip else [])]
        return min(0.99, p), "changed: " + ", ".join(signals)


class LLMDiagnoser:
    """``allmem.diagnoser.llm``: one LLM call per neighbourhood, calls run in parallel.

    A neighbourhood anchored on pure small talk (`labile_text.entities.is_filler`:
    "Hey Mel!", "Thanks so much!") is not sent: it states nothing to split,
    merge into or supersede (a real 135M model merged greetings), and the call
    would cost a full prompt. Such anchors are counted in ``skipped``.
    """

    def __init__(self, llm: LLMClient, *, workers: int = 4) -> None:
        """Create the diagnoser with a thread pool of ``workers``."""
        self._llm, self._workers = llm, max(1, workers)
        self.failures = 0
        self.skipped = 0

    def diagnose(self, hoods: Sequence[Neighbourhood]) -> list[Proposal]:
        """Ask the model about every neighbourhood; results keep neighbourhood order."""
        kept = [h for h in hoods if not is_filler(h.anchor.content)]
        self.skipped += len(hoods) - len(kept)
        hoods = kept
        if not hoods:
            return []
        if self._workers == 1 or len(hoods) == 1:
            results = [self._one(h) for h in hoods]
        else:
            with ThreadPoolExecutor(max_workers=self._workers) as pool:
                results = list(pool.map(self._one, hoods))
        out: list[Proposal] = []
        for proposals in results:
            if proposals is None:
                self.failures += 1
            else:
                out.extend(proposals)
        return out

    def _one(self, hood: Neighbourhood) -> list[Proposal] | None:
        aliases = {f"U{i + 1}": unit.id for i, unit in enumerate(hood.units)}
        blocks = [prompts.unit_block(alias, unit)
                  for alias, unit in zip(aliases, hood.units, strict=True)]
        prompt = prompts.diagnose_prompt("U1", blocks)
        try:
            reply = self._llm.complete_json(prompt, prompts.DIAGNOSE_SCHEMA,
                                            operation="allmem.diagnose", system=prompts.SYSTEM)
        except LLMError as exc:
            log.warning("allmem_diagnosis_failed", anchor=hood.anchor.id, error=str(exc)[:200])
            return None
        out = []
        for item in reply.get("proposals", []):
            # Aliases are mapped back to ids; anything else is kept verbatim so Norm
            # can drop it as an unknown id and count it.
            target = tuple(aliases.get(str(t).strip().upper(), str(t).strip())
                           for t in item["target"])
            out.append(Proposal(op=str(item["op"]), target=target,
                                confidence=float(item["confidence"]),
                                reason=str(item.get("reason", ""))[:300],
                                anchor=hood.anchor.id))
        return out


def build_offline_diagnoser(config: NoConfig, deps: Deps, host: ATCConfig) -> OfflineDiagnoser:
    """Factory of ``allmem.diagnoser.offline`` (thresholds from the host's ``offline``)."""
    del config
    return OfflineDiagnoser(host.offline, deps.embedder)


def build_llm_diagnoser(config: NoConfig, deps: Deps, host: ATCConfig) -> LLMDiagnoser:
    """Factory of ``allmem.diagnoser.llm`` (``workers`` parallel calls, from the host)."""
    del config
    return LLMDiagnoser(deps.llm, workers=host.workers)
