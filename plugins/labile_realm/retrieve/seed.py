"""Seed atoms ``realm.query_match``, ``realm.keywords_match``, ``realm.hybrid_match``.

Each atom runs the search's seed plans (made once per search by the planner
the atom is configured with, a ``realm.seed_planner``, and shared through
``state``) in its own
matching mode, or in the mode the plan names when ``mode = "plan"``. Plans
run independently and merge by node id, keeping the best score.

* ``query_match``: cosine of the plan's query embedding with node embeddings;
* ``keywords_match``: the store's BM25 over ``Node.search_text`` for the
  plan's keywords, scaled by the best score of the result;
* ``hybrid_match``: ``0.6·embedding + 0.4·keyword``, both computed for every
  candidate (the union of the two candidate lists; a candidate missing from
  the lexical list has keyword score 0, which is what BM25 gives a node
  sharing no keyword). The plan's time range τ applies here only; nodes
  without a time pass it. With ``fusion = "zscore"`` the two signals are
  standardised over the candidates instead (``w_k·z(BM25) + w_e·z(cosine)``,
  plus the anchor boost) and the sum is squashed into (0, 1) by a logistic,
  so downstream scores (eq. 8 and 9) keep their scale. Standardising lets
  each signal count by how far a candidate stands out from the others rather
  than by the raw scale of its scores.

With ``context_weight`` γ > 0, hybrid and keyword matching read the graph's
temporal order: an event's keyword score gains γ × the BM25 score of the event
that ``precedes`` it, and the successors of lexical matches join the
candidates. A reply ("Yes, twice last year!") shares few words with the
question it answers, but the turn before it does.

Node types T filter the seeds but never empty them: if T with the score
threshold leaves nothing, the threshold is dropped; if T alone still leaves
nothing, T is dropped too (and then the time range). So a non-empty
namespace always yields seeds.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
import numpy as np
from attrs.validators import ge, in_, le

from labile.plugin import (
    ComponentSpec,
    Deps,
    Edge,
    Hit,
    Node,
    NodeFilter,
    Query,
    Reach,
    Store,
    bounded,
    component_field,
    cosine,
    embed_queries,
    get_logger,
)
from labile.text.tokenize import words
from labile_realm.decisions import SEED_PLANNER, SeedPlanner
from labile_realm.retrieve.fusion import STATE_RELEVANCE, Fusion, anchor_words
from labile_realm.retrieve.plan import (
    STATE_PLANS,
    STATE_SEED_SCORES,
    SeedMode,
    SeedPlan,
)
from labile_realm.schema import PRECEDES, kind_name

log = get_logger(__name__)


@attrs.frozen(kw_only=True)
class SeedConfig:
    """Options shared by the three seed atoms.

    Attributes:
        planner: Who writes the seed plans: a ``realm.seed_planner``
            (``realm.seed_planner.offline`` or ``realm.seed_planner.llm``).
        mode: ``"atom"`` runs every plan in this atom's matching mode; ``"plan"``
            runs each plan in the mode the planner chose.
        max_seed_plans: At most this many plans (LoCoMo 1, LongMemEval 3).
        top_k: Seeds kept per plan.
        candidates: Candidates each signal contributes before scoring.
        score_threshold: Seeds scoring below are dropped (relaxed if that empties T).
        embedding_weight: Weight of the embedding score in hybrid mode.
        keyword_weight: Weight of the keyword score in hybrid mode.
        normalise_embedding: How cosine scores are put on the keyword scale in
            hybrid mode: ``"max"`` divides by the best one (both signals peak at
            1), ``"minmax"`` maps the candidates' range onto [0, 1], ``"none"``
            keeps raw cosines.
        normalise_keywords: How BM25 scores are put on [0, 1]: ``"max"`` divides
            by the best one; ``"minmax"`` maps the candidates' range onto [0, 1],
            which removes a constant offset (a term every candidate shares, such
            as a speaker's name under a store whose BM25 statistics span many
            namespaces).
        drop_participants: Leave the names of the conversation's participants
            (the speakers and listeners recorded on event nodes) out of the
            keyword query: every event description names them, so they carry
            no lexical signal, and a store whose BM25 statistics span many
            namespaces would weigh them heavily.
        context_weight: γ, the share of the preceding event's BM25 score an
            event's keyword score gains (0: off; see the module docstring).
        context_by_weight: Scale the predecessor's share by the ``precedes``
            edge's weight (which reconsolidation adjusts).
        fusion: How hybrid mode combines the signals: ``"weighted"`` (the
            normalised scores, weighted) or ``"zscore"`` (see the module docstring).
        anchor_boost: Added to the hybrid score of a node spoken by one of the
            plan's anchors (the people the question names): entity-anchored
            seeding without a graph walk. A question about Ana is most often
            answered by something Ana said.
        node_types: Fixed node kinds (short or full names) overriding the plan's T.
        use_time_range: Enforce the plan's τ in hybrid mode.
        outside_window: When τ leaves fewer than ``top_k`` seeds, nodes outside
            it fill the list with their score times this factor (0: no fill).

    The key ``planning`` (options of the planner) is still read from this
    table, for configs written when it was the seeder's, and moved into the planner.
    """

    planner: ComponentSpec = component_field(SEED_PLANNER, f"{SEED_PLANNER}.offline",
                                             moved=("planning",))
    mode: Literal["atom", "plan"] = attrs.field(default="atom", validator=in_(("atom", "plan")))
    max_seed_plans: int = attrs.field(default=1, validator=[ge(1), le(5)])
    top_k: int = attrs.field(default=30, validator=bounded(1, 100_000))
    candidates: int = attrs.field(default=60, validator=bounded(1, 100_000))
    score_threshold: float = attrs.field(default=0.0, validator=[ge(0.0), le(1.0)])
    embedding_weight: float = attrs.field(default=0.6, validator=ge(0.0))
    keyword_weight: float = attrs.field(default=0.4, validator=ge(0.0))
    normalise_embedding: Literal["max", "minmax", "none"] = attrs.field(
        default="max", validator=in_(("max", "minmax", "none")))
    normalise_keywords: Literal["max", "minmax"] = attrs.field(
        default="minmax", validator=in_(("max", "minmax")))
    drop_participants: bool = True
    context_weight: float = attrs.field(default=0.0, validator=[ge(0.0), le(1.0)])
    context_by_weight: bool = False
    fusion: Literal["weighted", "zscore"] = attrs.field(
        default="weighted", validator=in_(("weighted", "zscore")))
    anchor_boost: float = attrs.field(default=0.0, validator=[ge(0.0), le(1.0)])
    node_types: tuple[str, ...] = ()
    use_time_range: bool = True
    outside_window: float = attrs.field(default=0.5, validator=[ge(0.0), le(1.0)])

    def __attrs_post_init__(self) -> None:
        bad = [t for t in self.node_types if kind_name(t) is None]
        if bad:
            raise ValueError(f"unknown node type(s) {bad!r} (use entity, event, episode, fact)")


class RealmSeeder:
    """One seed atom; its matching mode is fixed by the name it is registered under."""

    def __init__(self, atom: str, mode: SeedMode, config: SeedConfig, deps: Deps) -> None:
        self.atom, self.mode, self.config, self.deps = atom, mode, config, deps
        self.store: Store = deps.store
        self.planner: SeedPlanner = deps.registries.build(config.planner, deps)
        self._participants: dict[str, set[str]] = {}
        self._fixed_types = (
            frozenset(str(kind_name(t)) for t in config.node_types) if config.node_types else None
        )

    def seed(self, query: Query, state: dict[str, Any]) -> list[Hit]:
        """Run every plan, merge by node id (best score wins), best first.

        The first plan's fitted fusion (the whole question's) is kept in
        ``state`` under `STATE_RELEVANCE` for expansion to score what it reaches.
        """
        merged: dict[str, Hit] = {}
        for i, plan in enumerate(self.plans(query, state)):
            mode = plan.mode if self.config.mode == "plan" else self.mode
            hits, fusion = self._run(query, plan, mode, f"p{i + 1}")
            if i == 0 and fusion is not None:
                state.setdefault(STATE_RELEVANCE, fusion)
            for hit in hits:
                old = merged.get(hit.node.id)
                if old is None or hit.score > old.score:
                    merged[hit.node.id] = hit
        hits = sorted(merged.values(), key=lambda h: (-h.score, h.node.id))
        scores = state.setdefault(STATE_SEED_SCORES, {})
        for h in hits:
            scores[h.node.id] = max(scores.get(h.node.id, 0.0), h.score)
        return hits

    def plans(self, query: Query, state: dict[str, Any]) -> list[SeedPlan]:
        """The seed plans of this search: made once (by the first seeder to
        ask) and shared via ``state``."""
        plans = state.get(STATE_PLANS)
        if plans is None:
            plans = self.planner.seed_plans(query, self.config.max_seed_plans, state)
            plans = plans[: self.config.max_seed_plans]
            state[STATE_PLANS] = plans
        return list(plans)

    # -- one plan ----------------------------------------------------------------
    def _run(self, query: Query, plan: SeedPlan, mode: SeedMode,
             tag: str) -> tuple[list[Hit], Fusion | None]:
        types = self._fixed_types if self._fixed_types is not None else plan.node_types
        time_range = plan.time_range if (mode == "hybrid_match" and self.config.use_time_range) \
            else None
        vector = self._vector(query, plan, mode)
        attempts = [
            (types, time_range, self.config.score_threshold),
            (types, time_range, 0.0),
            (None, time_range, 0.0),
            (None, None, 0.0),
        ]
        for kinds, window, threshold in attempts:
            where = NodeFilter(kinds=kinds, time_range=window) \
                if kinds is not None or window is not None else None
            context: dict[str, Edge] = {}
            scored, fusion = self._score(query, plan, mode, vector, where, context)
            kept = [(n, s, parts) for n, s, parts in scored if s >= threshold]
            if kept:
                relaxed = (kinds, window, threshold) != attempts[0]
                if window is not None and len(kept) < self.config.top_k:
                    kept += self._outside_window(query, plan, mode, vector, kinds, kept, context)
                kept.sort(key=lambda t: (-t[1], t[0].id))
                return [
                    Hit(node=n, score=s, via=self._reach(tag, context.get(n.id)),
                        scores={**parts, "seed": s, **({"relaxed": 1.0} if relaxed else {})})
                    for n, s, parts in kept[: self.config.top_k]
                ], fusion
        return self._last_resort(query, tag), None

    def _reach(self, tag: str, context: Edge | None) -> Reach:
        """How a seed was reached: by this atom, over the ``precedes`` edge that lent it
        its lexical context if one did (so reconsolidation credits that edge)."""
        if context is None:
            return Reach(atom=self.atom, stage="seed", plan=tag)
        return Reach(atom=self.atom, stage="seed", plan=tag, path=(context.src, context.dst),
                     edges=(context.id,))

    def _outside_window(
        self, query: Query, plan: SeedPlan, mode: SeedMode, vector: np.ndarray | None,
        kinds: frozenset[str] | None, kept: list[tuple[Node, float, dict[str, float]]],
        context: dict[str, Edge],
    ) -> list[tuple[Node, float, dict[str, float]]]:
        """Seeds outside the plan's time range, scored × ``outside_window``, that fill a
        list the range left short: a question's date is often not the date the answer
        was said, and a window holding two nodes must not cap the evidence at two."""
        factor = self.config.outside_window
        if factor <= 0:
            return []
        have = {n.id for n, _, _ in kept}
        where = NodeFilter(kinds=kinds) if kinds is not None else None
        scored, _ = self._score(query, plan, mode, vector, where, context)
        return [(n, s * factor, {**parts, "outside_window": factor})
                for n, s, parts in scored if n.id not in have]

    def _vector(self, query: Query, plan: SeedPlan, mode: SeedMode) -> np.ndarray | None:
        if mode == "keywords_match":
            return None
        if plan.query.strip() and plan.query != query.text:
            return np.asarray(embed_queries(self.deps.embedder, [plan.query])[0], dtype=np.float32)
        return query.vector

    def _score(
        self,
        query: Query,
        plan: SeedPlan,
        mode: SeedMode,
        vector: np.ndarray | None,
        where: NodeFilter | None,
        context: dict[str, Edge],
    ) -> tuple[list[tuple[Node, float, dict[str, float]]], Fusion | None]:
        """The candidates of both signals, scored, and the fusion fitted on them."""
        cfg = self.config
        ns = query.namespace
        dense: dict[str, tuple[Node, float]] = {}
        lexical: dict[str, tuple[Node, float]] = {}
        if mode != "keywords_match" and vector is not None:
            for node, sim in self.store.vector_search(ns, vector, cfg.candidates, where=where):
                dense[node.id] = (node, float(sim))
            self._learn_participants(ns, (n for n, _ in dense.values()))
        if mode != "query_match":
            text = self._keyword_text(ns, plan, query)
            for node, score in self.store.text_search(ns, text, cfg.candidates, where=where):
                lexical[node.id] = (node, float(score))
            if cfg.context_weight > 0 and lexical:
                lexical = self._with_context(ns, lexical, dense, where, context)
        if mode == "query_match":
            return [(n, s, {"embedding": s}) for n, s in dense.values()], None
        fusion = Fusion.fit(
            method=cfg.fusion, vector=vector,
            lexical={i: sc for i, (_, sc) in lexical.items()}, sims={},
            keyword_weight=cfg.keyword_weight, embedding_weight=cfg.embedding_weight,
            normalise_keywords=cfg.normalise_keywords,
            normalise_embedding=cfg.normalise_embedding, anchors=[], anchor_boost=0.0)
        if mode == "keywords_match":
            return [(n, fusion.keyword_score(sc), {"keyword": sc})
                    for n, sc in lexical.values()], None
        # hybrid: both signals for every candidate of either list
        nodes = {i: n for i, (n, _) in dense.items()}
        nodes.update({i: n for i, (n, _) in lexical.items()})
        sims = {i: sc for i, (_, sc) in dense.items()}
        if vector is not None:
            for i, n in nodes.items():
                if i not in sims:
                    sims[i] = cosine(vector, n.embedding)
        sims = {i: sims.get(i, 0.0) for i in sorted(nodes)}
        fusion = Fusion.fit(
            method=cfg.fusion, vector=vector,
            lexical={i: sc for i, (_, sc) in lexical.items()}, sims=sims,
            keyword_weight=cfg.keyword_weight, embedding_weight=cfg.embedding_weight,
            normalise_keywords=cfg.normalise_keywords,
            normalise_embedding=cfg.normalise_embedding,
            anchors=anchor_words(plan.anchors) if cfg.anchor_boost > 0 else [],
            anchor_boost=cfg.anchor_boost)
        out = []
        for i, sim in sims.items():
            score, parts = fusion.score(nodes[i], sim)
            out.append((nodes[i], score, parts))
        return out, fusion

    def _with_context(
        self, namespace: str, lexical: dict[str, tuple[Node, float]],
        dense: dict[str, tuple[Node, float]], where: NodeFilter | None,
        context: dict[str, Edge],
    ) -> dict[str, tuple[Node, float]]:
        """Keyword scores plus γ × the predecessor's, over ``precedes`` edges.

        Successors of lexical matches that passed neither list join with
        their context score alone (if ``where`` accepts them). With
        ``context_by_weight`` the share is γ × the edge's weight, so what
        reconsolidation learns about an edge reaches seeding. The edge that
        lent each node its context is recorded in ``context``.
        """
        gamma = self.config.context_weight
        by_weight = self.config.context_by_weight
        before: dict[str, tuple[float, Edge]] = {}
        for e in self.store.edges_of(namespace, list(lexical), direction="out"):
            if e.predicate != PRECEDES or e.src not in lexical or e.attrs.get("retired"):
                continue
            share = lexical[e.src][1] * (e.weight if by_weight else 1.0)
            if e.dst not in before or share > before[e.dst][0]:
                before[e.dst] = (share, e)
        if not before:
            return lexical
        known = {i: n for i, (n, _) in lexical.items()}
        known.update((i, n) for i, (n, _) in dense.items())
        unknown = [i for i in before if i not in known]
        for node in self.store.get_nodes(namespace, unknown) if unknown else []:
            if where is None or where.accepts(node):
                known[node.id] = node
        out = dict(lexical)
        for i, (prev, edge) in before.items():
            if i in known and prev > 0:
                own = lexical[i][1] if i in lexical else 0.0
                out[i] = (known[i], own + gamma * prev)
                context[i] = edge
        return out

    def _learn_participants(self, namespace: str, nodes: Any) -> None:
        known = self._participants.setdefault(namespace, set())
        for node in nodes:
            for key in ("speaker", "listener"):
                name = node.attrs.get(key)
                if isinstance(name, str) and name:
                    known.update(words(name))

    def _keyword_text(self, namespace: str, plan: SeedPlan, query: Query) -> str:
        """The lexical query: the plan's keywords, participants' names left out."""
        keywords = list(plan.keywords)
        if self.config.drop_participants:
            names = self._participants.get(namespace, set())
            kept = [k for k in keywords if not set(words(k)) <= names]
            keywords = kept or keywords
        return " ".join(keywords) or plan.query or query.text

    def _last_resort(self, query: Query, tag: str) -> list[Hit]:
        """Nodes without embeddings or search text: take the first few, unscored."""
        out = []
        for node in self.store.iter_nodes(query.namespace):
            out.append(Hit(node=node, score=0.0, via=Reach(atom=self.atom, stage="seed", plan=tag),
                           scores={"seed": 0.0, "relaxed": 1.0}))
            if len(out) >= self.config.top_k:
                break
        if out:
            log.info("realm_seed_last_resort", namespace=query.namespace, count=len(out))
        return out


def make_seeder(atom: str, mode: SeedMode) -> Any:
    """A factory ``(config, deps) -> RealmSeeder`` for one registered atom."""

    def factory(config: SeedConfig, deps: Deps) -> RealmSeeder:
        return RealmSeeder(atom, mode, config, deps)

    factory.__name__ = f"build_{mode}"
    return factory
