"""``POST /api/add`` (#28 items 3 and 7): ``speakers`` names roles, introductions name
them for later adds, a note sent twice without a time is one memory, bad mappings 400."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from labile import Memory


def _said(memory: Memory) -> dict[str, str | None]:
    return {o.text: o.speaker for o in memory.list("maya", limit=1000).items}


def test_speakers_name_roles_and_an_introduction_names_later_adds(
        client: TestClient, memory: Memory) -> None:
    log = [{"role": "user", "content": "Hello, I'm Elena."},
           {"role": "assistant", "content": "Hi Elena, what can I do?"}]
    res = client.post("/api/add", json={"file": json.dumps(log), "format": "messages",
                                        "speakers": {"assistant": "Kit"}})
    assert res.status_code == 200, res.text
    client.post("/api/add", json={"messages": [{"role": "user", "content": "I run daily."}]})
    said = _said(memory)
    assert said["Hello, I'm Elena."] == "Elena" and said["I run daily."] == "Elena"
    assert said["Hi Elena, what can I do?"] == "Kit"
    client.post("/api/add", json={"messages": [{"role": "user", "content": "New phone."}],
                                  "speakers": {"user": "user"}})
    assert _said(memory)["New phone."] == "user"


def test_a_note_sent_twice_without_a_time_is_one_memory(client: TestClient) -> None:
    first = client.post("/api/add", json={"text": "Maya's locker is number 12."}).json()
    again = client.post("/api/add", json={"text": "Maya's locker is number 12."}).json()
    assert len(first["added"]) == 1
    assert again["added"] == [] and again["already_stored"] == first["added"]


@pytest.mark.parametrize(("speakers", "message"), [
    (["user=Elena"], "wrong type"), ({"user": 3}, "must be strings"),
    ({"user": " "}, "needs a role and a name")])
def test_a_bad_speakers_mapping_is_refused_and_stores_nothing(
        client: TestClient, memory: Memory, speakers: Any, message: str) -> None:
    before = len(_said(memory))
    res = client.post("/api/add", json={"text": "x", "speakers": speakers})
    assert res.status_code == 400 and res.json()["field"] == "speakers"
    assert message in res.json()["error"]
    assert len(_said(memory)) == before
