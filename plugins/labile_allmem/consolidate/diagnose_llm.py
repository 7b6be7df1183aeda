"""``allmem.diagnoser.llm``: the model proposes edits, behind a cheap offline pre-gate.

The paper asks the model about every buffered neighbourhood. On a real local
model that is the cost of a whole consolidation pass: a run over two sessions
of two LoCoMo conversations (SmolLM2-135M, one thread) was still diagnosing
after 76 minutes. Most neighbourhoods cannot hold an edit at all: a Merge or
an Update needs two units close enough to be about the same thing, a Split
needs a unit long enough to carry two topics. So before any call the
diagnoser asks the same cheap questions the offline rules start from
(`LLMDiagnosisConfig.prefilter`):

* ``"similarity"`` (default): a neighbour is shown only when it could form a
  pair with the anchor by the offline rules' first tests: its evidence
  embedding is at least ``min_similarity`` similar to the anchor's, the two
  share a *specific* content term (one held by at most ``generic_share`` of
  the pass's units, the offline bar), and, with the host's
  ``offline.same_speaker``, it is the anchor's speaker's. (The stored
  descriptor embeddings carry the date and the speaker, so two units of one
  session look alike whatever they say: measured on LoCoMo, the median anchor
  had a same-speaker neighbour at descriptor cosine 0.7.) A unit *may split*
  when the offline segmenter finds two topic segments in it. At most
  ``max_units`` units are shown. A neighbourhood with no neighbour left and
  no unit that may split is not sent (``skipped:no_candidate``).
* ``"offline"``: the offline diagnoser runs first (its rules, any
  confidence); only neighbourhoods where it proposed something are sent,
  showing the units its proposals name (``skipped:offline_nothing``). The
  model then confirms or corrects the rules' candidates.
* ``"none"``: every neighbourhood is sent with all its units (the paper).

In every mode pure small talk is never sent (``skipped:small_talk``). With a
pre-gate and ``skip_covered``, a neighbourhood whose shown units were all shown together in
an earlier call of the pass is not asked again (``skipped:covered``: A's
neighbourhood holds B and B's holds A). ``max_calls`` bounds the calls of one
pass; the neighbourhoods with the strongest signal are asked first
(``skipped:budget``).

Each call's schema is narrowed to what the prompt shows: targets are the
aliases shown (a constrained model cannot invent an id), and ``split`` is
offered only when a shown unit may split, ``merge`` / ``update`` only when two
units are shown. Every outcome is counted in `LLMDiagnoser.counts`; a call
that fails contributes no proposals and is counted in ``failures``.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import attrs
import numpy as np
from attrs.validators import ge, in_, le, optional
from numpy.typing import NDArray

from labile.plugin import Deps, Embedder, LLMClient, LLMError, Node, bounded, get_logger
from labile_allmem import prompts
from labile_allmem.consolidate.records import Neighbourhood, OfflineDiagnosisConfig, Proposal
from labile_allmem.consolidate.relate import evidence_text
from labile_allmem.consolidate.segment import sentence_spans
from labile_allmem.lexical import term_set
from labile_allmem.write import normalized_rows
from labile_text.entities import is_filler

log = get_logger(__name__)

__all__ = ["LLMDiagnoser", "LLMDiagnosisConfig", "build_llm_diagnoser", "diagnose_schema"]


class _Proposer(Protocol):
    """What the ``offline`` pre-gate needs of the offline diagnoser."""

    def diagnose(self, hoods: Sequence[Neighbourhood]) -> list[Proposal]: ...


#: Units that may split, by id (the offline segmenter's verdict on anchors).
Splitter = Callable[[Sequence[Node]], set[str]]


@attrs.frozen(kw_only=True)
class LLMDiagnosisConfig:
    """Options of ``allmem.diagnoser.llm`` (see the module doc).

    Attributes:
        prefilter: ``"similarity"``, ``"offline"`` or ``"none"``.
        min_similarity: Least cosine of a shown neighbour's evidence
            embedding to the anchor's (``similarity`` mode); ``None`` takes the
            lower of ``offline.restate_cosine`` and ``offline.update_cosine``.
        max_units: Most units shown in one call, the anchor included (not
            with ``prefilter = "none"``).
        skip_covered: Do not ask again about units already shown together
            (not with ``prefilter = "none"``).
        max_calls: Most calls in one pass (0: no limit).
        narrow_schema: Narrow each call's schema to the aliases and operators
            shown. ``False`` sends the paper's free-form schema: a target that
            is not a shown alias then reaches Norm, which drops it as an
            unknown id.
        workers: Parallel diagnosis calls.
        offline: Thresholds of the offline rules it borrows: the similarity
            bar, the speaker and split rules, and the ``offline`` prefilter.
    """

    prefilter: str = attrs.field(default="similarity",
                                 validator=in_(("similarity", "offline", "none")))
    min_similarity: float | None = attrs.field(default=None,
                                               validator=optional([ge(-1.0), le(1.0)]))
    max_units: int = attrs.field(default=6, validator=bounded(1, 10_000))
    skip_covered: bool = True
    max_calls: int = attrs.field(default=0, validator=bounded(0, 1_000_000))
    narrow_schema: bool = True
    workers: int = attrs.field(default=4, validator=bounded(1, 256))
    offline: OfflineDiagnosisConfig = attrs.field(factory=OfflineDiagnosisConfig)


@attrs.frozen
class _Ask:
    """One neighbourhood as it will be shown: its units and what it may propose."""

    hood: Neighbourhood
    units: tuple[Node, ...]
    ops: tuple[str, ...]
    strength: float


def diagnose_schema(n_units: int, ops: Sequence[str]) -> dict[str, Any]:
    """`prompts.DIAGNOSE_SCHEMA` narrowed to ``n_units`` aliases ``U1..Un`` and ``ops``."""
    schema = copy.deepcopy(prompts.DIAGNOSE_SCHEMA)
    proposals = schema["properties"]["proposals"]
    # at most a split of each unit and one set or pair more: a longer list is a loop
    proposals["maxItems"] = min(proposals["maxItems"], 2 * n_units)
    item = proposals["items"]
    item["properties"]["op"]["enum"] = list(ops)
    target = item["properties"]["target"]
    target["items"] = {"type": "string", "enum": [f"U{i + 1}" for i in range(n_units)]}
    target["maxItems"] = n_units
    # a short reason: a small model loops inside an unbounded string
    item["properties"]["reason"] = {"type": "string", "maxLength": 200}
    return schema


class LLMDiagnoser:
    """``allmem.diagnoser.llm``: one LLM call per neighbourhood that passes the pre-gate.

    Attributes:
        failures: Calls that failed (no proposals from them).
        counts: ``asked``, ``skipped:<reason>``, ``neighbours_hidden`` (units
            the pre-gate kept out of a prompt), ``proposal_unknown_target`` (a
            target that is no alias shown, passed on verbatim for Norm).
    """

    def __init__(
        self, llm: LLMClient, *, workers: int = 4,
        config: LLMDiagnosisConfig | None = None,
        min_similarity: float = 0.45, same_speaker: bool = True,
        split_min_words: int = 12, generic_share: float = 0.04,
        embedder: Embedder | None = None, splitter: Splitter | None = None,
        offline: _Proposer | None = None,
    ) -> None:
        """Create the diagnoser.

        Without ``embedder`` the pre-gate compares the stored embeddings;
        without ``splitter`` a unit may split when it has ``split_min_words``
        content words and two sentences; ``offline`` is needed by the
        ``offline`` pre-gate. Built directly with no ``config``, it asks about
        every neighbourhood (``prefilter = "none"``, the paper).
        """
        self._llm, self._workers = llm, max(1, workers)
        self.config = config if config is not None else LLMDiagnosisConfig(prefilter="none")
        self._min_similarity = (self.config.min_similarity
                                if self.config.min_similarity is not None else min_similarity)
        self._same_speaker, self._split_min_words = same_speaker, split_min_words
        self._generic_share = generic_share
        self._embedder, self._splitter = embedder, splitter
        if self.config.prefilter == "offline" and offline is None:
            raise ValueError("the offline pre-gate needs the offline diagnoser")
        self._offline = offline
        # evidence never changes, so its vectors are cached by unit id across passes
        self._evidence: dict[str, NDArray[np.float32]] = {}
        self._splits: set[str] = set()
        self._generic: frozenset[str] = frozenset()
        self._terms: dict[str, frozenset[str]] = {}
        self.failures = 0
        self.counts: Counter[str] = Counter()

    @property
    def skipped(self) -> int:
        """Neighbourhoods not sent to the model, for any reason."""
        return sum(n for key, n in self.counts.items() if key.startswith("skipped:"))

    # -- the pre-gate -------------------------------------------------------
    def may_split(self, unit: Node) -> bool:
        """Whether ``unit`` may carry two topics (the offline segmenter's verdict)."""
        if self._splitter is not None:
            return unit.id in self._splits
        return (len(term_set(unit.content)) >= self._split_min_words
                and len(sentence_spans(unit.content)) >= 2)

    def _prepare(self, hoods: Sequence[Neighbourhood]) -> None:
        """The pass's signals: terms, specific terms, evidence vectors, splits."""
        units = {u.id: u for h in hoods for u in h.units}
        self._terms = {uid: term_set(u.content) for uid, u in units.items()}
        df: Counter[str] = Counter(t for terms in self._terms.values() for t in terms)
        limit = max(3.0, self._generic_share * len(units))
        self._generic = frozenset(t for t, n in df.items() if n > limit)
        if self._splitter is not None:
            self._splits = self._splitter([h.anchor for h in hoods])
        missing = sorted(uid for uid in units if uid not in self._evidence)
        if not missing:
            return
        if self._embedder is not None:
            rows = self._embedder.embed([evidence_text(units[uid]) for uid in missing])
        else:
            dim = max((len(u.embedding) for u in units.values() if u.embedding is not None),
                      default=1)
            rows = np.asarray([units[uid].embedding if units[uid].embedding is not None
                               else np.zeros(dim) for uid in missing], dtype=np.float32)
        for uid, vec in zip(missing, normalized_rows(rows), strict=True):
            self._evidence[uid] = vec

    def _ask(self, hood: Neighbourhood, units: Sequence[Node], strength: float) -> _Ask | None:
        if self.config.prefilter != "none":  # "none" shows the whole neighbourhood (the paper)
            units = units[: self.config.max_units]
        ops = (("split",) if any(self.may_split(u) for u in units) else ()) + (
            ("merge", "update") if len(units) >= 2 else ())
        if not ops:
            return None
        return _Ask(hood=hood, units=tuple(units), ops=ops, strength=strength)

    def _similar(self, hood: Neighbourhood) -> _Ask | None:
        anchor = hood.anchor
        specific = self._terms[anchor.id] - self._generic
        kept: list[Node] = [anchor]
        best = 0.0
        for other in hood.units[1:]:
            if self._same_speaker and other.attrs.get("speaker") != anchor.attrs.get("speaker"):
                continue
            sim = float(self._evidence[anchor.id] @ self._evidence[other.id])
            if sim >= self._min_similarity and specific & self._terms[other.id]:
                kept.append(other)
                best = max(best, sim)
        return self._ask(hood, kept, best)

    def _plan(self, hoods: Sequence[Neighbourhood]) -> list[_Ask]:
        mode = self.config.prefilter
        if mode == "similarity" and hoods:
            self._prepare(hoods)
        named: dict[str, set[str]] = {}
        if mode == "offline" and self._offline is not None and hoods:
            for prop in self._offline.diagnose(hoods):
                named.setdefault(prop.anchor, set()).update(prop.target)
        asks: list[_Ask] = []
        for hood in hoods:
            if is_filler(hood.anchor.content):
                self.counts["skipped:small_talk"] += 1
                continue
            if mode == "none":
                ask = self._ask(hood, hood.units, 1.0)
            elif mode == "offline":
                ids = named.get(hood.anchor.id, set())
                if not ids:
                    self.counts["skipped:offline_nothing"] += 1
                    continue
                ask = self._ask(hood, [hood.anchor] + [u for u in hood.units[1:] if u.id in ids],
                                1.0)
            else:
                ask = self._similar(hood)
            if ask is None:
                self.counts["skipped:no_candidate"] += 1
                continue
            asks.append(ask)
        return self._dedupe(asks)

    def _dedupe(self, asks: list[_Ask]) -> list[_Ask]:
        cfg = self.config
        if cfg.max_calls and len(asks) > cfg.max_calls:
            ranked = sorted(range(len(asks)), key=lambda i: (-asks[i].strength, i))
            keep = set(ranked[: cfg.max_calls])
            self.counts["skipped:budget"] += len(asks) - len(keep)
            asks = [a for i, a in enumerate(asks) if i in keep]
        out: list[_Ask] = []
        seen: list[frozenset[str]] = []
        for ask in asks:
            ids = frozenset(u.id for u in ask.units)
            if (cfg.skip_covered and cfg.prefilter != "none"
                    and any(ids <= s for s in seen)):
                self.counts["skipped:covered"] += 1
                continue
            seen.append(ids)
            self.counts["neighbours_hidden"] += len(ask.hood.units) - len(ask.units)
            out.append(ask)
        return out

    # -- asking ---------------------------------------------------------------
    def diagnose(self, hoods: Sequence[Neighbourhood]) -> list[Proposal]:
        """Ask the model about every neighbourhood that passes the pre-gate.

        Results keep neighbourhood order.
        """
        asks = self._plan(hoods)
        self.counts["asked"] += len(asks)
        if not asks:
            return []
        if self._workers == 1 or len(asks) == 1:
            results = [self._one(a) for a in asks]
        else:
            with ThreadPoolExecutor(max_workers=self._workers) as pool:
                results = list(pool.map(self._one, asks))
        out: list[Proposal] = []
        for proposals in results:
            if proposals is None:
                self.failures += 1
            else:
                out.extend(proposals)
        # counted here, not in the worker threads: a Counter is not safe to share
        shown = {u.id for a in asks for u in a.units}
        self.counts["proposal_unknown_target"] += sum(
            1 for p in out for t in p.target if t not in shown)
        return out

    def _one(self, ask: _Ask) -> list[Proposal] | None:
        aliases = {f"U{i + 1}": unit.id for i, unit in enumerate(ask.units)}
        blocks = [prompts.unit_block(alias, unit)
                  for alias, unit in zip(aliases, ask.units, strict=True)]
        prompt = prompts.diagnose_prompt("U1", blocks)
        anchor = ask.hood.anchor.id
        try:
            schema = (diagnose_schema(len(ask.units), ask.ops) if self.config.narrow_schema
                      else prompts.DIAGNOSE_SCHEMA)
            reply = self._llm.complete_json(prompt, schema, operation="allmem.diagnose",
                                            system=prompts.SYSTEM)
        except LLMError as exc:
            log.warning("allmem_diagnosis_failed", anchor=anchor, error=str(exc)[:200])
            return None
        out = []
        for item in reply.get("proposals", []):
            # Aliases are mapped back to ids; anything else (a client without
            # schema decoding) is kept verbatim so Norm drops it as an unknown id.
            target = tuple(aliases.get(str(t).strip().upper(), str(t).strip())
                           for t in item["target"])
            out.append(Proposal(op=str(item["op"]), target=target,
                                confidence=float(item["confidence"]),
                                reason=str(item.get("reason", ""))[:300], anchor=anchor))
        return out


def build_llm_diagnoser(config: LLMDiagnosisConfig, deps: Deps) -> LLMDiagnoser:
    """Factory of ``allmem.diagnoser.llm``."""
    # imported here: the offline diagnoser's module re-exports this one
    from labile_allmem.consolidate.diagnose import OfflineDiagnoser, split_candidates

    offline = config.offline
    embedder = deps.embedder

    def splitter(units: Sequence[Node]) -> set[str]:
        found = split_candidates(units, embedder, offline)
        return {uid for uid, seg in found.items() if len(seg.spans) >= 2}

    return LLMDiagnoser(
        deps.llm, workers=config.workers, config=config,
        min_similarity=min(offline.restate_cosine, offline.update_cosine),
        same_speaker=offline.same_speaker, split_min_words=offline.split_min_words,
        generic_share=offline.generic_share, embedder=embedder, splitter=splitter,
        offline=OfflineDiagnoser(offline, embedder) if config.prefilter == "offline" else None,
    )
