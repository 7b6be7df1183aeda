"""The goal of #28 item 3: in an OpenAI-format log where the person is ``user`` and
introduces herself, a question that names her finds what the first-person one finds.

Before speakers were named, "What is Elena's job now?" put the introduction (the only
turn with "Elena" in it) first under all three presets, while "What is my job now?"
found the turn about the job.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from labile import Memory
from labile_io.formats import ReadOptions, read_file

LOG = [
    ("2025-01-05T10:00", "user", "Hi! I'm Elena. I just moved to Somerville with my partner."),
    ("2025-01-05T10:01", "assistant", "Welcome! How are you settling in?"),
    ("2025-01-05T10:02", "user", "My job is nursing at Mercy Hospital, mostly night shifts."),
    ("2025-01-05T10:03", "assistant", "Night shifts are hard. Do you get enough sleep?"),
    ("2025-01-05T10:04", "user", "Not really. I drink four cups of coffee a day to keep going."),
    ("2025-02-10T09:00", "user", "Our beagle Biscuit loves the snow here."),
    ("2025-03-20T08:00", "user", "I have been learning Spanish on weekends."),
    ("2025-04-02T18:00", "user",
     "Big news: I left the hospital and I am now a data analyst at Acme Health."),
    ("2025-04-02T18:01", "assistant", "Congratulations on the new role!"),
]


@pytest.mark.parametrize("preset", ["realm", "labile", "allmem"])
def test_a_question_naming_the_user_finds_what_the_first_person_one_finds(
        tmp_path: Path, preset: str) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"timestamp": t, "role": r, "content": c} for t, r, c in LOG]))
    [conv] = read_file(path, None, ReadOptions(default_time=datetime.now(UTC), tz=UTC))
    assert {o.speaker for o in conv.observations} == {"Elena", "assistant"}
    with Memory.open({"preset": preset, "store": {"type": "memory"}}) as memory:
        memory.add(conv.observations, namespace="elena")
        mine = memory.search("What is my job now?", namespace="elena", k=3).hits
        hers = memory.search("What is Elena's job now?", namespace="elena", k=3).hits
    assert mine and hers
    assert hers[0].node.sources == mine[0].node.sources
    said = {o.id: o.text for o in conv.observations}
    assert "job" in said[mine[0].node.sources[0]] or "analyst" in said[mine[0].node.sources[0]]
