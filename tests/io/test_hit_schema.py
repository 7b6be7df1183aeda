"""The one hit schema (labile.hit/1): labelled dates, sources, reach, validity."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from labile import Hit, Node, Observation, Reach
from labile_io.hits import HIT_SCHEMA, edge_predicate, hit_to_dict, node_validity

SAID = datetime(2024, 5, 2, 9, 30, tzinfo=UTC)
ABOUT = datetime(2024, 4, 27, tzinfo=UTC)


def _hit(score: float = 0.8, **node: object) -> Hit:
    fields: dict[str, object] = {"id": "n1", "kind": "realm.event", "content": "raw",
                                 "description": "Maya moved to Lisbon", "sources": ("o1",)}
    fields.update(node)
    return Hit(node=Node(**fields), score=score, via=Reach(atom="realm.hybrid_match"))  # type: ignore[arg-type]


def test_dates_are_labelled_said_and_about() -> None:
    obs = Observation(id="o1", text="We moved to Lisbon last week", timestamp=SAID,
                      speaker="Maya", metadata={"role": "user"})
    out = hit_to_dict(1, _hit(time_start=ABOUT, time_end=ABOUT + timedelta(days=6)),
                      {"o1": obs})
    assert out["dates"] == {"said": [SAID.isoformat()],
                            "about": {"start": ABOUT.isoformat(),
                                      "end": (ABOUT + timedelta(days=6)).isoformat()}}
    assert out["sources"] == [{"id": "o1", "speaker": "Maya", "role": "user",
                               "time": SAID.isoformat(), "session": None,
                               "text": "We moved to Lisbon last week", "truncated": False}]


def test_long_source_text_is_cut_and_says_so() -> None:
    obs = Observation(id="o1", text="x" * 50, timestamp=SAID)
    src = hit_to_dict(1, _hit(), {"o1": obs}, text_chars=10)["sources"][0]
    assert src["text"] == "x" * 10 + "…" and src["truncated"] is True


def test_validity_reads_the_supersession_contract() -> None:
    assert node_validity(Node(id="a", kind="k")) == {"current": True, "valid_to": None,
                                                "superseded_by": []}
    old = Node(id="a", kind="k", attrs={"valid_to": "2024-06-01T00:00:00+00:00",
                                        "superseded_by": ["b"]})
    assert node_validity(old) == {"current": False, "valid_to": "2024-06-01T00:00:00+00:00",
                             "superseded_by": ["b"]}


def test_an_expansion_names_its_seed_path_and_predicates() -> None:
    via = Reach(atom="realm.subgraph_beam", stage="expand", hop=2, path=("s", "m", "n1"),
                edges=("s|realm.causes|m", "n1|realm.precedes|m"))
    out = hit_to_dict(3, Hit(node=Node(id="n1", kind="k"), score=0.2, via=via), {})
    assert out["reached"]["seed"] == "s"
    assert out["reached"]["predicates"] == ["realm.causes", "realm.precedes"]
    assert "2 hop(s) from s over realm.causes → realm.precedes" in out["reached"]["why"]


@given(src=st.text(min_size=1, max_size=8), pred=st.text(min_size=1, max_size=8),
       dst=st.text(min_size=1, max_size=8))
def test_edge_predicate_inverts_the_canonical_edge_id(src: str, pred: str, dst: str) -> None:
    """Property: with both ends known, the predicate is recovered even when ids hold '|'."""
    assert edge_predicate(f"{src}|{pred}|{dst}", src, dst) == pred


@given(st.lists(st.floats(min_value=-1, max_value=100, allow_nan=False), min_size=1,
                max_size=8))
def test_relative_score_is_within_0_and_1_and_top_is_1(scores: list[float]) -> None:
    """Property: relative_score is score / best score, in [0, 1], 1 for the best hit."""
    top = max(scores)
    outs = [hit_to_dict(i, _hit(score=s), {}, top_score=top) for i, s in enumerate(scores, 1)]
    if top <= 0:
        assert all(o["relative_score"] is None for o in outs)
        return
    rel = [o["relative_score"] for o in outs]
    assert all(0.0 <= r <= 1.0 for r in rel) and max(rel) == 1.0


def test_the_schema_is_named() -> None:
    assert HIT_SCHEMA == "labile.hit/1"


def test_the_cli_lines_label_both_dates_and_a_superseded_memory() -> None:
    from labile_io.render import hit_text

    obs = Observation(id="o1", text="We moved to Lisbon", timestamp=SAID, speaker="Maya")
    hit = _hit(time_start=ABOUT, attrs={"valid_to": "2024-09-01T00:00:00+00:00",
                                        "superseded_by": ["n9"]})
    lines = hit_to_dict(1, hit, {"o1": obs}, top_score=1.6)
    text = "\n".join(hit_text(lines))
    assert "said 2024-05-02" in text and "about 2024-04-27" in text
    assert "[superseded 2024-09-01 by n9]" in text and "(50% of top)" in text
    assert "↳ o1 Maya, 2024-05-02 09:30: We moved to Lisbon" in text
