"""labile_langgraph: LabileStore through LangGraph's own store API and a compiled graph."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from extras import require_module

require_module("langgraph.store.base", "pip install -e '.[langgraph]'")


from adapters_helpers import OFFLINE, run_example
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.store.base import InvalidNamespaceError, Item, SearchItem

from labile import InputError, Memory
from labile_langgraph import LabileStore

pytestmark = pytest.mark.extras


@pytest.fixture
def memory() -> Iterator[Memory]:
    with Memory.open(OFFLINE) as mem:
        yield mem


@pytest.fixture
def store(memory: Memory) -> LabileStore:
    return LabileStore(memory)


# -- the store API ---------------------------------------------------------------------------


def test_put_get_roundtrip_keeps_the_value_whole(store: LabileStore, memory: Memory) -> None:
    value = {"content": "Ana plays the cello.", "kind": "fact", "n": 3, "tags": ["music"]}
    store.put(("users", "ana"), "f1", value)
    item = store.get(("users", "ana"), "f1")
    assert isinstance(item, Item)
    assert item.value == value and item.key == "f1" and item.namespace == ("users", "ana")
    assert item.created_at == item.updated_at
    assert store.get(("users", "ana"), "nope") is None
    assert store.get(("users", "bob"), "f1") is None
    (obs,) = memory.get("langgraph:users.ana", ["f1"])  # labile sees the text, said now
    assert obs.text == "Ana plays the cello."


def test_update_replaces_the_memory_and_keeps_created_at(store: LabileStore,
                                                         memory: Memory) -> None:
    ns = ("users", "ana")
    store.put(ns, "home", {"content": "Ana lives in Boston."})
    first = store.get(ns, "home")
    store.put(ns, "home", {"content": "Ana lives in Boston."})  # same value: nothing happens
    assert memory.list("langgraph:users.ana").total == 1
    store.put(ns, "home", {"content": "Ana moved to Denver."})
    item = store.get(ns, "home")
    assert item is not None and first is not None
    assert item.value == {"content": "Ana moved to Denver."}
    assert item.created_at == first.created_at and item.updated_at >= first.updated_at
    hits = store.search(ns, query="Boston")
    assert [h.value["content"] for h in hits] in ([], ["Ana moved to Denver."])
    assert memory.list("langgraph:users.ana").total == 1


def test_delete_forgets_the_item(store: LabileStore) -> None:
    store.put(("users", "ana"), "f1", {"content": "Ana plays the cello."})
    store.delete(("users", "ana"), "f1")
    store.delete(("users", "ana"), "never-there")  # deleting nothing is fine
    assert store.get(("users", "ana"), "f1") is None
    assert store.search(("users",), query="cello") == []


def test_search_by_query_ranks_items_across_the_prefix(store: LabileStore) -> None:
    store.put(("users", "ana"), "a1", {"content": "Ana adopted a cat named Miso."})
    store.put(("users", "ana"), "a2", {"content": "Ana's sister lives in Porto."})
    store.put(("users", "bob"), "b1", {"content": "Bob's cat is called Pepper."})
    store.put(("teams", "x"), "t1", {"content": "The team cat sleeps all day."})
    hits = store.search(("users",), query="cat")
    assert {(h.namespace, h.key) for h in hits} == {(("users", "ana"), "a1"),
                                                   (("users", "bob"), "b1")}
    assert all(isinstance(h, SearchItem) and h.score is not None for h in hits)
    assert [h.score for h in hits] == sorted((h.score or 0.0 for h in hits), reverse=True)
    assert len(store.search(("users",), query="cat", limit=1)) == 1
    assert store.search(("users",), query="cat", offset=1, limit=5) == hits[1:]


def test_search_without_query_lists_and_filters(store: LabileStore) -> None:
    ns = ("notes",)
    for i in range(5):
        store.put(ns, f"k{i}", {"content": f"note number {i}", "n": i, "kind": "odd" if i % 2
                               else "even"})
    listed = store.search(ns)
    assert [h.key for h in listed] == ["k0", "k1", "k2", "k3", "k4"]
    assert all(h.score is None for h in listed)
    assert [h.key for h in store.search(ns, filter={"kind": "odd"})] == ["k1", "k3"]
    assert [h.key for h in store.search(ns, filter={"n": {"$gte": 2, "$lt": 4}})] == ["k2", "k3"]
    assert [h.key for h in store.search(ns, filter={"n": {"$ne": 0}}, offset=1, limit=2)] == [
        "k2", "k3"]
    with pytest.raises(InputError, match=r"unknown filter operator '\$in'"):
        store.search(ns, filter={"n": {"$in": [1]}})


def test_list_namespaces_prefix_suffix_depth(store: LabileStore, memory: Memory) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("z", "b", "c")]:
        store.put(ns, "k", {"content": "something to remember"})
    memory.add([], namespace="not-langgraph")  # others' namespaces in the same memory
    assert store.list_namespaces() == [("a", "b", "c"), ("a", "b", "d"), ("a", "x"),
                                       ("z", "b", "c")]
    assert store.list_namespaces(prefix=("a",)) == [("a", "b", "c"), ("a", "b", "d"),
                                                    ("a", "x")]
    assert store.list_namespaces(suffix=("b", "c")) == [("a", "b", "c"), ("z", "b", "c")]
    assert store.list_namespaces(prefix=("*", "b")) == [("a", "b", "c"), ("a", "b", "d"),
                                                        ("z", "b", "c")]
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "x"), ("z", "b")]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d"), ("a", "x")]


def test_bad_items_are_refused_and_nothing_stored_is_lost(store: LabileStore) -> None:
    ns = ("users", "ana")
    store.put(ns, "keep", {"content": "Ana plays the cello."})
    with pytest.raises(InputError, match="no text to remember"):
        store.put(ns, "empty", {})
    with pytest.raises(InputError, match="no text to remember"):
        store.put(ns, "keep", {"content": "   "})  # a bad update keeps the old item
    with pytest.raises(InputError, match="index path 'a\\[0\\]' is not supported"):
        store.put(ns, "x", {"a": ["t"]}, index=["a[0]"])
    with pytest.raises(NotImplementedError, match="TTL"):
        store.put(ns, "ttl", {"content": "short-lived"}, ttl=5)
    with pytest.raises(InvalidNamespaceError):
        store.put(("bad.label",), "k", {"content": "x"})
    item = store.get(ns, "keep")
    assert item is not None and item.value == {"content": "Ana plays the cello."}
    assert [h.key for h in store.search(ns)] == ["keep"]


def test_index_fields_choose_the_text(store: LabileStore, memory: Memory) -> None:
    store.put(("p",), "k", {"profile": {"bio": "Likes hiking."}, "name": "Ana", "age": 30},
              index=["name", "profile.bio"])
    (obs,) = memory.get("langgraph:p", ["k"])
    assert obs.text == "Ana\nLikes hiking."
    store.put(("p",), "j", {"age": 30, "city": "Porto"})
    (obs,) = memory.get("langgraph:p", ["j"])
    assert obs.text == "age: 30\ncity: Porto"


_LABEL = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"],
                               exclude_characters=".\x00"), min_size=1, max_size=12)


@given(namespace=st.lists(_LABEL, min_size=1, max_size=4).map(tuple))
def test_namespace_mapping_is_reversible(namespace: tuple[str, ...]) -> None:
    """Every namespace LangGraph accepts maps to a labile namespace and back unchanged,
    and a labile namespace without the store's prefix is not taken for one of its own."""
    store = LabileStore.__new__(LabileStore)
    store.prefix = "langgraph:"
    assert store.langgraph_namespace(store.labile_namespace(namespace)) == namespace
    assert store.langgraph_namespace("other:" + ".".join(namespace)) is None


def test_async_methods_share_the_same_store(store: LabileStore) -> None:
    async def run() -> tuple[Any, ...]:
        await store.aput(("u",), "k1", {"content": "Ana plays the cello."})
        await store.aput(("u",), "k2", {"content": "Ana's dog is Rex."})
        got = await store.aget(("u",), "k1")
        found = await store.asearch(("u",), query="dog")
        spaces = await store.alist_namespaces()
        await store.adelete(("u",), "k1")
        return got, found, spaces, await store.aget(("u",), "k1")

    got, found, spaces, gone = asyncio.run(run())
    assert got.value == {"content": "Ana plays the cello."}
    assert [h.key for h in found] == ["k2"] and spaces == [("u",)] and gone is None


def test_context_gives_labiles_dated_evidence(store: LabileStore) -> None:
    store.put(("u",), "k1", {"content": "Ana adopted a cat named Miso."})
    context = store.context(("u",), "cat", style="markdown")
    assert "Ana adopted a cat named Miso." in context.text and "sources: k1" in context.text
    assert store.context(("nobody",), "cat").text == ""


# -- the documented graph, run by LangGraph ---------------------------------------------------


class Prompts(BaseCallbackHandler):
    """Records the messages every chat-model call receives."""

    def __init__(self) -> None:
        self.seen: list[list[BaseMessage]] = []

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]],
                            **kwargs: Any) -> None:
        self.seen.extend(messages)


def test_documented_graph_remembers_across_threads(store: LabileStore) -> None:
    example = run_example("langgraph.md", "langgraph-chat")
    prompts = Prompts()
    model = FakeMessagesListChatModel(responses=[AIMessage("Noted!"), AIMessage("Rex."),
                                                 AIMessage("I don't know.")],
                                      callbacks=[prompts])
    graph = example["build_graph"](model, store)
    context = example["Context"]

    def say(text: str, thread: str, user: str) -> Any:
        return graph.invoke({"messages": [("user", text)]},
                            {"configurable": {"thread_id": thread}}, context=context(user))

    say("My dog is called Rex.", "t1", "u1")
    reply = say("What is my dog called?", "t2", "u1")
    assert reply["messages"][-1].content == "Rex."
    assert len(reply["messages"]) == 2  # a new thread: the history did not carry it
    system = prompts.seen[1][0].content
    assert "My dog is called Rex." in system
    say("What is my dog called?", "t3", "u2")  # another user remembers nothing of u1
    assert "Rex" not in prompts.seen[2][0].content
    assert "(nothing yet)" in prompts.seen[2][0].content
