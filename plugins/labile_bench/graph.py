"""``labile bench graph``: build a preset's graph of LoCoMo conversations and sample its edges.

What the constructor writes is measured by hand: this command builds the
graph of each conversation (the memory store, the preset's own embedder and
decisions, one ``add`` per session as in ``bench locomo``), counts nodes and
edges per kind and predicate, times ingestion, and draws a fixed-seed sample
of edges per predicate for a person to judge. The sample file holds ids only
(conversation, predicate, node ids, source turn ids) plus empty judgement
fields; ``--show`` prints each sampled edge with the text of both nodes, for
the judge's eyes, never into a file. ``tests/realm/judged/predicates.jsonl``
is such a sample with the judgements filled in.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from labile import Memory
from labile.plugin import Edge, Node, echo
from labile_io.locomo import Conversation, load_locomo, observations_of


@attrs.frozen(kw_only=True)
class BuiltGraph:
    """One conversation's graph as built by a preset.

    Attributes:
        sample_id: The conversation.
        turns: Turns ingested.
        seconds: Wall time of the ``add`` calls.
        nodes: Node id -> node.
        edges: The live edges (retired ones left out).
    """

    sample_id: str
    turns: int
    seconds: float
    nodes: dict[str, Node]
    edges: list[Edge]

    def edge_counts(self) -> Counter[str]:
        """Edges per predicate."""
        return Counter(e.predicate for e in self.edges)

    def node_counts(self) -> Counter[str]:
        """Nodes per kind."""
        return Counter(n.kind for n in self.nodes.values())


def build_graph(conv: Conversation, preset: str, table: dict[str, Any] | None = None) -> BuiltGraph:
    """Ingest ``conv`` with ``preset`` into a fresh in-memory store and read the graph back.

    Args:
        conv: The conversation.
        preset: The preset whose constructor is measured.
        table: Extra configuration merged over the preset (default: memory store).

    Returns:
        The graph, with the ingest time.
    """
    config: dict[str, Any] = {"preset": preset, "store": {"type": "memory"}, **(table or {})}
    with Memory.open(config) as memory:
        seconds, turns = 0.0, 0
        for batch in observations_of(conv):
            t0 = time.perf_counter()
            memory.add(batch, namespace=conv.sample_id)
            seconds += time.perf_counter() - t0
            turns += len(batch)
        store = memory.store
        nodes = {n.id: n for n in store.iter_nodes(conv.sample_id)}
        edges = [e for e in store.iter_edges(conv.sample_id) if not e.attrs.get("retired")]
    return BuiltGraph(sample_id=conv.sample_id, turns=turns, seconds=seconds, nodes=nodes,
                      edges=edges)


def sample_edges(graph: BuiltGraph, per_predicate: int, seed: int = 17) -> list[Edge]:
    """A fixed-seed sample of at most ``per_predicate`` edges of each predicate.

    Each predicate is drawn with its own seed, so a change to one predicate's
    edges leaves the others' samples as they were. Symmetric predicates are
    stored both ways; only one direction of a pair is drawn (the one whose
    source id sorts first).
    """
    keys = {(e.src, e.predicate, e.dst) for e in graph.edges}
    by_predicate: dict[str, list[Edge]] = {}
    for e in sorted(graph.edges, key=lambda e: e.id):
        if e.src > e.dst and (e.dst, e.predicate, e.src) in keys:
            continue
        by_predicate.setdefault(e.predicate, []).append(e)
    out: list[Edge] = []
    for predicate in sorted(by_predicate):
        edges = by_predicate[predicate]
        rng = random.Random(f"{seed}:{predicate}")
        out += edges if len(edges) <= per_predicate else rng.sample(edges, per_predicate)
    return out


def judgement_row(graph: BuiltGraph, edge: Edge) -> dict[str, Any]:
    """The ids-only record of one sampled edge (judgement fields left empty)."""
    src, dst = graph.nodes.get(edge.src), graph.nodes.get(edge.dst)
    return {
        "conversation": graph.sample_id, "predicate": edge.predicate,
        "src": edge.src, "dst": edge.dst,
        "src_turns": list(src.sources[:3]) if src else [],
        "dst_turns": list(dst.sources[:3]) if dst else [],
        "correct": None, "reason": "",
    }


def _show(graph: BuiltGraph, edge: Edge, index: int) -> str:
    def text(node: Node | None) -> str:
        if node is None:
            return "?"
        body = node.content if node.kind.endswith(("event", "fact")) else node.description
        where = ",".join(node.sources[:2])
        return f"[{node.kind.split('.')[-1]} {where}] {' '.join(body.split())[:260]}"

    return (f"#{index} {edge.predicate} w={edge.weight:.2f}"
            f"\n  S: {text(graph.nodes.get(edge.src))}"
            f"\n  D: {text(graph.nodes.get(edge.dst))}\n  desc: {edge.description[:160]}")


def graph_options(p: argparse.ArgumentParser) -> None:
    """The data, the preset, the sample size and the outputs."""
    p.add_argument("path", help="a LoCoMo JSON file")
    p.add_argument("--preset", default="realm", help="the preset that builds the graphs")
    p.add_argument("--embedder", help="embedder type overriding the preset's (e.g. hashing)")
    p.add_argument("--conversation", action="append", default=[],
                   help="sample id to build (repeatable; default: all)")
    p.add_argument("--sample", type=int, default=0, help="edges drawn per predicate")
    p.add_argument("--seed", type=int, default=17, help="seed of the edge sample")
    p.add_argument("--out", help="write the sample (ids only) as JSONL here")
    p.add_argument("--show", action="store_true", help="print each sampled edge's node texts")
    p.add_argument("--json", dest="json_out", help="write counts and timings here")


def run_graph_command(args: argparse.Namespace) -> int:
    """Build each conversation's graph, print counts per predicate, sample edges."""
    convs, _ = load_locomo(args.path)
    wanted: Sequence[str] = args.conversation
    summary: dict[str, Any] = {"preset": args.preset, "conversations": {}}
    rows: list[dict[str, Any]] = []
    for conv in convs:
        if wanted and conv.sample_id not in wanted:
            continue
        table = {"embedder": {"type": args.embedder}} if args.embedder else None
        graph = build_graph(conv, args.preset, table)
        counts = graph.edge_counts()
        rate = graph.turns / graph.seconds if graph.seconds else 0.0
        summary["conversations"][conv.sample_id] = {
            "turns": graph.turns, "ingest_turns_per_s": round(rate, 1),
            "nodes": dict(sorted(graph.node_counts().items())),
            "edges": dict(sorted(counts.items())),
        }
        preds = ", ".join(f"{k.split('.')[-1]} {v}" for k, v in sorted(counts.items()))
        echo(f"{conv.sample_id}: {graph.turns} turns, {rate:.1f} turns/s, "
             f"{len(counts)} predicates: {preds}")
        if args.sample:
            for i, edge in enumerate(sample_edges(graph, args.sample, args.seed)):
                rows.append(judgement_row(graph, edge))
                if args.show:
                    echo(_show(graph, edge, i))
    if args.out:
        Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0
