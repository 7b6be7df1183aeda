"""``realm.construct``: the Extractor that runs Algorithm 1 over a batch of observations.

For each observation o_t (in order): extract candidate units with the running
summary and the recent context; for each unit, find its neighbourhood
(similar ∪ recent), decide add / modify / skip, then decide the edges between
the resulting node and its neighbours, and write the links the units of one
turn ask for among themselves (`labile_realm.construct.units.UnitLink`: a
turn comprises its cause and effect clauses, which are linked causally).
Which implementation makes each
decision is a component named in the options: ``units`` (a
``realm.unit_extractor``) and ``decisions`` (a ``realm.write_decider``); the
bundled ones are ``….offline`` and ``….llm`` (``"offline"`` and ``"llm"``
still name them).

Speed: every unit of an ``add`` call is embedded in one batch; nodes and
edges are written in one upsert each at the end of the call (inside the
memory's store batch), while nodes still pending in the batch are searched by
brute force, so each unit costs one small vector search and no namespace
scan. The per-namespace state (entity index, fact slots, recent nodes) is
rebuilt once per process from the store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

import attrs
import numpy as np

from labile.plugin import (
    AddReport,
    Deps,
    Edge,
    LLMError,
    LLMOutputError,
    Node,
    NodeFilter,
    Observation,
    Store,
    cosine,
    get_logger,
)
from labile_realm.construct.batch import WriteBatch, with_previous_turn
from labile_realm.construct.config import RealmConstructConfig
from labile_realm.construct.decide_offline import (
    EdgeOp,
    NodeDecision,
    structural_edges,
    supersession_slot,
)
from labile_realm.construct.extract_offline import (
    Extraction,
    session_key,
    turn_only,
    unit_id,
    unit_id_of_turn,
)
from labile_realm.construct.merge import merge_unit
from labile_realm.construct.neighbourhood import Candidate, Neighbourhood
from labile_realm.construct.own_words import OwnWords
from labile_realm.construct.passages import PASSAGE_KEY
from labile_realm.construct.relations import (
    Highlight,
    session_highlights,
    summary_links,
)
from labile_realm.construct.resume import last_events, last_session
from labile_realm.construct.rollback import Snapshot
from labile_realm.construct.supersede import (
    checked_supersessions,
    implied_supersession,
    supersede_turn,
)
from labile_realm.construct.units import ConversationState, Unit
from labile_realm.decisions import (
    BatchUnitExtractor,
    UnitExtractor,
    WriteDecider,
)
from labile_realm.episode_text import describe_episode, event_terms, session_topics
from labile_realm.ids import stable_id
from labile_realm.schema import CORRELATES, ENTITY, EPISODE, EVENT, FACT, PRECEDES
from labile_text.entities import normalize_name

log = get_logger(__name__)

#: How a document's passage is placed: added as it is (`RealmExtractor._place_passage`).
_PASSAGE = NodeDecision(op="add", reason="a passage of its turn's text")


class RealmExtractor:
    """The REALM write path (see the module docstring).

    Args:
        config: Its options.
        deps: The pipeline's dependencies (store, embedder, LLM).
    """

    def __init__(self, config: RealmConstructConfig, deps: Deps) -> None:
        self.config = config
        self.deps = deps
        self.store: Store = deps.store
        self.neighbourhood = Neighbourhood(
            self.store, similar_k=config.similar_k, recent_k=config.recent_k
        )
        self.units: UnitExtractor = deps.registries.build(config.units, deps)
        self.decider: WriteDecider = deps.registries.build(config.decisions, deps)
        self._states: dict[str, ConversationState] = {}
        self._last_event: dict[tuple[str, str], Node] = {}
        self._last_episode: dict[str, str] = {}
        self._degree: dict[str, dict[str, int]] = {}
        self._before: dict[str, Snapshot] = {}
        self._own_words = OwnWords(self._embed)

    # -- state ------------------------------------------------------------------
    def state(self, namespace: str, pending: Sequence[str] = ()) -> ConversationState:
        """The conversation state of ``namespace`` (rebuilt from the store once).

        Args:
            namespace: The namespace.
            pending: Ids of observations being ingested now (already in the
                log, but not yet part of the state).
        """
        state = self._states.get(namespace)
        if state is None:
            state = ConversationState()
            self._states[namespace] = state
        if not state.loaded:
            state.loaded = True
            for node in self.store.iter_nodes(namespace, NodeFilter(kinds={ENTITY})):
                state.index_entity(node)
            for node in self.store.iter_nodes(namespace, NodeFilter(kinds={FACT})):
                subject, attribute = node.attrs.get("subject"), node.attrs.get("attribute")
                if subject and attribute and node.is_current():
                    state.fact_slots[(str(subject), str(attribute))] = node.id
            events = self.store.iter_nodes(namespace, NodeFilter(kinds={EVENT}))
            for node in sorted(events, key=lambda n: n.learned_at):
                state.value_slots.load(node)
            skip = set(pending)
            recent = [o for o in self.store.iter_observations(namespace) if o.id not in skip]
            for obs in recent[:-12]:  # every speaker, as the process that wrote them knew
                if obs.speaker:
                    state.speakers.setdefault(normalize_name(obs.speaker), obs.speaker)
            for obs in recent[-12:]:
                state.remember(obs, (), None)
            self._resume(namespace, recent)
        return state

    def _resume(self, namespace: str, log: Sequence[Observation]) -> None:
        """Read back the chain ends this process did not write (`construct.resume`)."""
        events = self.store.iter_nodes(namespace, NodeFilter(kinds={EVENT}))
        for key, node in last_events(events).items():
            self._last_event.setdefault((namespace, key), node)
        latest = last_session(log)
        if latest is not None and self.config.episodes:
            self._last_episode.setdefault(namespace, stable_id("ep", latest))

    def on_rollback(self, namespace: str) -> None:
        """The batch of the last `ingest` into ``namespace`` rolled back: restore the
        state from before it (`labile.plugin.RollbackAware`)."""
        self._before.pop(namespace, Snapshot()).restore(
            namespace, self._states, self._last_event, self._last_episode, self._degree)

    # -- Algorithm 1 ------------------------------------------------------------------
    def ingest(
        self, namespace: str, observations: Sequence[Observation], report: AddReport
    ) -> None:
        """Build nodes and edges for ``observations`` (see the module docstring); a turn
        whose extraction got no answer from the model goes to ``report.pending``."""
        self._before[namespace] = Snapshot.take(
            namespace, self._states, self._last_event, self._last_episode, self._degree)
        state = self.state(namespace, [o.id for o in observations])
        batch = WriteBatch()
        sessions: list[str] = []
        extracted: list[tuple[Observation, Extraction]] = []
        for obs, ex in self._extract_all(observations, state, batch):
            state.remember(obs, ex.questions, None)
            key = session_key(obs)
            if key not in sessions:
                sessions.append(key)
            state.session_terms.setdefault(key, Counter()).update(t.casefold() for t in ex.terms)
            lo, hi = state.session_span.get(key, (obs.timestamp, obs.timestamp))
            state.session_span[key] = (min(lo, obs.timestamp), max(hi, obs.timestamp))
            extracted.append((obs, ex))
        units = [u for _, ex in extracted for u in ex.units]
        searchable = [u for u in units if u.searchable]
        vector_of = {id(u): v for u, v in zip(
            searchable, self._embed([u.embed_text for u in searchable]), strict=True)}
        known = {n.id for n in self.store.get_nodes(namespace, [unit_id(u) for u in units])}
        for obs, ex in extracted:
            vecs = [vector_of.get(id(u)) for u in ex.units]
            self._integrate(namespace, obs, ex, vecs, state, batch, known)
        if self.config.episodes:
            terms = {obs.id: [t.casefold() for t in ex.terms] for obs, ex in extracted}
            self._episodes(namespace, sessions, state, batch, terms)
        self.units.refresh_summary(state, list(state.session_terms))
        stale = [batch.nodes[i] for i in sorted(batch.reembed) if i in batch.nodes]
        for node, vec in zip(stale, self._embed([n.description for n in stale]), strict=True):
            node.embedding = vec
        nodes = list(batch.nodes.values())
        edges = list(batch.edges.values())
        if nodes:
            self.store.upsert_nodes(namespace, nodes)
        if edges:
            self.store.upsert_edges(namespace, edges)
        report.nodes_written += len(nodes)
        report.edges_written += len(edges)
        report.pending += batch.unbuilt
        details = report.details.setdefault("realm", {})
        details.update({
            "units": len(units),
            "ops": dict(batch.counts),
            "llm_failures": dict(batch.failures),
            "summary_words": len(state.summary.split()),
        })
        log.debug("realm_ingest", namespace=namespace, observations=len(observations),
                  units=len(units), nodes=len(nodes), edges=len(edges), **dict(batch.counts))

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self.deps.embedder, "dim", 1)), dtype=np.float32)
        return np.asarray(self.deps.embedder.embed(texts), dtype=np.float32)

    def _extract_all(
        self, observations: Sequence[Observation], state: ConversationState, batch: WriteBatch
    ) -> Iterator[tuple[Observation, Extraction]]:
        """Each observation with its extraction, asked in runs when the extractor batches.

        Lazy: the caller remembers each turn before the next run is asked.
        """
        if not isinstance(self.units, BatchUnitExtractor):
            for obs in observations:
                yield obs, self._extract(obs, state, batch)
            return
        for run in self.units.batches(observations):
            if len(run) == 1:
                yield run[0], self._extract(run[0], state, batch)
                continue
            try:
                extractions = self.units.extract_batch(run, state)
                # turns the batch extractor gave up on (unusable replies) are failures too,
                # and keep the turn itself as their event
                if gave_up := sum(e.failed for e in extractions):
                    batch.failures["extract"] += gave_up
                    extractions = [turn_only(o, failed=True) if e.failed else e
                                   for o, e in zip(run, extractions, strict=True)]
            except LLMError as exc:
                batch.failures["extract"] += len(run)
                log.warning("realm_llm_rejected", operation="extract_batch",
                            observations=[o.id for o in run], error=str(exc)[:300])
                if isinstance(exc, LLMOutputError):  # an unusable answer: keep the turns
                    extractions = [turn_only(o) for o in run]
                else:  # no answer: worth trying again later
                    batch.unbuilt.extend(o.id for o in run)
                    extractions = [Extraction() for _ in run]
            yield from zip(run, extractions, strict=True)

    def _extract(self, obs: Observation, state: ConversationState, batch: WriteBatch) -> Extraction:
        try:
            return self.units.extract(obs, state)
        except LLMError as exc:
            batch.failures["extract"] += 1
            log.warning("realm_llm_rejected", operation="extract", observation=obs.id,
                        error=str(exc)[:300])
            if isinstance(exc, LLMOutputError):
                # an unusable answer: nothing the model said is kept, the turn itself is
                return turn_only(obs)
            batch.unbuilt.append(obs.id)  # no answer: worth trying again later
            return Extraction()

    def _integrate(
        self,
        namespace: str,
        obs: Observation,
        ex: Extraction,
        vectors: Sequence[np.ndarray | None],
        state: ConversationState,
        batch: WriteBatch,
        known: set[str],
    ) -> None:
        rank = {ENTITY: 0, EPISODE: 1, EVENT: 2, FACT: 3}
        # A document's passages come last: the turn's own units never see them pending.
        order = sorted(range(len(ex.units)), key=lambda j: 5 if PASSAGE_KEY in ex.units[j].attrs
                       else rank.get(ex.units[j].kind, 4))
        entity_nodes: list[Node] = []
        event_node: Node | None = None
        skey = session_key(obs)
        episode_id = stable_id("ep", skey) if self.config.episodes else None
        placed: dict[str, str] = {}
        turn_nodes: list[Node] = []
        for j in order:
            unit, vec = ex.units[j], vectors[j]
            if PASSAGE_KEY in unit.attrs:
                if (passage := self._place_passage(namespace, unit, vec, batch, known)) is not None:
                    placed[unit.key] = passage.id
                continue
            node, cands, superseded = self._place(namespace, unit, vec, state, batch, known)
            if node is None:
                continue
            placed[unit.key] = node.id
            turn_nodes.append(node)
            if unit.attrs.get("clause_of"):
                continue  # a clause takes only the links its turn states (below)
            if node.kind == ENTITY:
                entity_nodes.append(node)
                if self.decider.links_entities:
                    entity_ops = self._semantic_edges(namespace, node, cands, batch)
                    self._apply_edges(namespace, entity_ops, batch)
                continue
            ops: list[EdgeOp] = []
            prev = self._last_event.get((namespace, skey)) if node.kind == EVENT else None
            if prev is not None and getattr(self.decider, "reads_previous_turn", False):
                cands = with_previous_turn(cands, prev, node)
            if self.config.structural_edges:
                ops += structural_edges(
                    node, episode_id=episode_id, previous_event=prev,
                    event_node=event_node, entity_nodes=entity_nodes, superseded=superseded,
                )
            ops += self._semantic_edges(namespace, node, cands, batch)
            if self.config.supersession:
                ops, marked = checked_supersessions(
                    batch.nodes.get(node.id, node), ops, lambda ids: self._nodes(namespace, ids,
                                                                                 batch))
                batch.nodes.update((n.id, n) for n in marked)
            self._apply_edges(namespace, ops, batch)
            if node.kind == EVENT:
                if event_node is None:
                    event_node = node
                self._last_event[(namespace, skey)] = node
                turns = state.session_turns.setdefault(skey, [])
                turns.extend(s for s in unit.sources if s not in turns)
        self._apply_edges(namespace, [
            EdgeOp(action="add", src=placed[u.key], dst=placed[link.target],
                   predicate=link.predicate, description=link.description, weight=link.weight)
            for u in ex.units if u.key in placed
            for link in u.links if link.target in placed
        ], batch)
        if self.config.supersession and event_node is not None:
            self._supersede(namespace, batch.nodes.get(event_node.id, event_node), turn_nodes,
                            state, batch)

    def _supersede(self, namespace: str, event: Node, turn_nodes: list[Node],
                   state: ConversationState, batch: WriteBatch) -> None:
        """The turn's statements of one-at-a-time values replace older ones
        (`labile_realm.construct.supersede`)."""
        change = supersede_turn(
            event, turn_nodes, state.value_slots, speakers=list(state.speakers.values()),
            load=lambda ids: self._nodes(namespace, ids, batch),
            similarity=lambda other: cosine(event.embedding, other.embedding),
        )
        # the slot rules' nodes are kept even when they replace nothing: the new
        # event carries its statements (``slots``), from which the index is rebuilt
        for node in change.nodes:
            batch.nodes[node.id] = node
        if not change.edges and self.config.implied_supersession:
            change = implied_supersession(
                batch.nodes.get(event.id, event),
                lambda ev: self._similar_events(namespace, ev, batch),
                min_similarity=self.config.implied_min_similarity, own_words=self._own_words)
            for node in change.nodes:
                batch.nodes[node.id] = node
        if change.edges:
            batch.counts["supersede"] += len(change.edges)
            self._apply_edges(namespace, list(change.edges), batch)

    def _similar_events(self, namespace: str, event: Node,
                        batch: WriteBatch) -> list[tuple[Node, float]]:
        """Stored and pending events most similar to ``event``, with their cosine."""
        if event.embedding is None:
            return []
        found = [(batch.nodes.get(n.id, n), float(sim)) for n, sim in self.store.vector_search(
            namespace, event.embedding, _SIMILAR_EVENTS, where=NodeFilter(kinds={EVENT}))]
        seen = {n.id for n, _ in found}
        found += [(n, cosine(event.embedding, n.embedding)) for n in batch.nodes.values()
                  if n.kind == EVENT and n.id not in seen and n.embedding is not None]
        return found

    def _place(
        self,
        namespace: str,
        unit: Unit,
        vec: np.ndarray | None,
        state: ConversationState,
        batch: WriteBatch,
        known: set[str],
    ) -> tuple[Node | None, list[Candidate], Node | None]:
        """Node decision and execution for one unit; returns (node, neighbourhood, superseded).

        A unit without a vector (not ``searchable``) has no neighbourhood and is added.
        """
        nid = unit_id(unit)
        if unit.kind != ENTITY and (nid in known or nid in batch.nodes):
            batch.counts["replayed"] += 1
            return None, [], None
        kinds = frozenset({ENTITY}) if unit.kind == ENTITY else frozenset({EVENT, FACT, EPISODE})
        cands = [] if vec is None else self.neighbourhood.find(
            namespace, vec, kinds=kinds, recent_ids=list(state.touched), pending=batch.nodes,
            exclude=frozenset({nid}),
        )
        try:
            decision = NodeDecision(op="add", reason="reached through its turn") if vec is None \
                else self.decider.decide_node(unit, cands, state)
        except LLMError as exc:
            batch.failures["node_decision"] += 1
            log.warning("realm_llm_rejected", operation="node_decision", unit=unit.key,
                        error=str(exc)[:300])
            return None, [], None
        batch.counts[decision.op] += 1
        if unit.kind == ENTITY:
            nid = unit_id(unit)  # the decision may key a same-named entity apart (identity.py)
        node = self._execute(namespace, unit, vec, nid, decision, cands, batch)
        if node is None:
            return None, [], None
        state.touch(node.id)
        if node.kind == ENTITY:
            state.index_entity(node)
        superseded = None
        slot = supersession_slot(unit)
        if slot is not None:
            old_id = state.fact_slots.get(slot)
            if old_id is not None and old_id != node.id:
                superseded = self._node(namespace, old_id, batch)
            state.fact_slots[slot] = node.id
        return node, self.decider.neighbours_to_link(decision, cands, node), superseded

    def _place_passage(self, namespace: str, unit: Unit, vec: np.ndarray | None,
                       batch: WriteBatch, known: set[str]) -> Node | None:
        """Add a document's passage (`construct.passages`) as it is: no neighbourhood, no
        decision, not touched (it would push the turn's nodes out of the recent ones)."""
        nid = unit_id(unit)
        if nid in known or nid in batch.nodes:
            batch.counts["replayed"] += 1
            return None
        batch.counts["passage"] += 1
        return self._execute(namespace, unit, vec, nid, _PASSAGE, [], batch)

    def _nodes(self, namespace: str, ids: Sequence[str], batch: WriteBatch) -> list[Node]:
        pending = [batch.nodes[i] for i in ids if i in batch.nodes]
        missing = [i for i in ids if i not in batch.nodes]
        return pending + (self.store.get_nodes(namespace, missing) if missing else [])

    def _node(self, namespace: str, node_id: str, batch: WriteBatch) -> Node | None:
        if node_id in batch.nodes:
            return batch.nodes[node_id]
        found = self.store.get_nodes(namespace, [node_id])
        return found[0] if found else None

    def _execute(
        self,
        namespace: str,
        unit: Unit,
        vec: np.ndarray | None,
        nid: str,
        decision: NodeDecision,
        cands: list[Candidate],
        batch: WriteBatch,
    ) -> Node | None:
        now = self.deps.clock()
        if decision.op == "skip":
            return None
        if decision.op == "add":
            node_attrs = dict(unit.attrs)
            node_attrs.setdefault("name", unit.name)
            description = decision.description or unit.description
            keywords = decision.keywords if decision.keywords is not None else unit.keywords
            node = Node(
                id=nid, kind=unit.kind, content=unit.content, description=description,
                keywords=keywords, time_start=unit.time_start, time_end=unit.time_end,
                created_at=now, updated_at=now, sources=unit.sources, embedding=vec,
                attrs=node_attrs,
            )
            batch.nodes[nid] = node
            if description != unit.embed_text:
                batch.reembed.add(nid)
            return node
        assert decision.target is not None
        target = batch.nodes.get(decision.target) or next(
            (c.node for c in cands if c.node.id == decision.target), None
        ) or self._node(namespace, decision.target, batch)
        if target is None:
            return None
        merged = merge_unit(target, unit, decision, self.config.max_entity_sources, now)
        batch.nodes[merged.id] = merged
        if merged.description != target.description:
            batch.reembed.add(merged.id)
        return merged

    def _semantic_edges(
        self, namespace: str, node: Node, cands: list[Candidate], batch: WriteBatch
    ) -> list[EdgeOp]:
        try:
            return self.decider.decide_edges(node, cands, _EdgeView(self, namespace, batch))
        except LLMError as exc:
            batch.failures["edge_decision"] += 1
            log.warning("realm_llm_rejected", operation="edge_decision", node=node.id,
                        error=str(exc)[:300])
            return []

    def _degrees(self, namespace: str, ids: Sequence[str]) -> dict[str, int]:
        """The running ``correlates`` degree tally of ``namespace`` (filled for ``ids``)."""
        degree = self._degree.setdefault(namespace, {})
        missing = [i for i in ids if i not in degree]
        if missing:
            for i in missing:
                degree[i] = 0
            for e in self.store.edges_of(namespace, missing, direction="out",
                                         predicates=[CORRELATES]):
                degree[e.src] = degree.get(e.src, 0) + 1
        return degree

    def _existing_edges(
        self, namespace: str, node_id: str, others: Sequence[str], batch: WriteBatch
    ) -> list[Edge]:
        """Live edges between ``node_id`` and ``others``, stored or pending in ``batch``."""
        return batch.existing_edges(self.store, namespace, node_id, others)

    def _apply_edges(self, namespace: str, ops: list[EdgeOp], batch: WriteBatch) -> None:
        batch.apply(self.store, namespace, ops, self.deps.clock())

    # -- episodes -----------------------------------------------------------------
    def _episodes(
        self, namespace: str, sessions: list[str], state: ConversationState, batch: WriteBatch,
        terms: dict[str, list[str]],
    ) -> None:
        """Write the episodes of ``sessions`` from all their turns as the store holds them
        (`labile_realm.episode_text`), whichever process wrote the earlier ones."""
        now = self.deps.clock()
        touched = [s for s in sessions if state.session_turns.get(s)]
        if not touched:
            return
        ids = [stable_id("ep", s) for s in touched]
        existing = {n.id: n for n in self.store.get_nodes(namespace, ids)}
        texts: list[str] = []
        nodes: list[Node] = []
        highlights: list[list[Highlight]] = []
        for key, nid in zip(touched, ids, strict=True):
            lo, hi = state.session_span[key]
            old = existing.get(nid) or batch.nodes.get(nid)
            sources = list(old.sources) if old is not None else []
            sources.extend(s for s in state.session_turns[key] if s not in sources)
            events = self._nodes(namespace, [unit_id_of_turn(t) for t in sources], batch)
            turn_terms = {str(k): list(v) for k, v in
                          (old.attrs.get("turn_terms") or {}).items()} if old else {}
            for event in events:  # turns written before turn_terms were kept
                for turn in event.sources:
                    if turn in sources and turn not in turn_terms and turn not in terms:
                        turn_terms[turn] = event_terms(event)
            turn_terms.update((t, terms[t]) for t in sources if t in terms)
            topics = session_topics(sources, turn_terms)
            start = min(lo, old.time_start) if old and old.time_start else lo
            end = max(hi, old.time_end) if old and old.time_end else hi
            picked = session_highlights(events) if self.config.structural_edges else []
            highlights.append(picked)
            desc = describe_episode(key, state.speakers.values(), start, topics, picked)
            node = Node(
                id=nid, kind=EPISODE, content=old.content if old else f"session {key}",
                description=desc, keywords=tuple(topics[:3]),
                time_start=start, time_end=end,
                created_at=old.created_at if old else now, updated_at=now,
                sources=tuple(sources),
                attrs={"name": f"session {key}", "description": desc, "keywords": topics[:3],
                       "time_range": [start.isoformat(), end.isoformat()], "session": key,
                       "turn_terms": {t: turn_terms[t] for t in sources if t in turn_terms}},
            )
            nodes.append(node)
            texts.append(desc)
        vecs = self._embed(texts)
        for node, vec in zip(nodes, vecs, strict=True):
            node.embedding = vec
            batch.nodes[node.id] = node
            batch.counts["episode"] += 1
        for node, picked in zip(nodes, highlights, strict=True):
            self._apply_edges(namespace, summary_links(node, picked), batch)
        # Consecutive sessions: the earlier episode precedes the later one.
        for key, nid in zip(touched, ids, strict=True):
            prev = self._last_episode.get(namespace)
            self._last_episode[namespace] = nid
            if prev is None or prev == nid:
                continue
            if prev in batch.nodes or self.store.get_nodes(namespace, [prev]):
                self._apply_edges(namespace, [EdgeOp(
                    action="add", src=prev, dst=nid, predicate=PRECEDES,
                    description=f"the conversation continues in session {key}", weight=0.8,
                )], batch)


@attrs.frozen
class _EdgeView:
    """The `labile_realm.decisions.EdgeLookup` an edge decision gets: one node's graph."""

    extractor: RealmExtractor
    namespace: str
    batch: WriteBatch

    def existing(self, node_id: str, others: Sequence[str]) -> list[Edge]:
        """Live edges between ``node_id`` and any of ``others``."""
        return self.extractor._existing_edges(self.namespace, node_id, others, self.batch)

    def degrees(self, ids: Sequence[str]) -> dict[str, int]:
        """The running ``correlates`` degree tally (updated in place by the decider)."""
        return self.extractor._degrees(self.namespace, ids)


def build(config: RealmConstructConfig, deps: Deps) -> RealmExtractor:
    """Factory of ``realm.construct``."""
    return RealmExtractor(config, deps)


__all__ = ["RealmConstructConfig", "RealmExtractor", "build"]

#: How many stored events an implied change is compared with (the closest in meaning).
_SIMILAR_EVENTS = 20
