"""`labile_llm.context`: the public prompt context, its styles, budget and the answerer."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from adapters_helpers import OFFLINE
from context_fixture import FIXED_NODES, JUNE, MAY, hits_of, node
from hypothesis import given
from hypothesis import strategies as st

from labile import InputError, Memory, Query, RetrievalResult, SearchResult
from labile._model import Subgraph
from labile_llm import ScriptedLLM
from labile_llm.answer import answer_question, build_context
from labile_llm.context import PromptContext, render_context
from labile_llm.tokens import estimate_tokens

GOLDEN = json.loads((Path(__file__).parent / "context_golden.json").read_text("utf-8"))


def result_of(hits: list[Any]) -> RetrievalResult:
    query = Query(text="q", namespace="u1", as_of=datetime(2024, 1, 1, tzinfo=UTC))
    return RetrievalResult(query=query, hits=tuple(hits), subgraph=Subgraph(), trace=())


def words(text: str) -> int:
    return len(text.split())


# -- the answerer's format stays byte for byte ------------------------------------------


@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: f"{c['order']}-{c['budget']}")
def test_lines_style_is_the_answerers_format_byte_for_byte(case: dict[str, Any]) -> None:
    # The golden texts were rendered by the answerer's own builder before it moved
    # to the kernel: benchmark figures depend on this exact text.
    hits = hits_of(*[FIXED_NODES[i] for i in case["order"]])
    text, ids = build_context(hits, budget_tokens=case["budget"], count_tokens=estimate_tokens)
    assert (text, ids) == (case["text"], case["ids"])
    context = render_context(hits, budget_tokens=case["budget"])
    assert (context.text, list(context.ids)) == (case["text"], case["ids"])
    assert context.tokens == estimate_tokens(case["text"]) and context.style == "lines"


def test_the_answerer_shows_its_model_the_public_context() -> None:
    llm = ScriptedLLM(replies=['{"answer": "A support group.", "cited": [1]}'])
    result = result_of(hits_of(*FIXED_NODES))
    with Memory.open(OFFLINE, llm=llm) as memory:
        answer = answer_question(memory, "Where did Caroline go?", namespace="u1",
                                 result=result, budget_tokens=60, count_tokens=estimate_tokens,
                                 feedback=False)
    expected = render_context(result.hits, budget_tokens=60)
    assert GOLDEN[1]["order"] == [0, 1, 2, 3, 4] and GOLDEN[1]["budget"] == 60
    assert answer.context == expected.text == GOLDEN[1]["text"]
    assert answer.context_ids == expected.ids
    assert answer.cited == (expected.ids[0],)
    assert expected.text in llm.calls[0].prompt


# -- styles -------------------------------------------------------------------------------


def test_markdown_labels_said_and_about_and_lists_sources() -> None:
    context = render_context(hits_of(*FIXED_NODES[:3]), style="markdown")
    lines = context.text.splitlines()
    # newest first by the time the memory is about
    assert lines[0] == ("1. (said 2023-05-08 13:56 UTC) Caroline went to the LGBTQ support "
                        "group. — sources: D1:3")
    assert lines[1] == ("2. (said 2023-06-01 09:00 UTC, about 2023-04-01 00:00 UTC to "
                        "2023-06-01 09:00 UTC) Melanie painted a sunrise last year. "
                        "— sources: D2:1, D2:2")
    assert lines[2] == "3. (undated) An undated note about pottery. — sources: D3:7"
    assert context.ids == ("n1", "n2", "n3")


def test_a_node_without_said_at_is_dated_not_said() -> None:
    context = render_context(hits_of(node("x", "a turn", start=MAY)), style="markdown")
    assert context.text == "1. (dated 2023-05-08 13:56 UTC) a turn"


def test_json_style_carries_every_field() -> None:
    context = render_context(hits_of(*FIXED_NODES[:2]), style="json")
    entries = json.loads(context.text)
    assert [e["n"] for e in entries] == [1, 2]
    first = entries[1]
    assert first == {
        "n": 2, "id": "n2", "text": "Melanie painted a sunrise last year.",
        "said": JUNE.isoformat(), "about": ["2023-04-01T00:00:00+00:00", JUNE.isoformat()],
        "status": "current", "valid_to": None, "superseded_by": [], "sources": ["D2:1", "D2:2"],
    }
    assert render_context([], style="json").text == "[]"


def test_superseded_nodes_are_marked_in_every_style() -> None:
    old = node("old", "Caroline lives in Boston.", start=MAY, valid_to="2023-06-01T09:00:00Z",
               superseded_by=["new"])
    new = node("new", "Caroline lives in Denver.", start=JUNE)
    hits = hits_of(old, new)
    lines = render_context(hits).text.splitlines()
    assert lines == ["[1] (2023-06-01 09:00 UTC) Caroline lives in Denver.",
                     "[2] (2023-05-08 13:56 UTC) [superseded 2023-06-01] Caroline lives in "
                     "Boston."]
    assert "; superseded 2023-06-01 09:00 UTC)" in render_context(hits, style="markdown").text
    entries = {e["id"]: e for e in json.loads(render_context(hits, style="json").text)}
    assert entries["old"]["status"] == "superseded"
    assert entries["old"]["valid_to"] == "2023-06-01T09:00:00+00:00"
    assert entries["old"]["superseded_by"] == ["new"]
    assert entries["new"]["status"] == "current" and entries["new"]["superseded_by"] == []


@pytest.mark.parametrize("valid_to", ["not a date", "2023-06-01T09:00:00"])
def test_an_unreadable_or_naive_valid_to_counts_as_current(valid_to: str) -> None:
    """The context agrees with `Node.is_current`: a time without a zone is not read
    as UTC (it was, so a hit showed "superseded" while its node said current)."""
    odd = node("odd", "text", start=MAY, valid_to=valid_to, superseded_by="new")
    hits = hits_of(odd)
    assert hits[0].node.is_current()
    assert "superseded" not in render_context(hits).text
    entry = json.loads(render_context(hits, style="json").text)[0]
    assert entry["status"] == "current" and entry["valid_to"] is None


# -- bad input ----------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, -3, 2.5, True, "100"])
def test_a_bad_budget_is_refused_by_name(budget: Any) -> None:
    with pytest.raises(InputError, match="budget_tokens must be an integer from 1"):
        render_context(hits_of(*FIXED_NODES), budget_tokens=budget)


def test_an_unknown_style_names_the_allowed_ones() -> None:
    with pytest.raises(InputError, match="style must be one of 'lines', 'markdown', 'json'"):
        render_context([], style="html")


def test_search_result_is_the_public_name_and_str_is_the_text() -> None:
    assert SearchResult is RetrievalResult
    context = render_context(hits_of(*FIXED_NODES), budget_tokens=25)
    assert isinstance(context, PromptContext) and str(context) == context.text


# -- the budget is an invariant -------------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300)


@given(texts=st.lists(_TEXT.filter(str.strip), min_size=0, max_size=8),
       budget=st.integers(1, 400), style=st.sampled_from(["lines", "markdown", "json"]),
       dated=st.lists(st.booleans(), min_size=8, max_size=8),
       counter=st.sampled_from([estimate_tokens, words, len]))
def test_context_never_exceeds_its_budget(texts: list[str], budget: int, style: str,
                                          dated: list[bool], counter: Any) -> None:
    """Whatever the hits, style and counter, the text fits the budget by that counter,
    ``tokens`` is its size, each node appears at most once, and json lists the ids."""
    nodes = [node(f"n{i}", t, start=MAY if dated[i] else None, sources=(f"s{i}",),
                  said_at=JUNE.isoformat()) for i, t in enumerate(texts)]
    context = render_context(hits_of(*nodes), budget_tokens=budget, style=style,
                             count_tokens=counter)
    assert counter(context.text) <= budget
    assert context.tokens == counter(context.text)
    assert len(set(context.ids)) == len(context.ids) <= len(texts)
    assert set(context.ids) <= {n.id for n in nodes}
    if style == "json":
        assert [e["id"] for e in json.loads(context.text or "[]")] == list(context.ids)
