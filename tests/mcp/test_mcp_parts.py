"""The server's parts without a server: conversion, policy, binding and the token gate."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile import Hit, InputError, Node, Observation, Reach
from labile_io.hits import hit_to_dict
from labile_mcp.convert import (
    derive_id,
    messages_to_observations,
    parse_time,
)
from labile_mcp.http import BearerTokenGate, check_bind, is_loopback, parse_bind
from labile_mcp.policy import ServePolicy

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


def test_times_are_iso_8601_and_a_missing_zone_means_utc() -> None:
    assert parse_time("2024-05-01T14:30:00+02:00", "t").utcoffset() == timedelta(hours=2)
    assert parse_time("2024-05-01T14:30:00Z", "t") == datetime(2024, 5, 1, 14, 30, tzinfo=UTC)
    assert parse_time("2024-05-01", "t") == datetime(2024, 5, 1, tzinfo=UTC)
    with pytest.raises(InputError, match=r"messages\[3\]\.time is not an ISO 8601") as err:
        parse_time("my secret birthday", "messages[3].time")
    assert "secret" not in str(err.value)  # the caller's value is not echoed into logs


def test_messages_keep_their_order_and_repeats_collapse() -> None:
    msgs = [{"content": "hello", "role": "user"}, {"content": "hi!", "role": "assistant"},
            {"content": "dated", "time": "2024-01-01T00:00:00Z", "id": "mine"},
            {"content": "dated", "time": "2024-01-01T00:00:00Z", "id": "mine"}]
    obs = messages_to_observations(msgs, now=NOW)
    assert [o.text for o in obs] == ["hello", "hi!", "dated"]
    assert obs[0].timestamp < obs[1].timestamp  # undated turns keep their order
    assert obs[2].id == "mine" and obs[0].speaker == "user"
    with pytest.raises(InputError, match=r"messages\[1\]\.content is empty"):
        messages_to_observations([{"content": "x"}, {"content": " \n"}], now=NOW)


@given(st.text(min_size=1), st.one_of(st.none(), st.text(max_size=10)),
       st.datetimes(timezones=st.just(UTC)))
def test_derived_ids_depend_only_on_the_message(content: str, role: str | None,
                                                when: datetime) -> None:
    """Property: the same message at the same time always gets the same id (re-sending
    adds nothing), and changing its text gives another id."""
    one = derive_id(content=content, speaker=role, timestamp=when, session=None)
    assert one == derive_id(content=content, speaker=role, timestamp=when, session=None)
    assert one != derive_id(content=content + "!", speaker=role, timestamp=when, session=None)
    assert one.startswith("mcp-")


def test_a_hit_carries_its_date_reach_and_sources() -> None:
    node = Node(id="n1", kind="realm.event", content="raw", description="Maya adopted Pixel",
                time_start=NOW, sources=("o1", "o2"))
    hit = Hit(node=node, score=0.5, via=Reach(atom="realm.subgraph_beam", stage="expand",
                                              hop=2, path=("n0", "n1")))
    o1 = Observation(id="o1", text="I adopted Pixel", timestamp=NOW, speaker="Maya")
    out = hit_to_dict(1, hit, {"o1": o1})
    assert out["text"] == "Maya adopted Pixel"
    assert out["dates"] == {"said": [NOW.isoformat()], "about": {"start": NOW.isoformat(),
                                                                  "end": None}}
    assert out["reached"]["stage"] == "expand" and out["reached"]["hop"] == 2
    assert out["reached"]["path"] == ["n0", "n1"] and out["reached"]["seed"] == "n0"
    assert [s["id"] for s in out["sources"]] == ["o1"]  # o2 was not fetched: listed apart
    assert out["missing_sources"] == ["o2"]


def test_policy_rejects_bad_namespaces_and_limits() -> None:
    with pytest.raises(ValueError, match="bad namespace"):
        ServePolicy(namespaces=("ok", "has space"))
    with pytest.raises(ValueError, match="bad namespace"):
        ServePolicy(namespaces=())
    policy = ServePolicy(namespaces=("a",), max_text_chars=5)
    assert policy.namespace(None) == "a" and policy.namespace("a") == "a"
    with pytest.raises(InputError, match="has 6 characters; this server accepts at most 5"):
        policy.check_text("x" * 6, "query")


@pytest.mark.parametrize(("value", "expected"), [
    ("127.0.0.1:8765", ("127.0.0.1", 8765)), ("[::1]:9000", ("::1", 9000)),
    ("localhost:1", ("localhost", 1))])
def test_bind_addresses_parse(value: str, expected: tuple[str, int]) -> None:
    assert parse_bind(value) == expected


@pytest.mark.parametrize("value", ["8765", "127.0.0.1", "host:0", "host:70000", ":80"])
def test_bad_bind_addresses_say_what_is_expected(value: str) -> None:
    with pytest.raises(InputError, match="expected HOST:PORT"):
        parse_bind(value)


def test_only_loopback_may_go_without_a_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10")
    check_bind("127.0.0.1", None, "TOKEN_VAR")
    check_bind("0.0.0.0", "secret", "TOKEN_VAR")
    with pytest.raises(InputError, match="set TOKEN_VAR"):
        check_bind("0.0.0.0", None, "TOKEN_VAR")


def _call_gate(gate: BearerTokenGate, headers: list[tuple[bytes, bytes]],
               kind: str = "http") -> tuple[list[dict[str, Any]], bool]:
    sent: list[dict[str, Any]] = []
    reached = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(message)

    gate.app = app
    asyncio.run(gate({"type": kind, "path": "/mcp", "headers": headers}, receive, send))
    return sent, bool(reached)


def test_the_gate_lets_through_only_the_right_bearer_token() -> None:
    async def unused(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError

    gate = BearerTokenGate(unused, "s3cret")
    assert _call_gate(gate, [(b"authorization", b"Bearer s3cret")]) == ([], True)
    # the scheme is case-insensitive (RFC 7235), and may be followed by several spaces
    for scheme in (b"bearer", b"BEARER", b"bEaReR"):
        assert _call_gate(gate, [(b"authorization", scheme + b" s3cret")]) == ([], True)
    assert _call_gate(gate, [(b"authorization", b"Bearer   s3cret")]) == ([], True)
    for headers in ([], [(b"authorization", b"Bearer wrong")],
                    [(b"authorization", b"s3cret")], [(b"x-token", b"Bearer s3cret")],
                    [(b"authorization", b"Basic s3cret")], [(b"authorization", b"Bearers3cret")],
                    [(b"authorization", b"Bearer s3cret ")], [(b"authorization", b"Bearer")]):
        sent, reached = _call_gate(gate, headers)
        assert not reached and sent[0]["status"] == 401
    assert _call_gate(gate, [], kind="lifespan") == ([], True)  # startup is not a request
    with pytest.raises(InputError, match="empty"):
        BearerTokenGate(unused, "")


def test_without_the_sdk_the_commands_name_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    import importlib.util

    from labile_cli import main as labile_main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mcp" else real(name, *a))
    assert labile_main(["serve", "mcp", "-n", "a"]) == 2
    assert "pip install -e '.[mcp]' in a labile checkout" in capsys.readouterr().err
