"""Document mode: a very long turn as its opening, analysed, plus passages that hold the rest.

Offline analysis (sentences, keyphrases, entities, time expressions, facts,
causal clauses) costs a roughly constant time per character, some tens of
microseconds in Python: a pasted document of megabytes would hold the write
lock for minutes, and the single event it became held text that neither its
embedding (a few hundred tokens) nor BM25 (one very long document) could
find a detail in. So a turn longer than `DOCUMENT_CHARS` (20,000) is built as a
*document*:

* its opening (the text up to `DOCUMENT_CHARS`, cut at a line break or a
  space) is analysed exactly as a turn of that length would be, and becomes
  the turn's event with its entities, facts and clauses;
* the rest is cut into passages of at most `PASSAGE_CHARS` (1,000, about what
  an embedding model reads) that tile it exactly, each an event node of its own
  (``attrs["clause_of"]`` names the turn's event, so, like a clause, it is
  reached through its turn and never starts a chain or takes semantic edges)
  with the turn's speaker and time, its place in ``attrs["passage"]``
  (``start``/``end`` offsets into the observation's text, ``part``, ``parts``),
  an embedding and a BM25 entry: every sentence of the document stays findable;
* the turn's event ``comprises`` each passage.

Passages get no keyphrases, entities or graph decisions: the cost of a
document beyond its opening is cutting, embedding and writing, linear and
cheap.
"""

from __future__ import annotations

from typing import Final

from labile.plugin import Observation
from labile_realm.construct.units import Unit, UnitLink
from labile_realm.schema import COMPRISES, EVENT

__all__ = ["DOCUMENT_CHARS", "PASSAGE_CHARS", "PASSAGE_KEY", "cut", "passage_units"]

#: ``attrs`` key of a passage node: where in its observation's text it lies.
PASSAGE_KEY: Final = "passage"
#: A turn longer than this many characters is a document (LoCoMo's longest turn is
#: under 1,000; the analysis of this much takes about a second).
DOCUMENT_CHARS: Final = 20_000
#: Longest passage: about what MiniLM reads (256 word pieces).
PASSAGE_CHARS: Final = 1_000


def cut(text: str, start: int, most: int) -> list[tuple[int, int]]:
    """``text[start:]`` as consecutive ``(s, e)`` spans of at most ``most`` characters.

    Contract: the spans tile ``text[start:]`` exactly, in order; each ends after
    the last line break in the second half of its window, else after the last
    space or tab, else at ``most`` characters; linear in the length of the text
    (each search reads one window). Blank spans are dropped by `passage_units`.
    (`labile.chunk_observation` cuts at any line break: its parts are turns, where
    a short one costs nothing; a short passage would cost an embedding.)
    """
    if most < 1:
        raise ValueError(f"passage length must be positive, got {most!r}")
    spans: list[tuple[int, int]] = []
    n = len(text)
    while start < n:
        stop = min(start + most, n)
        if stop < n:
            # A line break in the second half of the window, else the last blank: never
            # a sliver of a passage because a line ended early.
            brk = text.rfind("\n", start + max(1, most // 2), stop)
            if brk < 0:
                brk = max(text.rfind(" ", start + 1, stop), text.rfind("\t", start + 1, stop))
            if brk > start:
                stop = brk + 1  # the separator stays with the span before it
        spans.append((start, stop))
        start = stop
    return spans


def passage_units(obs: Observation, event: Unit | None, start: int, most: int,
                  when: str) -> list[Unit]:
    """The passages of ``obs.text[start:]`` (see the module docs), linked from ``event``.

    Contract: one unit per non-blank span of `cut`, key
    ``"passage|<observation id>|<start offset>"``, ``content`` the verbatim
    span (so ``obs.text[s:e] == content``), ``sources`` the observation; when
    ``event`` is given, its ``links`` gain a ``comprises`` link to each.
    """
    spans = [(s, e) for s, e in cut(obs.text, start, most) if not obs.text[s:e].isspace()]
    speaker = obs.speaker
    said_at = obs.timestamp.isoformat()
    owner = event.key if event is not None else f"event|{obs.id}"
    units: list[Unit] = []
    links: list[UnitLink] = []
    for part, (s, e) in enumerate(spans, 1):
        content = obs.text[s:e]
        head = f"On {when}, {speaker} said" if speaker else f"On {when}, a note"
        description = f"{head} (part {part} of {len(spans)}): {' '.join(content.split())}"
        unit = Unit(
            kind=EVENT, key=f"passage|{obs.id}|{s}", name=content.strip()[:60],
            content=content, description=description, time_start=obs.timestamp,
            time_end=obs.timestamp, sources=(obs.id,),
            attrs={"name": content.strip()[:60], "clause_of": owner,
                   PASSAGE_KEY: {"start": s, "end": e, "part": part, "parts": len(spans)},
                   "speaker": speaker, "session": obs.session, "said_at": said_at,
                   "participants": [speaker] if speaker else [], "time": said_at},
        )
        units.append(unit)
        links.append(UnitLink(predicate=COMPRISES, target=unit.key,
                              description=f"part {part} of {len(spans)} of what "
                                          f"{speaker or 'the note'} said", weight=0.3))
    if event is not None:
        event.links = (*event.links, *links)
    return units
