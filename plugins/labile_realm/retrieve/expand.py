"""Expansion atoms ``realm.subgraph_beam`` and ``realm.path_search`` (Algorithm 2, lines 6–14).

Both atoms run the same loop: before each round the sufficiency controller
(a ``realm.sufficiency_controller``) decides whether the evidence is enough or
which frontier nodes (≤ 5) to expand; the expansion policy (a
``realm.expansion_policy``) gives each frontier node an action; the action is
executed and the newly reached nodes join the evidence set with their
access score (eq. 8). The registered name chooses the default mode of the
offline policy (an LLM policy may pick either mode per node).

Candidate filtering and scoring follow the paper's §3.3.2 (adaptive evidence
expansion): a candidate is dropped before scoring when it is already on the
current path, already in the evidence set (reached from another seed),
excluded by the layer/predicate/direction filter, reached over ``contradicts``
under conflict inhibition, or over a retired edge; it is scored with
``0.6·cos(e.description, reasoning) + 0.4·w_e + δ_temporal`` (clipped) and
dropped when below ``score_threshold``.

The two walks themselves (``subgraph_beam`` and ``path_search``) are in
`labile_realm.retrieve.walk`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs
import numpy as np
from attrs.validators import ge, in_, le

from labile.plugin import (
    ComponentSpec,
    Deps,
    Edge,
    Hit,
    Query,
    Reach,
    Store,
    bounded,
    component_field,
    get_logger,
)
from labile_realm.decisions import (
    EXPANSION_POLICY,
    SUFFICIENCY_CONTROLLER,
    ExpansionPolicy,
    SufficiencyController,
)
from labile_realm.retrieve.fusion import STATE_RELEVANCE, Fusion
from labile_realm.retrieve.plan import (
    STATE_EXPANSION,
    ExpandMode,
    ExpansionAction,
    SeedPlan,
    TemporalDecay,
    parse_include,
    plans_of,
)
from labile_realm.retrieve.score import access_score, edge_score, path_score, temporal_delta
from labile_realm.retrieve.walk import ExpansionCache, Reached, beam, path_search
from labile_realm.schema import CONTRADICTS

log = get_logger(__name__)

#: What every edge says under ``typed = false`` (the no-typed-predicates ablation).
UNTYPED_DESCRIPTION = "related"


def _check_include(_inst: object, _attr: object, value: tuple[str, ...]) -> None:
    parse_include(value)


@attrs.frozen(kw_only=True)
class ExpandConfig:
    """Options of the expansion atoms.

    Attributes:
        controller: The sufficiency controller, a ``realm.sufficiency_controller``
            (``….offline`` or ``….llm``).
        policy: The expansion policy, a ``realm.expansion_policy``.
        max_rounds: Maximum expansion depth (rounds of the loop): LoCoMo 3, LongMemEval 5.
        score_threshold: Default candidate threshold.
        subgraph_max_nodes: Default beam budget per seed.
        beam_hops: Hops one beam action may take.
        path_max_depth: Default longest path.
        path_top_k: Default active paths per hop.
        hop_penalty: Path-score penalty per extra hop.
        include: Default ``layer[/predicate[/direction]]`` filters (empty: all edges).
        conflict_inhibit: Default for dropping ``contradicts`` edges.
        temporal_decay: Turn the plan's time range into a decay window.
        decay_days: Tolerance of that window, in days.
        decay_mode: ``"soft"`` penalises out-of-window nodes, ``"hard"`` drops them.
        missing_time_mode: ``"keep"`` (fixed penalty) or ``"drop"`` nodes without time.
        semantic_weight: w_sem of the edge score.
        edge_weight: w_edge of the edge score.
        beta: β of the access score (eq. 8).
        max_edges_per_node: Edges considered per expanded node, heaviest first.
        activation: How a reached node's access score is formed: ``"edge"`` is
            eq. 8 alone; ``"propagate"`` multiplies it by the activation of the
            node it was reached from (a neighbour of a weak seed stays weak);
            ``"accumulate"`` propagates and also lets a node already in the
            evidence set, reached again from another node, gain activation
            (noisy-OR with weight ``echo_weight``) instead of being ignored.
        echo_weight: Weight of a repeated activation in ``"accumulate"`` mode.
        edge_meaning: What the semantic terms of the edge score and eq. 8 read:
            ``"description"`` embeds the edge's description (an embedder call per
            description not seen before, most of a query's cost on a fresh
            graph); ``"target"`` reads the stored embedding of the node the edge
            leads to (no embedder call; offline descriptions mostly restate it).
        own_relevance: Score a reached node by its own relevance to the question,
            on the seeds' scale (the seeder's fitted fusion of BM25 and cosine,
            `labile_realm.retrieve.fusion`), times the support of the edge that
            reached it: ``own × (1 − ρ + ρ·edge score)`` with ρ =
            ``support_weight``. Off: eq. 8 (the edge description's similarity to
            the question), which leaves reached nodes far below the seeds.
        support_weight: ρ, how much a weak edge discounts a reached node.
        typed: Let edge types matter. Off (an ablation), every edge is alike:
            layer/predicate filters are ignored and an edge's semantic score
            reads one generic description instead of its own.

    The keys ``evidence_k``, ``max_frontier`` and ``frontier_kinds`` (options
    of the controller) and ``planning`` (of the policy) are still read from
    this table, for configs written when they were the expander's, and moved
    into the component that takes them.
    """

    controller: ComponentSpec = component_field(
        SUFFICIENCY_CONTROLLER, f"{SUFFICIENCY_CONTROLLER}.offline",
        moved=("evidence_k", "max_frontier", "frontier_kinds"))
    policy: ComponentSpec = component_field(EXPANSION_POLICY, f"{EXPANSION_POLICY}.offline",
                                            moved=("planning",))
    max_rounds: int = attrs.field(default=3, validator=[ge(0), le(10)])
    score_threshold: float = attrs.field(default=0.3, validator=[ge(0.0), le(1.0)])
    subgraph_max_nodes: int = attrs.field(default=4, validator=bounded(1, 10_000))
    beam_hops: int = attrs.field(default=2, validator=[ge(1), le(10)])
    path_max_depth: int = attrs.field(default=3, validator=[ge(1), le(10)])
    path_top_k: int = attrs.field(default=2, validator=bounded(1, 1000))
    hop_penalty: float = attrs.field(default=0.03, validator=ge(0.0))
    include: tuple[str, ...] = attrs.field(default=(), validator=_check_include)
    conflict_inhibit: bool = True
    temporal_decay: bool = True
    decay_days: float = attrs.field(default=7.0, validator=ge(0.0))
    decay_mode: Literal["hard", "soft"] = attrs.field(default="soft",
                                                      validator=in_(("hard", "soft")))
    missing_time_mode: Literal["keep", "drop"] = attrs.field(default="keep",
                                                            validator=in_(("keep", "drop")))
    semantic_weight: float = attrs.field(default=0.6, validator=ge(0.0))
    edge_weight: float = attrs.field(default=0.4, validator=ge(0.0))
    beta: float = attrs.field(default=0.6, validator=[ge(0.0), le(1.0)])
    max_edges_per_node: int = attrs.field(default=64, validator=bounded(1, 100_000))
    activation: Literal["edge", "propagate", "accumulate"] = attrs.field(
        default="accumulate", validator=in_(("edge", "propagate", "accumulate")))
    echo_weight: float = attrs.field(default=0.5, validator=[ge(0.0), le(1.0)])
    typed: bool = True
    edge_meaning: Literal["description", "target"] = attrs.field(
        default="description", validator=in_(("description", "target")))
    own_relevance: bool = False
    support_weight: float = attrs.field(default=0.5, validator=[ge(0.0), le(1.0)])


class RealmExpander:
    """One expansion atom (see the module docstring)."""

    def __init__(self, atom: str, mode: ExpandMode, config: ExpandConfig, deps: Deps) -> None:
        self.atom, self.mode, self.config, self.deps = atom, mode, config, deps
        self.store: Store = deps.store
        self.controller: SufficiencyController = deps.registries.build(config.controller, deps)
        self.policy: ExpansionPolicy = deps.registries.build(config.policy, deps)
        self.defaults = ExpansionAction(
            mode=mode, include=parse_include(config.include),
            score_threshold=config.score_threshold, subgraph_max_nodes=config.subgraph_max_nodes,
            path_max_depth=config.path_max_depth, path_top_k=config.path_top_k,
            conflict_inhibit=config.conflict_inhibit,
        )
        self._desc_cache: dict[str, np.ndarray] = {}

    # -- the loop -------------------------------------------------------------------
    def expand(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        """Grow ``hits`` round by round until the controller says enough."""
        reached: dict[str, Hit] = {h.node.id: h for h in hits}
        expanded: set[str] = set()
        plans = plans_of(state)
        plan = plans[0] if plans else SeedPlan(query=query.text)
        info = state.setdefault(STATE_EXPANSION, {})
        cache = ExpansionCache(self.store, query.namespace)
        fusion = state.get(STATE_RELEVANCE) if self.config.own_relevance else None
        rounds = 0
        for round_ in range(self.config.max_rounds):
            decision = self.controller.decide(
                query, list(reached.values()), expanded, round_, state
            )
            if decision.is_enough or not decision.frontier:
                break
            rounds += 1
            actions = self._actions(query, decision.frontier, plan, reached, state)
            cache.edges_of(list(decision.frontier))
            new: dict[str, Hit] = {}
            echoes: dict[str, float] = {}
            for node_id in decision.frontier:
                expanded.add(node_id)
                origin = reached.get(node_id)
                if origin is None:
                    continue
                found = self._run_action(query, origin, actions[node_id], reached, new, echoes,
                                         cache, fusion)
                for r in found:
                    hit = self._hit(r, origin, round_)
                    old = new.get(r.node.id)
                    if old is None or hit.score > old.score:
                        new[r.node.id] = hit
            self._reinforce(reached, echoes)
            if not new and not echoes:
                break
            reached.update(new)
        info["rounds"] = rounds
        info["expanded"] = sorted(expanded)
        return list(reached.values())

    def _actions(
        self, query: Query, frontier: Sequence[str], plan: SeedPlan,
        reached: dict[str, Hit], state: dict[str, Any],
    ) -> dict[str, ExpansionAction]:
        defaults = self._with_decay(self.defaults, plan)
        actions = self.policy.actions(query, frontier, reached, plan, defaults, state)
        if not self.config.typed:
            actions = {i: attrs.evolve(a, include=()) for i, a in actions.items()}
        info = state.setdefault(STATE_EXPANSION, {})
        modes = info.setdefault("modes", {})
        for a in actions.values():
            modes[a.mode] = modes.get(a.mode, 0) + 1
        return actions

    def _with_decay(self, action: ExpansionAction, plan: SeedPlan) -> ExpansionAction:
        if not self.config.temporal_decay or plan.time_range is None:
            return action
        from datetime import timedelta

        return attrs.evolve(action, temporal_decay=TemporalDecay(
            start=plan.time_range[0], end=plan.time_range[1],
            delta=timedelta(days=self.config.decay_days), mode=self.config.decay_mode,
            missing_time_mode=self.config.missing_time_mode,
        ))

    def _reinforce(self, reached: dict[str, Hit], echoes: dict[str, float]) -> None:
        """Noisy-OR the repeated activations into hits already in the evidence set."""
        if self.config.activation != "accumulate":
            return
        lam = self.config.echo_weight
        for node_id, act in echoes.items():
            hit = reached.get(node_id)
            if hit is None:
                continue
            key = "access" if hit.via.stage == "expand" else "seed"
            base = hit.scores.get(key, hit.score)
            boosted = 1.0 - (1.0 - min(1.0, max(0.0, base))) * (1.0 - lam * min(1.0, act))
            if boosted > base:
                hit.scores[key] = boosted
                hit.scores["echo"] = hit.scores.get("echo", 0.0) + lam * act
                hit.score = max(hit.score, boosted)

    def _hit(self, r: Reached, origin: Hit, round_: int) -> Hit:
        base_path = origin.via.path or (origin.node.id,)
        path = base_path + r.path[1:]
        edges = origin.via.edges + r.edges
        return Hit(
            node=r.node, score=r.activation,
            via=Reach(atom=self.atom, stage="expand", hop=len(path) - 1, path=path, edges=edges,
                      plan=origin.via.plan),
            scores={"edge": r.edge_score, "hop": r.hop_scores[-1] if r.hop_scores else 0.0,
                    "path": path_score(r.hop_scores, self.config.hop_penalty),
                    "eq8": r.access, "access": r.activation, "round": float(round_ + 1)},
        )

    # -- one action -------------------------------------------------------------------
    def _run_action(
        self, query: Query, origin: Hit, action: ExpansionAction,
        reached: dict[str, Hit], new: dict[str, Hit], echoes: dict[str, float],
        cache: ExpansionCache, fusion: Fusion | None,
    ) -> list[Reached]:
        r_vec = self._reasoning_vector(query, action.reasoning)
        blocked = set(reached) | set(new)
        start = min(1.0, max(0.0, origin.scores.get(
            "access" if origin.via.stage == "expand" else "seed", origin.score)))
        seed = Reached(node=origin.node, edge_score=1.0, access=1.0, path=(origin.node.id,),
                        edges=(), hop_scores=(), activation=start)

        def candidates(sources: Sequence[Reached],
                       block: set[str]) -> list[tuple[str, Reached, Edge]]:
            return self._candidates(query, sources, action, r_vec, block, reached, echoes, cache,
                                    fusion)

        if action.mode == "path_search":
            return path_search(seed, action, self.config.hop_penalty, blocked, candidates)
        return beam(seed, action, self.config.beam_hops, blocked, candidates,
                    by_activation=fusion is not None)

    def _activation(self, parent: Reached, access: float) -> float:
        if self.config.activation == "edge":
            return access
        return max(0.0, access) * parent.activation

    def _reasoning_vector(self, query: Query, reasoning: str) -> np.ndarray:
        if not reasoning.strip() or reasoning == query.text:
            assert query.vector is not None
            return np.asarray(query.vector, dtype=np.float32)
        return self._embed_descriptions([reasoning])[reasoning]

    def _embed_descriptions(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._desc_cache))
        if missing:
            if len(self._desc_cache) > 100_000:
                self._desc_cache.clear()
            vecs = self.deps.embedder.embed(missing)
            for text, vec in zip(missing, vecs, strict=True):
                self._desc_cache[text] = np.asarray(vec, dtype=np.float32)
        return {t: self._desc_cache[t] for t in texts}

    def _candidates(  # noqa: C901
        self, query: Query, sources: Sequence[Reached],
        action: ExpansionAction, r_vec: np.ndarray, blocked: set[str],
        reached: dict[str, Hit], echoes: dict[str, float], cache: ExpansionCache,
        fusion: Fusion | None = None,
    ) -> list[tuple[str, Reached, Edge]]:
        """Score the candidates one hop away from each source (a partial path).

        Candidates already in the evidence set are not returned; in
        ``accumulate`` mode their repeated activation is recorded in ``echoes``.
        With ``fusion`` (``own_relevance``), a candidate's activation is its own
        relevance times the edge's support (and the beam admits by activation).
        """
        ids = [s.node.id for s in sources]
        by_node: dict[str, list[tuple[Edge, str, bool]]] = {i: [] for i in ids}
        for node_id, edges in cache.edges_of(ids).items():
            for e in edges:
                forward = e.src == node_id
                other = e.dst if forward else e.src
                if other == node_id or not self._edge_allowed(e, forward, action):
                    continue
                by_node[node_id].append((e, other, forward))
        for lst in by_node.values():
            lst.sort(key=lambda t: (-t[0].weight, t[0].id))
            del lst[self.config.max_edges_per_node:]
        targets = {o for lst in by_node.values() for _, o, _ in lst}
        nodes = cache.get_nodes(sorted(targets))
        by_target = self.config.edge_meaning == "target"
        descs = {} if by_target else self._embed_descriptions(
            [self._description(e) for lst in by_node.values() for e, _, _ in lst]
        )
        q_vec = np.asarray(query.vector, dtype=np.float32) if query.vector is not None else r_vec
        # Each edge's meaning (its description, or the node it leads to) against the
        # reasoning and the query: one matrix product instead of two cosines per edge.
        meanings: dict[str, np.ndarray] = dict(descs) if not by_target else {
            i: n.embedding for i, n in nodes.items() if n.embedding is not None}
        sim_to_r = cosines(meanings, r_vec)
        sim_to_q = sim_to_r if q_vec is r_vec else cosines(meanings, q_vec)
        accumulate = self.config.activation == "accumulate"
        out: list[tuple[str, Reached, Edge]] = []
        for parent in sources:
            src, path = parent.node.id, parent.path
            for e, other, _fwd in by_node.get(src, []):
                if other in path:
                    continue
                echo = other in blocked
                if echo and not (accumulate and other in reached):
                    continue
                node = nodes.get(other)
                if node is None:
                    continue
                delta = temporal_delta(node, action.temporal_decay)
                if delta is None:
                    continue
                key = other if by_target else self._description(e)
                if key not in meanings:
                    continue
                score = edge_score(sim_to_r[key], e.weight, delta,
                                   w_sem=self.config.semantic_weight,
                                   w_edge=self.config.edge_weight)
                if score < action.score_threshold:
                    continue
                s_acc = access_score(sim_to_q[key], e.weight, -delta, self.config.beta)
                act = self._activation(parent, s_acc)
                if fusion is not None:
                    rho = self.config.support_weight
                    own = cache.relevance.get(other)
                    if own is None:
                        own = cache.relevance[other] = fusion.score(node)[0]
                    act = own * (1.0 - rho + rho * score)
                if echo:
                    echoes[other] = max(echoes.get(other, 0.0), act)
                    continue
                out.append((src, Reached(node=node, edge_score=score, access=s_acc,
                                          path=(*path, other), edges=(e.id,),
                                          hop_scores=(score,), activation=act), e))
        return out

    def _description(self, e: Edge) -> str:
        """The text an edge's semantic score reads (one generic text when untyped)."""
        if not self.config.typed:
            return UNTYPED_DESCRIPTION
        return e.description or e.predicate

    @staticmethod
    def _edge_allowed(e: Edge, forward: bool, action: ExpansionAction) -> bool:
        if e.attrs.get("retired") or e.weight <= 0.0:
            return False
        if action.conflict_inhibit and e.predicate == CONTRADICTS:
            return False
        return not action.include or any(f.allows(e.predicate, forward) for f in action.include)


def cosines(vectors: Mapping[str, np.ndarray], v: np.ndarray) -> dict[str, float]:
    """Cosine of each of ``vectors`` with ``v``, by key (0 for a zero vector), as
    `labile.plugin.cosine` computes it, in one matrix product."""
    if not vectors:
        return {}
    keys = list(vectors)
    mat = np.stack([np.asarray(vectors[k], dtype=np.float32) for k in keys])
    vec = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(mat, axis=1) * float(np.linalg.norm(vec))
    dots = mat @ vec
    sims = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return dict(zip(keys, sims.tolist(), strict=True))


def make_expander(atom: str, mode: ExpandMode) -> Any:
    """A factory ``(config, deps) -> RealmExpander`` for one registered atom."""

    def factory(config: ExpandConfig, deps: Deps) -> RealmExpander:
        return RealmExpander(atom, mode, config, deps)

    factory.__name__ = f"build_{mode}"
    return factory
