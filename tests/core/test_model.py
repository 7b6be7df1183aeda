"""The data model's validation."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from labile._model import Edge, Node, NodeFilter, Observation, Predicate, edge_id


def test_naive_timestamps_are_rejected_with_a_hint() -> None:
    with pytest.raises(ValueError, match="timezone-aware.*tzinfo"):
        Observation(id="a", text="x", timestamp=datetime(2024, 1, 1))


def test_observation_requires_id() -> None:
    with pytest.raises(ValueError, match="id must be a non-empty string"):
        Observation(id="", text="x", timestamp=datetime(2024, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize("weight", [-0.01, 1.01, float("nan")])
def test_edge_weight_out_of_bounds(weight: float) -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Edge(id="e", src="a", dst="b", predicate="p", weight=weight)


def test_edge_id_is_canonical() -> None:
    assert edge_id("a", "p", "b") == "a|p|b" != edge_id("b", "p", "a")


def test_node_filter_keeps_nodes_without_time() -> None:
    t = datetime(2024, 5, 1, tzinfo=UTC)
    f = NodeFilter(time_range=(t, t.replace(day=2)))
    assert f.accepts(Node(id="n", kind="k"))
    assert not f.accepts(Node(id="n", kind="k", time_start=t.replace(month=4)))
    assert f.accepts(Node(id="n", kind="k", time_start=t.replace(month=4), time_end=t))


def test_predicate_layer_is_validated() -> None:
    with pytest.raises(ValueError):
        Predicate(name="x", layer="geometric")  # type: ignore[arg-type]
