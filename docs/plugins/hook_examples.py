"""One short, working example per hook: the source of the examples in the hook reference.

`tools/docgen.py` (`hooks_markdown`) cuts this file at the ``# --- <hook>`` lines and
shows each part under its hook (``python tools/docgen.py hooks``), and
``tests/core/test_hook_examples.py`` runs the whole module as a plugin: the
``acme`` preset wires every example into one pipeline that adds, searches,
learns, consolidates and answers. So an example that stops working fails a test.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import attrs
import numpy as np
from numpy.typing import NDArray

from labile import Memory
from labile.plugin import (
    AddReport,
    Answer,
    CoreDeps,
    Declare,
    Deps,
    Edge,
    Feedback,
    ForgetPlan,
    Hit,
    KindSpec,
    LLMError,
    NoConfig,
    Node,
    NodeKind,
    Observation,
    OperationReport,
    Predicate,
    Query,
    Reach,
    Register,
    RegisterCommand,
    RetrievalResult,
    Store,
    StoreDeps,
    echo,
    edge_id,
    hookimpl,
)
from labile.testing import MemoryStore

# --- labile_declare_kinds


@hookimpl
def labile_declare_kinds(declare: Declare) -> None:
    """A kind of one's own: its registration hook is ``labile_register_acme_tokenizers``."""
    declare(KindSpec(name="acme.tokenizer", plural="acme.tokenizers",
                     doc="Split text: factory(config, deps) returns a str -> list[str]."))


@hookimpl
def labile_register_acme_tokenizers(register: Register) -> None:
    register("acme.tokenizer.spaces", lambda config, deps: str.split,
             summary="split on white space")


# --- labile_register_embedders


class LetterCounts:
    """A toy embedder: a text's counts of the letters a-z, as a unit vector."""

    name, dim = "acme.letters", 26

    def __init__(self, config: NoConfig, deps: CoreDeps) -> None:
        pass

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            for ch in text.lower():
                if "a" <= ch <= "z":
                    out[row, ord(ch) - ord("a")] += 1.0
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)
        return out


@hookimpl
def labile_register_embedders(register: Register) -> None:
    register("acme.letters", LetterCounts, summary="letter counts (a toy)")


# --- labile_register_llms


class Refuses:
    """A client that refuses every call, as a stand-in for a real model."""

    name = "acme.refuses"

    def __init__(self, config: NoConfig, deps: CoreDeps) -> None:
        self.usage = deps.usage  # record every call here: usage.record(operation, ...)

    def complete_json(self, prompt: str, schema: Any, *, operation: str,
                      system: str | None = None) -> Any:
        self.usage.record(operation, failed=True)
        raise LLMError(f"acme.refuses does not answer {operation!r}")

    def complete_text(self, prompt: str, *, operation: str, system: str | None = None,
                      max_tokens: int | None = None) -> str:
        self.usage.record(operation, failed=True)
        raise LLMError(f"acme.refuses does not answer {operation!r}")


@hookimpl
def labile_register_llms(register: Register) -> None:
    register("acme.refuses", Refuses, summary="refuses every call")


# --- labile_register_stores


def open_store(config: NoConfig, deps: StoreDeps) -> Store:
    """Reuses the reference store; a real one checks its data against deps.embedder.name
    and passes labile.testing.StoreContract."""
    return MemoryStore()


@hookimpl
def labile_register_stores(register: Register) -> None:
    register("acme.dicts", open_store, summary="the reference store under another name")


# --- labile_register_node_kinds


@hookimpl
def labile_register_node_kinds(register: Register) -> None:
    register("acme.turn", NodeKind(name="acme.turn", summary="one conversation turn"))


# --- labile_register_predicates


@hookimpl
def labile_register_predicates(register: Register) -> None:
    register("acme.follows", Predicate(name="acme.follows", layer="structural",
                                       summary="the next turn of the same session"))


# --- labile_register_extractors


class OneNodePerTurn:
    """Writes every observation as one ``acme.turn`` node, embedded."""

    def __init__(self, config: NoConfig, deps: Deps) -> None:
        self.store, self.embedder = deps.store, deps.embedder

    def ingest(self, namespace: str, observations: Sequence[Observation],
               report: AddReport) -> None:
        vectors = self.embedder.embed([o.text for o in observations])
        nodes = [Node(id=o.id, kind="acme.turn", content=o.text, time_start=o.timestamp,
                      sources=(o.id,), embedding=vector)
                 for o, vector in zip(observations, vectors, strict=True)]
        self.store.upsert_nodes(namespace, nodes)
        report.nodes_written += len(nodes)


@hookimpl
def labile_register_extractors(register: Register) -> None:
    register("acme.turns", OneNodePerTurn, summary="one node per turn")


# --- on_rollback


class CountingTurns(OneNodePerTurn):
    """``acme.turns`` that also counts each namespace's turns in memory."""

    def __init__(self, config: NoConfig, deps: Deps) -> None:
        super().__init__(config, deps)
        self.counts: dict[str, int] = {}
        self._before: dict[str, int] = {}

    def ingest(self, namespace: str, observations: Sequence[Observation],
               report: AddReport) -> None:
        self._before[namespace] = self.counts.get(namespace, 0)  # first, before any failure
        super().ingest(namespace, observations, report)
        self.counts[namespace] = self._before[namespace] + len(observations)

    def on_rollback(self, namespace: str) -> None:
        """The batch of the last ingest rolled back: its turns were never stored."""
        self.counts[namespace] = self._before.pop(namespace, self.counts.get(namespace, 0))


# --- labile_register_seeders


class Nearest:
    """Seeds with the nodes whose vectors are nearest the query's."""

    def __init__(self, config: NoConfig, deps: Deps) -> None:
        self.store = deps.store

    def seed(self, query: Query, state: dict[str, Any]) -> list[Hit]:
        assert query.vector is not None  # the memory embeds every query once
        found = self.store.vector_search(query.namespace, query.vector, query.k)
        return [Hit(node=node, score=score, via=Reach(atom="acme.nearest"))
                for node, score in found]


@hookimpl
def labile_register_seeders(register: Register) -> None:
    register("acme.nearest", Nearest, summary="nearest vectors")


# --- labile_register_expanders


class Neighbours:
    """Adds the nodes one edge away from a hit, scored below it."""

    def __init__(self, config: NoConfig, deps: Deps) -> None:
        self.store = deps.store

    def expand(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        score = {h.node.id: h.score for h in hits}
        reached: dict[str, float] = {}
        for edge in self.store.edges_of(query.namespace, list(score), direction="both"):
            near, far = (edge.src, edge.dst) if edge.src in score else (edge.dst, edge.src)
            if far not in score:
                reached[far] = max(reached.get(far, 0.0), score[near] * edge.weight * 0.5)
        new = self.store.get_nodes(query.namespace, sorted(reached))
        return hits + [Hit(node=n, score=reached[n.id],
                           via=Reach(atom="acme.neighbours", stage="expand", hop=1))
                       for n in new]


@hookimpl
def labile_register_expanders(register: Register) -> None:
    register("acme.neighbours", Neighbours, summary="one hop over any edge")


# --- labile_register_filters


class VisibleOnly:
    """Drops hidden nodes and orders the rest best first."""

    def __init__(self, config: NoConfig, deps: Deps) -> None:
        pass

    def filter(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
        kept = [h for h in hits if h.node.visible]
        return sorted(kept, key=lambda h: (-h.score, h.node.id))


@hookimpl
def labile_register_filters(register: Register) -> None:
    register("acme.visible", VisibleOnly, summary="visible nodes, best first")


# --- labile_register_reconsolidators


class StrengthenCited:
    """Raises the weight of edges between nodes an answer cited (never node content)."""

    def __init__(self, config: NoConfig, deps: Deps) -> None:
        self.store = deps.store

    def reconsolidate(self, result: RetrievalResult, feedback: Feedback) -> OperationReport:
        ns = result.query.namespace
        report = OperationReport(operator="acme.strengthen", namespace=ns)
        cited = set(feedback.cited)
        edges = [e for e in self.store.edges_of(ns, list(cited)) if e.dst in cited]
        for e in edges:
            e.weight = min(1.0, e.weight + 0.1)
        self.store.upsert_edges(ns, edges)
        report.bump("strengthened", len(edges))
        return report


@hookimpl
def labile_register_reconsolidators(register: Register) -> None:
    register("acme.strengthen", StrengthenCited, summary="strengthen cited links")


# --- labile_register_consolidators


class LinkTurns:
    """Links each turn to the next one in time (a consolidator adds; it never deletes)."""

    def __init__(self, config: NoConfig, deps: Deps) -> None:
        self.store = deps.store

    def consolidate(self, namespace: str) -> OperationReport:
        report = OperationReport(operator="acme.link_turns", namespace=namespace)
        turns = sorted((n for n in self.store.iter_nodes(namespace) if n.time_start),
                       key=lambda n: (n.time_start, n.id))
        edges = [Edge(id=edge_id(a.id, "acme.follows", b.id), src=a.id, dst=b.id,
                      predicate="acme.follows", weight=0.5)
                 for a, b in itertools.pairwise(turns)]
        self.store.upsert_edges(namespace, edges)
        report.bump("linked", len(edges))
        return report

    def after_add(self, namespace: str, report: AddReport) -> OperationReport | None:
        return None  # run only when asked (Memory.consolidate)


@hookimpl
def labile_register_consolidators(register: Register) -> None:
    register("acme.link_turns", LinkTurns, summary="link consecutive turns")


# --- labile_register_answerers


class BestHit:
    """Answers with the best hit's text: a baseline that needs no model."""

    def __init__(self, config: NoConfig, deps: Deps) -> None:
        pass

    def answer(self, memory: Memory, question: str, *, namespace: str, k: int,
               as_of: datetime | None, budget_tokens: int) -> Answer:
        result = memory.search(question, namespace=namespace, k=k, as_of=as_of)
        if not result.hits:
            return Answer(text="not in memory", cited=(), result=result, usage={})
        best = result.hits[0].node
        feedback = memory.feedback(result, answer=best.content, cited=[best.id])
        return Answer(text=best.content, cited=(best.id,), result=result, usage={},
                      feedback=tuple(feedback))


@hookimpl
def labile_register_answerers(register: Register) -> None:
    register("acme.best_hit", BestHit, summary="the best hit's text")


# --- labile_render_context


@hookimpl
def labile_render_context(hits: Sequence[Hit], options: dict[str, Any]) -> str | None:
    """``result.context(style="bullets")``: one bullet per hit; other styles are left
    to the shipped renderer (returning None passes the call on)."""
    if options.get("style") != "bullets":
        return None
    return "\n".join(f"- {h.node.content}" for h in hits)


# --- labile_register_forget_handlers


def keep_remaining_sources(plan: ForgetPlan) -> None:
    """A node fed by several turns keeps the ones that remain (unrebuilt, it is dropped)."""
    for node in plan.affected.values():
        if node.kind == "acme.turn":
            plan.rebuilt[node.id] = attrs.evolve(node, sources=plan.remaining_sources(node))


@hookimpl
def labile_register_forget_handlers(register: Register) -> None:
    register("acme.forget", keep_remaining_sources, summary="keep the remaining sources")


# --- labile_register_presets


@hookimpl
def labile_register_presets(register: Register) -> None:
    register("acme", {
        "store": {"type": "acme.dicts"},
        "embedder": {"type": "acme.letters"},
        "llm": {"type": "none"},
        "extractor": {"type": "acme.turns"},
        "retrieval": {"seed": [{"type": "acme.nearest"}],
                      "expand": [{"type": "acme.neighbours"}],
                      "filter": [{"type": "acme.visible"}]},
        "reconsolidate": [{"type": "acme.strengthen"}],
        "consolidate": [{"type": "acme.link_turns"}],
        "answerer": {"type": "acme.best_hit"},
    })


# --- labile_register_commands


def words_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text")


def count_words(args: argparse.Namespace) -> int:
    echo(f"{len(args.text.split())} words")
    return 0


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    register("acme words", run=count_words, configure=words_options,
             help="count the words of a text")
