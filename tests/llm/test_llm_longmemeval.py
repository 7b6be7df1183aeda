"""The LongMemEval runner end to end on the tiny fixture, offline."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pytest

from labile._errors import MissingDependencyError
from labile._hookspecs import hookimpl
from labile._memory import Memory
from labile._memstore import MemoryStore
from labile._usage import UsageMeter
from labile_bench.longmemeval_run import ingest_item, namespace_for, run_longmemeval
from labile_bench.metrics import session_ndcg_at_k, session_recall_at_k
from labile_io.longmemeval import load_longmemeval
from labile_llm import ScriptedLLM

FIXTURE = Path(__file__).resolve().parents[1] / "bench" / "data" / "longmemeval_tiny.json"


def test_ingest_item_ids_dates_sessions(make_pm: Callable[..., Any],
                                        bm25_config: dict[str, Any]) -> None:
    item = load_longmemeval(FIXTURE, limit=1)[0]
    with Memory.open(bm25_config, plugin_manager=make_pm()) as memory:
        ns = namespace_for(item)
        owner = ingest_item(memory, item, ns)
        assert ns == "lme_tiny_q1"
        assert owner["s1_dog:0"] == "s1_dog" and len(owner) == 8
        obs = memory.store.get_observations(ns, ["s1_dog:0", "s1_travel:1"])
        assert [o.session for o in obs] == ["s1_dog", "s1_travel"]
        assert obs[0].timestamp == item.sessions[1].timestamp and obs[0].speaker == "user"
        assert obs[0].metadata["date_text"] == item.sessions[1].date_text
        assert memory.store.count_nodes(ns) == 8
        assert memory.store.count_nodes("lme_tiny_q2") == 0


def test_run_retrieval_only(make_pm: Callable[..., Any], bm25_config: dict[str, Any]) -> None:
    seen: list[tuple[int, int]] = []
    out = run_longmemeval(FIXTURE, preset=None, config=bm25_config, k_list=(1, 3),
                          plugin_manager=make_pm(),
                          progress=lambda done, total, row: seen.append((done, total)))
    assert out["n_items"] == 3 and seen == [(1, 3), (2, 3), (3, 3)]
    assert out["qa"] is None and out["search_k"] == 3
    assert out["retrieval_skipped"] == {"abstention": 1, "no_gold": 0}
    items = {row["question_id"]: row for row in out["items"]}
    assert items["tiny_q3_abs"]["retrieval"] is None
    for qid in ("tiny_q1", "tiny_q2"):
        row = items[qid]
        ranked = row["ranked_sessions"]
        assert len(ranked) == len(set(ranked)) > 0
        assert row["retrieval"]["recall@3"] == session_recall_at_k(ranked, row["gold_sessions"], 3)
        assert row["retrieval"]["ndcg@1"] == session_ndcg_at_k(ranked, row["gold_sessions"], 1)
    assert items["tiny_q1"]["ranked_sessions"][0] == "s1_dog"
    overall = out["retrieval"]["overall"]
    assert overall["n"] == 2
    expected = 100 * (items["tiny_q1"]["retrieval"]["recall@3"]
                      + items["tiny_q2"]["retrieval"]["recall@3"]) / 2
    assert overall["recall@3"] == pytest.approx(round(expected, 1))
    assert set(out["retrieval"]) == {"single-session-user", "temporal-reasoning", "overall"}
    assert out["pipeline"]["extractor"]["type"] == "baseline.turns"
    assert out["ingest"]["observations"] == 8 + 8 + 7
    assert json.dumps(out)


def test_run_with_scripted_models(make_pm: Callable[..., Any],
                                  bm25_config: dict[str, Any]) -> None:
    answer_llm = ScriptedLLM(usage=UsageMeter(), rules=[
        ("Question: What breed", '{"answer": "a border collie", "cited": [1]}'),
        ("Question: How many days", '{"answer": "12 days", "cited": [1, 2]}'),
        ("Question: Which gym", '{"answer": "Not available in memory.", "cited": []}'),
    ])
    judge_llm = ScriptedLLM(usage=UsageMeter(), rules=[
        ("Assistant's answer: Not available", '{"verdict": "CORRECT"}'),
        ("Assistant's answer: a border collie", '{"verdict": "CORRECT"}'),
        (".", '{"verdict": "WRONG"}'),
    ])
    out = run_longmemeval(FIXTURE, preset=None, config=bm25_config, plugin_manager=make_pm(),
                          answer_llm=answer_llm, judge_llm=judge_llm)
    qa = out["qa"]
    assert qa["overall"]["n"] == 3 and qa["excluded_categories"] == []
    assert qa["overall"]["accuracy"] == pytest.approx(66.7)
    assert qa["by_category"]["temporal-reasoning"]["accuracy"] == 0.0
    rows = {r["question_id"]: r["qa"] for r in out["items"]}
    assert rows["tiny_q1"]["predicted"] == "a border collie" and rows["tiny_q1"]["f1"] == 1.0
    # the answer reuses the scored retrieval: no second search
    assert rows["tiny_q1"]["retrieved"][:1] == ["s1_dog:0"]
    assert len(answer_llm.calls) == 3 and len(judge_llm.calls) == 3
    assert out["usage"]["answer"]["answer"]["calls"] == 3
    assert out["usage"]["judge"]["judge"]["calls"] == 3
    # the question date is the answer's "current date"
    assert "Current date: 2023-06-02 18:45 UTC" in answer_llm.calls[0].prompt
    assert json.dumps(out)


def test_run_with_named_models_through_litellm(
    litellm_module: ModuleType, make_pm: Callable[..., Any], bm25_config: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch, make_fake: Callable[..., Any], tmp_path: Path,
) -> None:
    def reply(kwargs: dict[str, Any]) -> str:
        prompt = kwargs["messages"][-1]["content"]
        if "Reference answer" in prompt:
            return '{"verdict": "CORRECT"}'
        return '{"answer": "a border collie", "cited": [1]}'

    fake = make_fake([reply])
    monkeypatch.setattr(litellm_module, "completion", fake)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-sent")  # the provider check passes
    out = run_longmemeval(FIXTURE, preset=None, config=bm25_config, plugin_manager=make_pm(),
                          limit=1, answer_model="gpt-4o-mini", judge_model="gpt-4o-mini",
                          model_options={"cache_dir": str(tmp_path)})
    assert out["models"] == {"answer": "litellm:gpt-4o-mini", "judge": "litellm:gpt-4o-mini"}
    assert out["qa"]["overall"]["accuracy"] == 100.0
    assert out["qa"]["overall"]["cost_usd"] > 0 and out["qa"]["overall"]["judge_cost_usd"] > 0
    assert out["usage"]["answer"]["total"]["calls"] == 1
    assert out["usage"]["judge"]["total"]["calls"] == 1
    assert len(fake.calls) == 2
    assert fake.calls[0]["response_format"]["json_schema"]["name"] == "answer"


def test_named_model_without_litellm(monkeypatch: pytest.MonkeyPatch,
                                     make_pm: Callable[..., Any],
                                     bm25_config: dict[str, Any]) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)
    with pytest.raises(MissingDependencyError, match=r"labile\[llm\]"):
        run_longmemeval(FIXTURE, preset=None, config=bm25_config, plugin_manager=make_pm(),
                        answer_model="gpt-4o-mini")


def test_bad_arguments(make_pm: Callable[..., Any], bm25_config: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        run_longmemeval(FIXTURE, preset=None, config=bm25_config, plugin_manager=make_pm(),
                        k_list=(0,))
    with pytest.raises(ValueError):
        run_longmemeval(FIXTURE, preset=None, config=bm25_config, plugin_manager=make_pm(),
                        limit=-1)


class PathStorePlugin:
    """A test plugin: an in-memory store with a ``path`` option, recording it."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    @hookimpl
    def labile_register_stores(self, register: Any) -> None:
        register("test.pathstore", self._build, config=PathStoreConfig, summary="test")

    def _build(self, config: PathStoreConfig, deps: Any) -> MemoryStore:
        self.paths.append(config.path)
        return MemoryStore()


@attrs.frozen(kw_only=True)
class PathStoreConfig:
    path: str = "./never-used-by-benchmarks"


def test_presets_and_store_dir(make_pm: Callable[..., Any], tmp_path: Path) -> None:
    plugin = PathStorePlugin()
    config = {"store": {"type": "test.pathstore"}, "embedder": {"type": "hashing"}}
    out = run_longmemeval(FIXTURE, presets=["bm25", "dense"], config=config, limit=2,
                          k_list=(1, 5), plugin_manager=make_pm(plugin), store_dir=tmp_path)
    assert set(out["presets"]) == {"bm25", "dense"} and out["n_items"] == 2
    assert out["presets"]["dense"]["pipeline"]["retrieval"]["seed"][0]["type"] == \
        "baseline.dense"
    assert out["presets"]["bm25"]["retrieval"]["overall"]["n"] == 2
    assert plugin.paths == [str(tmp_path / "bm25"), str(tmp_path / "dense")]
    # without store_dir: a temporary directory, never the store's default path
    run_longmemeval(FIXTURE, preset="bm25", config=config, limit=1,
                    plugin_manager=make_pm(plugin))
    assert "labile-lme-" in plugin.paths[-1]
    # a path the config names explicitly is kept
    explicit = {**config, "store": {"type": "test.pathstore", "path": str(tmp_path / "mine")}}
    run_longmemeval(FIXTURE, preset="bm25", config=explicit, limit=1,
                    plugin_manager=make_pm(plugin))
    assert plugin.paths[-1] == str(tmp_path / "mine")
