"""One test per hook: an inline plugin registers a component and labile uses it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
import pytest
from core_helpers import OFFLINE

from labile import Memory
from labile._errors import ConfigError, SchemaError
from labile._memstore import MemoryStore
from labile._model import (
    AddReport,
    Answer,
    Edge,
    Feedback,
    Hit,
    Node,
    NodeKind,
    Observation,
    OperationReport,
    Predicate,
    Query,
    Reach,
    RetrievalResult,
    edge_id,
)
from labile._plugins import get_plugin_manager
from labile.plugin import hookimpl
from labile.testing import observations
from labile_llm import ScriptedLLM
from labile_offline.hashing import HashingEmbedder

BASE = OFFLINE


def memory_with(plugin: object, **table: Any) -> Memory:
    return Memory.open({**BASE, **table}, plugin_manager=get_plugin_manager(extra=[plugin]))


def test_hook_labile_register_extractors() -> None:
    class Upper:
        def __init__(self, config: Any, deps: Any) -> None:
            self.store = deps.store

        def ingest(self, ns: str, obs: Sequence[Observation], report: AddReport) -> None:
            self.store.upsert_nodes(ns, [Node(id=o.id, kind="baseline.turn",
                                              content=o.text.upper(), sources=(o.id,))
                                         for o in obs])
            report.nodes_written += len(obs)

    class P:
        @hookimpl
        def labile_register_extractors(self, register: Any) -> None:
            register("t.upper", Upper)

    with memory_with(P(), extractor={"type": "t.upper"}) as memory:
        memory.add(observations(["hello there"]), namespace="n")
        assert memory.store.get_nodes("n", ["o1"])[0].content == "HELLO THERE"


def test_hook_labile_register_stores() -> None:
    class Counting(MemoryStore):
        writes = 0

        def upsert_nodes(self, namespace: str, nodes: Sequence[Node]) -> None:
            Counting.writes += len(nodes)
            super().upsert_nodes(namespace, nodes)

    class P:
        @hookimpl
        def labile_register_stores(self, register: Any) -> None:
            register("t.counting", Counting)

    with memory_with(P(), store={"type": "t.counting"}) as memory:
        memory.add(observations(["a", "b"]), namespace="n")
    assert Counting.writes == 2


def test_hook_labile_register_embedders() -> None:
    @attrs.frozen
    class DimConfig:
        dim: int = 32

    class Small(HashingEmbedder):
        def __init__(self, config: DimConfig, deps: Any) -> None:
            super().__init__()
            self.dim, self.name = config.dim, f"small-{config.dim}"

        def embed(self, texts: Sequence[str]) -> Any:
            return np.ones((len(texts), self.dim), np.float32) / np.sqrt(self.dim)

    class P:
        @hookimpl
        def labile_register_embedders(self, register: Any) -> None:
            register("t.small", Small, config=DimConfig)

    with memory_with(P(), embedder={"type": "t.small", "dim": 16}) as memory:
        assert memory.embedder.dim == 16
        memory.add(observations(["x"]), namespace="n")
        assert memory.store.get_nodes("n", ["o1"])[0].embedding.shape == (16,)


def test_hook_labile_register_llms() -> None:
    class P:
        @hookimpl
        def labile_register_llms(self, register: Any) -> None:
            register("t.canned", lambda config, deps: ScriptedLLM(replies=['{"ok": true}'],
                                                                  usage=deps.usage))

    with memory_with(P(), llm={"type": "t.canned"}) as memory:
        out = memory.llm.complete_json("hi", {"type": "object"}, operation="plan")
        assert out == {"ok": True}
        assert memory.stats()["llm"]["plan"]["calls"] == 1


def _const_hit(node: Node, atom: str) -> Hit:
    return Hit(node=node, score=0.5, via=Reach(atom=atom))


def test_hook_labile_register_seeders() -> None:
    class First:
        def __init__(self, config: Any, deps: Any) -> None:
            self.store = deps.store

        def seed(self, query: Query, state: dict[str, Any]) -> list[Hit]:
            nodes = list(self.store.iter_nodes(query.namespace))[:1]
            return [_const_hit(n, "t.first") for n in nodes]

    class P:
        @hookimpl
        def labile_register_seeders(self, register: Any) -> None:
            register("t.first", First)

    with memory_with(P(), retrieval={"seed": [{"type": "t.first"}]}) as memory:
        memory.add(observations(["a", "b"]), namespace="n")
        result = memory.search("anything", namespace="n")
        assert [h.node.id for h in result.hits] == ["o1"]
        assert result.trace[0].atom == "t.first"


def test_hook_labile_register_expanders() -> None:
    class AddAll:
        def __init__(self, config: Any, deps: Any) -> None:
            self.store = deps.store

        def expand(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
            have = {h.node.id for h in hits}
            extra = [Hit(node=n, score=0.0, via=Reach(atom="t.all", stage="expand", hop=1))
                     for n in self.store.iter_nodes(query.namespace) if n.id not in have]
            return hits + extra

    class P:
        @hookimpl
        def labile_register_expanders(self, register: Any) -> None:
            register("t.all", AddAll)

    with memory_with(P(), retrieval={"seed": [{"type": "baseline.bm25"}],
                                     "expand": [{"type": "t.all"}]}) as memory:
        memory.add(observations(["apple pie", "banana bread"]), namespace="n")
        result = memory.search("apple", namespace="n")
        assert {h.node.id for h in result.hits} == {"o1", "o2"}
        assert any(h.via.stage == "expand" for h in result.hits)


def test_hook_labile_register_filters() -> None:
    class Reverse:
        def __init__(self, config: Any, deps: Any) -> None:
            pass

        def filter(self, query: Query, hits: list[Hit], state: dict[str, Any]) -> list[Hit]:
            state["reversed"] = True
            return list(reversed(hits))

    class P:
        @hookimpl
        def labile_register_filters(self, register: Any) -> None:
            register("t.reverse", Reverse)

    with memory_with(P(), retrieval={"seed": [{"type": "baseline.bm25"}],
                                     "filter": [{"type": "t.reverse"}]}) as memory:
        memory.add(observations(["apple apple", "apple pie"]), namespace="n")
        result = memory.search("apple", namespace="n")
        assert result.state["reversed"] and result.hits[-1].score >= result.hits[0].score


def test_hook_labile_register_reconsolidators() -> None:
    seen: list[tuple[RetrievalResult, Feedback]] = []

    class Record:
        def __init__(self, config: Any, deps: Any) -> None:
            pass

        def reconsolidate(self, result: RetrievalResult, fb: Feedback) -> OperationReport:
            seen.append((result, fb))
            return OperationReport(operator="t.record", namespace=result.query.namespace)

    class P:
        @hookimpl
        def labile_register_reconsolidators(self, register: Any) -> None:
            register("t.record", Record)

    with memory_with(P(), reconsolidate=[{"type": "t.record"}]) as memory:
        memory.add(observations(["apple"]), namespace="n")
        result = memory.search("apple", namespace="n")
        reports = memory.feedback(result, answer="an apple")
    assert reports[0].operator == "t.record" and seen[0][1].answer == "an apple"


def test_hook_labile_register_consolidators() -> None:
    class Hide:
        def __init__(self, config: Any, deps: Any) -> None:
            self.store, self.auto = deps.store, 0

        def consolidate(self, ns: str) -> OperationReport:
            report = OperationReport(operator="t.hide", namespace=ns)
            nodes = list(self.store.iter_nodes(ns))
            self.store.upsert_nodes(ns, [attrs.evolve(n, visible=False) for n in nodes])
            report.bump("archived", len(nodes))
            return report

        def after_add(self, ns: str, report: AddReport) -> OperationReport | None:
            self.auto += 1
            return None

    class P:
        @hookimpl
        def labile_register_consolidators(self, register: Any) -> None:
            register("t.hide", Hide)

    with memory_with(P(), consolidate=[{"type": "t.hide"}]) as memory:
        memory.add(observations(["a", "b"]), namespace="n")
        assert memory.consolidators[0][1].auto == 1
        (report,) = memory.consolidate(namespace="n")
        assert report.counts == {"archived": 2}
        assert memory.stats("n")["store"]["visible_nodes"] == 0


def test_hook_labile_register_answerers() -> None:
    asked: list[tuple[str, str, int, int]] = []

    class Echo:
        def __init__(self, config: Any, deps: Any) -> None:
            self.store = deps.store

        def answer(self, memory: Memory, question: str, *, namespace: str, k: int,
                   as_of: Any, budget_tokens: int) -> Answer:
            asked.append((question, namespace, k, budget_tokens))
            result = memory.search(question, namespace=namespace, k=k, as_of=as_of)
            return Answer(text=result.hits[0].node.content, cited=(), result=result, usage={})

    class P:
        @hookimpl
        def labile_register_answerers(self, register: Any) -> None:
            register("t.echo", Echo)

    with memory_with(P(), answerer={"type": "t.echo"}) as memory:
        memory.add(observations(["a red apple", "a blue car"]), namespace="n")
        answer = memory.answer("apple?", namespace="n", k=3, budget_tokens=50)
    assert answer.text.endswith("a red apple") and asked == [("apple?", "n", 3, 50)]
    with memory_with(P()) as memory:  # left out: the llm bundle's default answers
        assert type(memory.components["answerer"]).__name__ == "LLMAnswerer"
    without_llm = get_plugin_manager(block=["llm"])
    with Memory.open(BASE, plugin_manager=without_llm) as memory:
        assert "answerer" not in memory.config.components
        with pytest.raises(ConfigError, match=r"no answerer.*\[answerer\]"):
            memory.answer("anything?", namespace="n")


def test_hook_labile_register_node_kinds() -> None:
    class P:
        @hookimpl
        def labile_register_node_kinds(self, register: Any) -> None:
            register("t.note", NodeKind(name="t.note", fields=("topic",)))

    with memory_with(P()) as memory:
        memory.store.upsert_nodes("n", [Node(id="x", kind="t.note")])
        with pytest.raises(SchemaError, match="unknown kind 't.nope'.*t.note"):
            memory.store.upsert_nodes("n", [Node(id="y", kind="t.nope")])
        assert memory.store.count_nodes("n") == 1


def test_hook_labile_register_predicates() -> None:
    class P:
        @hookimpl
        def labile_register_predicates(self, register: Any) -> None:
            register("t.near", Predicate(name="t.near", layer="associative", symmetric=True))
            register("t.before", Predicate(name="t.before", layer="causal"))

    with memory_with(P()) as memory:
        memory.add(observations(["a", "b"]), namespace="n")
        memory.store.upsert_edges("n", [
            Edge(id=edge_id("o1", "t.near", "o2"), src="o1", dst="o2", predicate="t.near"),
            Edge(id=edge_id("o1", "t.before", "o2"), src="o1", dst="o2", predicate="t.before"),
        ])
        back = memory.store.edges_of("n", ["o2"], direction="out")
        assert [e.predicate for e in back] == ["t.near"]  # only the symmetric one reversed
        with pytest.raises(SchemaError, match="unknown predicate 't.far'"):
            memory.store.upsert_edges("n", [Edge(id="e", src="o1", dst="o2", predicate="t.far")])


def test_hook_labile_register_presets() -> None:
    class P:
        @hookimpl
        def labile_register_presets(self, register: Any) -> None:
            register("t.tiny", dict(BASE))

    with Memory.open({"preset": "t.tiny"}, plugin_manager=get_plugin_manager(extra=[P()])) as m:
        assert m.config.preset == "t.tiny" and m.config.store.type == "memory"


def test_hook_labile_render_context() -> None:
    """``result.context(...)`` is the plugins' rendering: a plugin's own style first, the
    shipped renderer (labile_llm) for the rest, and without any renderer a clear error."""

    class P:
        @hookimpl
        def labile_render_context(self, hits: Sequence[Hit], options: dict[str, Any]) -> Any:
            if options.get("style") != "bullets":
                return None
            return "\n".join(f"- {h.node.content}" for h in hits)

    with memory_with(P()) as memory:
        memory.add(observations(["a red apple", "a blue car"]), namespace="n")
        result = memory.search("apple", namespace="n", k=2)
        assert result.context(style="bullets").splitlines()[0].endswith("a red apple")
        shipped = result.context(budget_tokens=200)
        assert "a red apple" in shipped.text and shipped.ids[0] == "o1" and shipped.tokens > 0
        with pytest.raises(Exception, match="style"):
            result.context(style="haiku")
    without_llm = get_plugin_manager(block=["llm"])
    with Memory.open(BASE, plugin_manager=without_llm) as memory:
        memory.add(observations(["a red apple"]), namespace="n")
        with pytest.raises(Exception, match="no plugin renders prompt context"):
            memory.search("apple", namespace="n", k=1).context()
