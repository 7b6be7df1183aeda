"""A small synthetic chat for the lifecycle tests (no benchmark text), and store scans."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path

from labile import Observation

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)

CHAT = [
    ("Maria", "I started a pottery class in Lisbon last week."),
    ("Tom", "That sounds fun. Is the studio far from your flat?"),
    ("Maria", "Twenty minutes by tram. My teacher Ines is very patient."),
    ("Tom", "I went hiking in the Alps with my brother Sam."),
    ("Maria", "Did Sam enjoy the mountains? I remember he hated cold weather."),
    ("Tom", "He loved it, we saw ibex near the glacier."),
    ("Maria", "Ines says my bowls are getting better every week."),
    ("Tom", "Next month I am moving to Porto for a new job at a bakery."),
    ("Maria", "Porto is lovely, we can meet halfway in Coimbra."),
    ("Tom", "Sam wants to visit Lisbon in the summer."),
]


def canary() -> str:
    """A string no model, tokenizer or table would produce by chance."""
    return "qzv" + secrets.token_hex(8)


def chat(prefix: str = "t", start: int = 0, turns: list[tuple[str, str]] | None = None,
         per_session: int = 5) -> list[Observation]:
    """``turns`` (default `CHAT`) as observations, ``per_session`` turns per session."""
    out = []
    for i, (speaker, text) in enumerate(turns or CHAT, start):
        session = str(i // per_session + 1)
        out.append(Observation(id=f"{prefix}{i}", text=text, speaker=speaker, session=session,
                               timestamp=T0 + timedelta(days=7 * (i // per_session), minutes=i)))
    return out


def canary_turns(secret: str) -> list[tuple[str, str]]:
    """Turns that share entities with `CHAT` and carry ``secret``."""
    return [
        ("Maria", f"The studio locker code in Lisbon is {secret}, Ines gave it to me."),
        ("Tom", f"Sam wrote {secret} on the glacier map, my brother loves codes."),
    ]


def files_holding(root: Path, needle: str) -> tuple[list[Path], int, int]:
    """Files under ``root`` whose bytes contain ``needle`` (UTF-8), files and bytes scanned."""
    raw = needle.encode()
    hits, files, size = [], 0, 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        files += 1
        size += len(data)
        if raw in data:
            hits.append(path)
    return hits, files, size
