"""The in-memory BM25 index."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from labile.text.bm25 import BM25Index


def _index(docs: dict[str, str]) -> BM25Index:
    index = BM25Index()
    for doc_id, text in docs.items():
        index.add(doc_id, text)
    return index


def test_empty_index() -> None:
    index = BM25Index()
    assert len(index) == 0
    assert index.search("anything", 5) == []


def test_ranking_and_exact_score() -> None:
    index = _index(
        {
            "a": "I went to a pottery class yesterday",
            "b": "We adopted a puppy",
            "c": "Pottery pottery everywhere",
        }
    )
    results = index.search("pottery", 10)
    assert [doc for doc, _ in results] == ["c", "a"]
    # Hand-computed: N=3, df("pottery")=2; document lengths count terms:
    # a = went/pottery/class/yesterday, b = adopt/puppy, c = pottery/pottery/everywhere.
    lengths = {"a": 4, "b": 2, "c": 3}
    avgdl = sum(lengths.values()) / 3
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    expected_c = idf * 2 * 2.5 / (2 + 1.5 * (1 - 0.75 + 0.75 * lengths["c"] / avgdl))
    assert math.isclose(results[0][1], expected_c)


def test_stemming_and_stopwords_apply_to_queries() -> None:
    index = _index({"a": "She paints landscapes", "b": "The weather was nice"})
    assert [doc for doc, _ in index.search("Painting a landscape", 5)] == ["a"]
    assert index.search("the was a", 5) == []


def test_ties_are_broken_by_id_and_k_limits() -> None:
    index = _index({"z": "red apple", "a": "red apple", "m": "red apple"})
    results = index.search("apple", 2)
    assert [doc for doc, _ in results] == ["a", "m"]
    assert index.search("apple", 0) == []


def test_allowed_filter() -> None:
    index = _index({"a": "red apple", "b": "green apple", "c": "apple pie"})
    results = index.search("apple", 5, allowed=lambda doc: doc != "b")
    assert {doc for doc, _ in results} == {"a", "c"}


def test_remove_and_replace() -> None:
    index = _index({"a": "red apple", "b": "green apple"})
    index.remove("a")
    index.remove("unknown")  # no-op
    assert len(index) == 1
    assert "a" not in index
    assert [doc for doc, _ in index.search("apple", 5)] == ["b"]
    index.add("b", "a blue car")  # re-adding replaces the text
    assert index.search("apple", 5) == []
    assert [doc for doc, _ in index.search("car", 5)] == ["b"]
    assert len(index) == 1


def test_documents_without_terms_count_but_never_match() -> None:
    index = _index({"a": "the and of", "b": "apple"})
    assert len(index) == 2
    assert [doc for doc, _ in index.search("apple", 5)] == ["b"]


def test_scales_to_many_documents() -> None:
    index = BM25Index()
    for i in range(5000):
        index.add(f"d{i}", f"turn {i} about topic{i % 50} and hiking")
    results = index.search("topic7 hiking", 3)
    assert len(results) == 3
    assert all(doc.startswith("d") for doc, _ in results)
    assert results[0][1] >= results[-1][1]


_words = st.sampled_from(["apple", "pear", "hike", "dog", "paint", "the", "of", "run", "city"])
_docs = st.dictionaries(
    st.text(alphabet="abcdefgh", min_size=1, max_size=3),
    st.lists(_words, max_size=8).map(" ".join),
    max_size=15,
)


@given(
    _docs,
    st.sets(st.text(alphabet="abcdefgh", min_size=1, max_size=3)),
    st.lists(_words, min_size=1, max_size=3).map(" ".join),
    st.integers(1, 20),
)
def test_search_properties(docs: dict[str, str], removed: set[str], query: str, k: int) -> None:
    """Search returns at most ``k`` live documents with positive scores, best first (ties by id)."""
    index = _index(docs)
    for doc_id in removed:
        index.remove(doc_id)
    results = index.search(query, k)
    assert len(results) <= k
    assert not {doc for doc, _ in results} & removed
    assert all(score > 0 for _, score in results)
    keys = [(-score, doc) for doc, score in results]
    assert keys == sorted(keys)
    assert len(index) == len(set(docs) - removed)
