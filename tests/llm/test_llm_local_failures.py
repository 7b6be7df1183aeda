"""Scripted replies shaped like the failures SmolLM2-135M produced (docs/local-llm.md).

Each test replays one shape a real small model produced and checks the path
that now handles it: narrowed decision schemas reject invented ids and
predicates (and, as grammars, cannot produce them), raw control characters
in JSON strings parse, and a prompt that already embeds its schema compactly
is not sent the schema a second time.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from labile_llm.json_completion import extract_json, schema_in_prompt
from labile_llm.jsoncheck import validate
from labile_llm.scripted import ScriptedLLM, ScriptedLLMConfig
from labile_realm import prompts


@pytest.mark.parametrize(("shown", "reply", "ok"), [
    (0, {"operation": "add", "related": [1]}, False),  # SmolLM2: candidate 1, none shown
    (0, {"operation": "skip", "target": 1, "related": []}, False),
    (0, {"operation": "add", "related": [], "target": None}, True),
    (3, {"operation": "modify", "target": 4, "related": []}, False),
    (3, {"operation": "modify", "target": 2, "related": [1, 3]}, True),
    (3, {"operation": "add", "related": [0]}, False),
])
def test_node_schema_admits_only_the_ids_shown(shown: int, reply: dict[str, Any],
                                               ok: bool) -> None:
    assert (validate(reply, prompts.node_schema(shown)) == []) is ok


def _edge(**changes: Any) -> dict[str, Any]:
    edge = {"candidate": 1, "operation": "add", "predicate": "precedes",
            "direction": "to_target", "weight": 0.7}
    return {"edges": [{**edge, **changes}]}


@pytest.mark.parametrize(("shown", "reply", "ok"), [
    (2, _edge(), True),
    (2, _edge(candidate=3), False),
    (2, _edge(predicate="causal/precedes"), False),  # the prompt's table shows layer/name
    (2, _edge(predicate="is_friend_of"), False),
    (0, {"edges": []}, True),
    (0, _edge(), False),
])
def test_edge_schema_admits_only_shown_ids_and_realm_predicates(
        shown: int, reply: dict[str, Any], ok: bool) -> None:
    assert (validate(reply, prompts.edge_schema(shown)) == []) is ok


def test_edge_schema_without_existing_edges_offers_only_add_and_no_change() -> None:
    """SmolLM2 answered "modify" for edges that did not exist (every reply rejected)."""
    assert validate(_edge(operation="modify"), prompts.edge_schema(2, existing=False)) != []
    assert validate(_edge(operation="no_change"), prompts.edge_schema(2, existing=False)) == []
    assert validate(_edge(operation="modify"), prompts.edge_schema(2, existing=True)) == []


def test_narrowed_schemas_keep_the_static_ones_untouched() -> None:
    static = [prompts.NODE_SCHEMA, prompts.EDGE_SCHEMA, prompts.SUFFICIENCY_SCHEMA,
              prompts.EXPANSION_SCHEMA]
    before = json.dumps(static, sort_keys=True)
    prompts.node_schema(0)
    prompts.edge_schema(5)
    prompts.sufficiency_schema(2)
    prompts.expansion_schema(3)
    assert json.dumps(static, sort_keys=True) == before


@pytest.mark.parametrize(("shown", "reply", "ok"), [
    (1, {"is_enough": False, "nodes_to_expand": [2]}, False),  # SmolLM2 named node 2 of 1
    (1, {"is_enough": False, "nodes_to_expand": [1]}, True),
    (0, {"is_enough": True, "nodes_to_expand": []}, True),
    (3, {"is_enough": False, "nodes_to_expand": [1], "nodes_to_skip": [4]}, False),
])
def test_sufficiency_schema_admits_only_the_ids_shown(shown: int, reply: dict[str, Any],
                                                      ok: bool) -> None:
    assert (validate(reply, prompts.sufficiency_schema(shown)) == []) is ok


def test_expansion_schema_admits_only_the_seeds_shown() -> None:
    action = {"seed_id": 3, "expansion_mode": "semantic", "layer_predicate_include": [],
              "score_threshold": 0.5, "conflict_inhibit": False, "reasoning": "r"}
    assert any("seed_id" in p for p in
               validate({"actions": [action]}, prompts.expansion_schema(2)))


def test_a_unit_time_is_constrained_to_what_the_extractor_reads() -> None:
    """SmolLM2 wrote "][" as a time; the grammar's pattern now admits only these shapes."""
    import re

    pattern = re.compile(prompts.TIME_PATTERN)
    for good in ("none", "2023-05-07", "2023-05-01 to 2023-05-07"):
        assert pattern.match(good)
    # months past 12 and days past 31: SmolLM2 wrote "1497-16-22", and the turn lost its units
    for bad in ("][", "yesterday", "2023-05-07 to", "", "1497-16-22", "2023-00-10",
                "2023-05-32", "2023-05-01 to 2023-13-01"):
        assert not pattern.match(bad)


def test_invented_id_reply_is_rejected_through_the_client() -> None:
    llm = ScriptedLLM(ScriptedLLMConfig(max_repairs=0),
                      replies=['{"operation": "add", "related": [1]}'])
    with pytest.raises(Exception, match=r"related: expected \[\]"):
        llm.complete_json("new unit, no candidates", prompts.node_schema(0),
                          operation="realm.node_decision")


def test_raw_newline_inside_a_json_string_parses() -> None:
    assert extract_json('{"summary": "line one\nline two", "units": []}') == {
        "summary": "line one\nline two", "units": []}


def test_schema_embedded_compactly_counts_as_in_the_prompt() -> None:
    from datetime import UTC, datetime

    prompt = prompts.extraction_prompt("", [], "Ann", datetime(2023, 5, 8, tzinfo=UTC), "Hi")
    assert schema_in_prompt(prompt, prompts.EXTRACT_SCHEMA)
    assert not schema_in_prompt("no schema here", prompts.EXTRACT_SCHEMA)


@pytest.mark.extras
def test_every_prompt_schema_compiles_to_a_grammar_llama_cpp_accepts() -> None:
    """With the runtime installed: all of labile's schemas parse in llama.cpp (no segfault)."""
    from realmodel import missing_model

    from extras import skip_or_fail

    if missing_model() is not None:
        skip_or_fail(str(missing_model()))
    import llama_cpp
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from labile_allmem import prompts as allmem
    from labile_bench.judge import JUDGE_SCHEMA
    from labile_llamacpp.config import LlamaCppConfig
    from labile_llamacpp.models import ModelKey, shared_model
    from labile_llamacpp.source import model_file
    from labile_llm.answer import ANSWER_SCHEMA

    model = shared_model(llama_cpp, ModelKey(path=str(model_file(LlamaCppConfig())),
                                             n_ctx=2048, n_threads=1, n_batch=512))
    from labile_llamacpp.grammar import GrammarCache

    cache = GrammarCache(llama_cpp.llama_grammar, check=model.grammar_check)
    schemas = [getattr(m, n) for m in (prompts, allmem) for n in dir(m) if n.endswith("_SCHEMA")]
    schemas += [ANSWER_SCHEMA, JUDGE_SCHEMA, prompts.node_schema(0), prompts.node_schema(7),
                prompts.edge_schema(0), prompts.edge_schema(7), prompts.sufficiency_schema(0),
                prompts.sufficiency_schema(3), prompts.expansion_schema(4)]
    assert len(schemas) >= 16
    for schema in schemas:
        assert cache.for_schema(schema) is not None, schema
    assert cache.unsupported == 0
    # and the grammar of "no candidates" can only say []
    assert '"[]"' in json_schema_to_gbnf(json.dumps(prompts.node_schema(0)))


def test_node_decision_bounds_its_free_text_so_a_loop_ends_early() -> None:
    """SmolLM2 ran a node decision to max_tokens=512: keywords and reason are short now."""
    props = prompts.node_schema(3)["properties"]
    assert props["keywords"]["items"]["maxLength"] <= 80
    assert props["reason"]["maxLength"] <= 200
    assert validate({"operation": "add", "related": [], "keywords": ["x" * 81]},
                    prompts.node_schema(0)) != []
    action = prompts.expansion_schema(2)["properties"]["actions"]["items"]["properties"]
    assert action["reasoning"]["maxLength"] <= 200
