"""How an observation is rendered as one line of text.

``[<date>] <speaker>: <text> [shares a photo: <caption>]`` — the form the
reference baselines index, and the form anything that embeds or indexes whole
turns should use so that dates and speakers are searchable.
"""

from __future__ import annotations

from datetime import datetime

from labile.plugin import Observation


def format_date(ts: datetime) -> str:
    """``1:56 pm on 8 May, 2023`` — the conversational date style."""
    hour = ts.hour % 12 or 12
    return f"{hour}:{ts.minute:02d} {'am' if ts.hour < 12 else 'pm'} on {ts.day} {ts:%B}, {ts.year}"


def turn_text(obs: Observation, *, dated: bool = True) -> str:
    """The document for one observation: ``[date] speaker: text [shares a photo: …]``.

    The date is ``metadata["date_text"]`` when the caller supplied one (the
    source's own wording), else `format_date` of the timestamp.
    """
    parts = []
    if dated:
        date_text = obs.metadata.get("date_text") or format_date(obs.timestamp)
        parts.append(f"[{date_text}]")
    parts.append(f"{obs.speaker}: {obs.text}" if obs.speaker else obs.text)
    caption = obs.metadata.get("caption")
    if caption:
        parts.append(f"[shares a photo: {caption}]")
    return " ".join(parts)
