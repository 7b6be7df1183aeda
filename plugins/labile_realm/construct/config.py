"""Options of ``realm.construct`` (`labile_realm.construct.extractor.RealmExtractor`)."""

from __future__ import annotations

import attrs

from labile.plugin import ComponentSpec, bounded, component_field
from labile_realm.decisions import UNIT_EXTRACTOR, WRITE_DECIDER


@attrs.frozen(kw_only=True)
class RealmConstructConfig:
    """Options of ``realm.construct``.

    Attributes:
        units: Who extracts candidate units: a ``realm.unit_extractor``
            (``realm.unit_extractor.offline`` rules or ``realm.unit_extractor.llm``).
        decisions: Who decides node operations and edges: a ``realm.write_decider``.
        similar_k: Size of the similarity part of a unit's neighbourhood.
        recent_k: Size of the recency part of a unit's neighbourhood.
        structural_edges: Write the bookkeeping edges (episode ``comprises``
            event, ``precedes``, ``contextualizes``, ``verifies``, ``supersedes``
            of a fact slot, episode ``summarizes`` its highlighted turns).
        episodes: Keep one episode node per session.
        supersession: A later statement of a one-at-a-time value (home, work,
            diet, an amount, a plan's status …) supersedes the earlier one: an
            edge, and the validity contract on the old nodes
            (`labile_realm.construct.supersede`; off in the
            ``realm-no-supersede`` ablation).
        implied_supersession: With ``supersession``, a turn that reports a change
            without a slot statement ("nope, down to one cup") replaces the
            earlier statement of its speaker closest to it in meaning
            (`labile_realm.construct.supersede.implied_supersession`), when
            their cosine is at least ``implied_min_similarity``.
        max_entity_sources: Cap on the observation ids an entity keeps.

    The keys ``extraction``, ``summary_words`` and ``context_turns`` (options
    of the unit extractor) and ``thresholds`` (of the write decider) are still
    read from this table, for configs written when they were its own, and
    moved into the component that takes them.
    """

    units: ComponentSpec = component_field(
        UNIT_EXTRACTOR, f"{UNIT_EXTRACTOR}.offline",
        moved=("extraction", "summary_words", "context_turns"))
    decisions: ComponentSpec = component_field(WRITE_DECIDER, f"{WRITE_DECIDER}.offline",
                                               moved=("thresholds",))
    similar_k: int = attrs.field(default=6, validator=bounded(0, 100_000))
    recent_k: int = attrs.field(default=6, validator=bounded(0, 100_000))
    structural_edges: bool = True
    episodes: bool = True
    supersession: bool = True
    implied_supersession: bool = True
    implied_min_similarity: float = attrs.field(default=0.4, validator=bounded(0.0, 1.0))
    max_entity_sources: int = attrs.field(default=50, validator=bounded(1, 100_000))
