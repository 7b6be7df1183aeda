"""``labile bench entities``: the judged samples hold ids only, and the scoring is right."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from labile.plugin import Node
from labile_bench import entity_eval as ev
from labile_bench.entity_graph import SAMPLE as MERGES
from labile_bench.entity_graph import alias_hash, graph_type_scores, merge_precision, merge_rows

T = datetime(2025, 1, 1, tzinfo=UTC)


def test_mention_sample_is_ids_and_verdicts_only() -> None:
    rows = ev.load_judged()
    assert len(rows) >= 150
    for row in rows:
        assert set(row) == {"source", "conversation", "turn", "span", "type"}
        assert row["source"] in {"locomo", "change"} and row["type"] in ev.TYPES
        assert all(isinstance(i, int) for i in row["span"])


def test_merge_sample_is_ids_and_verdicts_only() -> None:
    rows = [json.loads(x) for x in MERGES.read_text(encoding="utf-8").splitlines() if x]
    for row in rows:
        assert set(row) - {"alias"} == {"conversation", "node", "kind", "same_referent"}
        assert row["node"].startswith("en-") and isinstance(row["same_referent"], bool)
        if row["kind"] == "alias":
            assert len(row["alias"]) == 12 and int(row["alias"], 16) >= 0  # a hash, not a name


def test_change_rows_resolve_to_their_turns() -> None:
    texts = ev.load_turn_texts(None)
    for row in ev.load_judged():
        if row["source"] == "change":
            text = texts[("change", row["conversation"], row["turn"])]
            start, end = row["span"]
            assert 0 <= start < end <= len(text) and text[start:end].strip()


def test_score_counts_precision_recall_and_unjudged() -> None:
    texts = {("change", "c", "D1:1"): "Anna took Rex to Paris."}
    rows = [
        {"source": "change", "conversation": "c", "turn": "D1:1", "span": [0, 4], "type": "person"},
        {"source": "change", "conversation": "c", "turn": "D1:1", "span": [10, 13],
         "type": "animal"},
        {"source": "change", "conversation": "c", "turn": "D1:1", "span": [17, 22],
         "type": "none"},
    ]

    def fake(_text: str) -> list[ev.Mention]:
        return [ev.Mention(0, 4, "person"), ev.Mention(10, 13, "person"),
                ev.Mention(17, 22, "place"), ev.Mention(5, 9, "thing")]

    s = ev.score(rows, texts, fake)
    assert (s.found, s.correct, s.judged_entities, s.recalled) == (4, 1, 2, 1)
    assert s.confusion == {"person->person": 1, "animal->person": 1, "none->place": 1,
                           "unjudged->thing": 1}
    with pytest.raises(KeyError, match="LoCoMo"):
        ev.score([{**rows[0], "source": "locomo"}], texts, fake)


def _entity(node_id: str, name: str, category: str, sources: tuple[str, ...],
            aliases: tuple[str, ...] = ()) -> Node:
    return Node(id=node_id, kind="realm.entity", content=name, description=name,
                created_at=T, updated_at=T, sources=sources,
                attrs={"name": name, "category": category, "aliases": list(aliases)})


def test_merge_precision_counts_only_merges_still_made() -> None:
    graphs = {"c": [_entity("en-1", "user", "person", ("D1:1", "D2:1"), ("Elena",)),
                    _entity("en-2", "Rex", "animal", ("D1:2",))]}
    rows = merge_rows("c", graphs["c"])
    assert {r["kind"] for r in rows} == {"same-name", "alias"}
    judged = [
        {"conversation": "c", "node": "en-1", "kind": "alias", "alias": alias_hash("Elena"),
         "same_referent": True},
        {"conversation": "c", "node": "en-1", "kind": "same-name", "same_referent": False},
        {"conversation": "c", "node": "en-2", "kind": "same-name", "same_referent": True},
        {"conversation": "other", "node": "en-9", "kind": "alias", "alias": "0" * 12,
         "same_referent": False},
    ]
    out = merge_precision(judged, graphs)
    assert out["alias"] == {"judged": 1, "still_made": 1, "correct": 1, "precision": 100.0}
    assert out["same-name"] == {"judged": 2, "still_made": 1, "correct": 0, "precision": 0.0}
    assert out["unjudged_alias_merges"] == 0


def test_graph_types_follow_the_node_of_the_name() -> None:
    texts = {("change", "c", "D1:1"): "Dr. Lee and Rex"}
    graphs = {"c": [_entity("en-1", "Dr. Lee", "person", ("D1:1",)),
                    _entity("en-2", "Rex", "person", ("D1:1",))]}
    rows = [
        {"source": "change", "conversation": "c", "turn": "D1:1", "span": [4, 7], "type": "person"},
        {"source": "change", "conversation": "c", "turn": "D1:1", "span": [12, 15],
         "type": "animal"},
    ]
    out = graph_type_scores(rows, texts, graphs)
    assert out == {"judged_entities": 2, "with_node": 2, "typed_right": 1, "precision": 50.0}
