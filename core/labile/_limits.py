"""How much one observation and one ``add`` batch may hold, and chunking what is longer.

Why limits at all: building memory from one turn holds the namespace's write
lock, and a pasted document of megabytes is not a conversational turn: it
stalls every other writer while it is built, and its single node then holds
text no retrieval can use well. Why these defaults:

* `MAX_OBSERVATION_CHARS` (100,000 characters, about 25,000 tokens) is far
  above any chat message (LoCoMo's longest turn is under 1,000), above what
  the offline embedders read anyway (256 tokens), and builds offline in a few
  seconds;
* `MAX_BATCH_CHARS` (2,000,000) bounds what one batch holds in memory and
  under the lock: twenty observations at the per-observation limit, or
  thousands of ordinary turns.

Both can be raised (`Limits`; ``--max-text-chars`` / ``--max-batch-chars`` on
the command line and the MCP server) or a long text can be cut into parts
that keep their provenance (`chunk_observation`; ``labile add --chunk``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final

import attrs

from labile._errors import InputError
from labile._model import Observation

#: Default largest observation, in characters (text, speaker, session and metadata).
MAX_OBSERVATION_CHARS: Final = 100_000
#: Default largest ``add`` batch, in characters over all its observations.
MAX_BATCH_CHARS: Final = 2_000_000
#: Metadata key of a chunk: which observation it is a part of, and where.
CHUNK_KEY: Final = "chunk_of"


def _positive(_inst: object, attr: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{attr.name} must be a positive integer, got {value!r}")


@attrs.frozen(kw_only=True)
class Limits:
    """The size limits `labile.Memory.add` enforces (see the module docs for the defaults).

    Attributes:
        observation_chars: Most characters one observation may hold (its text,
            speaker, session and metadata as JSON, together).
        batch_chars: Most characters one ``add`` call may hold, summed over its
            observations.
    """

    observation_chars: int = attrs.field(default=MAX_OBSERVATION_CHARS, validator=_positive)
    batch_chars: int = attrs.field(default=MAX_BATCH_CHARS, validator=_positive)

    def check(self, batch: Sequence[Observation]) -> None:
        """Refuse a batch over either limit, naming the observation, the size and the ways out.

        Raises:
            InputError: an observation or the batch is over its limit.
        """
        total = 0
        for index, obs in enumerate(batch):
            total += self.check_one(obs, f"observations[{index}] ({obs.id!r})")
        if total > self.batch_chars:
            raise InputError(
                f"this batch holds {total:,} characters; the limit is {self.batch_chars:,} per "
                "add call. Send fewer observations per call (`labile add --batch-size`) or "
                "raise the limit (Limits(batch_chars=...), --max-batch-chars); nothing in "
                "this batch was written")

    def check_one(self, obs: Observation, where: str) -> int:
        """The size of ``obs`` (called ``where`` in the error) if within `observation_chars`.

        Raises:
            InputError: it is over the limit.
        """
        size = observation_chars(obs)
        if size > self.observation_chars:
            raise InputError(
                f"{where} holds {size:,} characters; the limit is {self.observation_chars:,} "
                "per observation. Cut it into parts that keep their provenance "
                "(labile.chunk_observation, `labile add --chunk`) or raise the limit "
                "(Limits(observation_chars=...), --max-text-chars); nothing in this batch "
                "was written")
        return size

    def fit(self, observations: Iterable[Observation]) -> list[Observation]:
        """The observations, each one over `observation_chars` cut into parts that fit
        (`chunk_observation`, leaving room for the part's own metadata).

        Raises:
            InputError: an observation's speaker, session and metadata alone
                leave no room for text under the limit.
        """
        out: list[Observation] = []
        for obs in observations:
            if observation_chars(obs) <= self.observation_chars:
                out.append(obs)
                continue
            room = self.observation_chars - (observation_chars(obs) - len(obs.text))
            room -= _PART_META + len(obs.id)
            if room < 1:
                raise InputError(f"observation {obs.id!r}: its speaker, session and metadata "
                                 f"alone are near the limit of {self.observation_chars:,} "
                                 "characters; it cannot be cut to fit")
            out.extend(chunk_observation(obs, room))
        return out


    def batches(self, observations: Iterable[Observation],
                most: int) -> Iterator[list[Observation]]:
        """Runs of at most ``most`` observations and `batch_chars` characters (a single
        observation larger than that is a run of its own, for `check` to refuse)."""
        batch: list[Observation] = []
        held = 0
        for obs in observations:
            size = observation_chars(obs)
            if batch and (len(batch) == most or held + size > self.batch_chars):
                yield batch
                batch, held = [], 0
            batch.append(obs)
            held += size
        if batch:
            yield batch


#: Room kept for a part's ``chunk_of`` metadata besides the original id it names.
_PART_META: Final = 120


def observation_chars(obs: Observation) -> int:
    """The size `Limits` counts: text, speaker, session and metadata (as JSON)."""
    meta = json.dumps(obs.metadata, ensure_ascii=False, default=str) if obs.metadata else ""
    return len(obs.text) + len(obs.speaker or "") + len(obs.session or "") + len(meta)


def chunk_observation(obs: Observation, max_chars: int) -> list[Observation]:
    """``obs`` itself if its text fits in ``max_chars``, else its text cut into parts.

    Contract:
        * each part is an observation with the same time, speaker, session and
          metadata, id ``"<id>#<n>"`` (``n`` from 1), and in its metadata
          ``chunk_of = {"id": <original id>, "part": n, "parts": N,
          "start": s, "end": e}`` with ``obs.text[s:e] == part.text``: the parts
          tile the original text exactly, in order;
        * a part ends at the last line break, else the last whitespace, within
          its window, else it is cut at ``max_chars``; no part is empty and
          none is longer than ``max_chars``;
        * linear in the length of the text.

    Raises:
        InputError: ``max_chars`` is not a positive integer.
    """
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise InputError(f"max_chars must be a positive integer, got {max_chars!r}")
    text = obs.text
    if len(text) <= max_chars:
        return [obs]
    # A blank stretch is no part of its own: it has nothing to remember.
    bounds = [(s, e) for s, e in _cuts(text, max_chars) if text[s:e].strip()]
    parts = []
    for n, (start, end) in enumerate(bounds, 1):
        where: dict[str, Any] = {"id": obs.id, "part": n, "parts": len(bounds),
                                 "start": start, "end": end}
        parts.append(attrs.evolve(obs, id=f"{obs.id}#{n}", text=text[start:end],
                                  metadata={**obs.metadata, CHUNK_KEY: where}))
    return parts


def _cuts(text: str, max_chars: int) -> Iterator[tuple[int, int]]:
    start = 0
    while start < len(text):
        stop = min(start + max_chars, len(text))
        if stop < len(text):
            # A cut inside the window only: each search reads at most max_chars
            # characters, so cutting stays linear in the text.
            brk = text.rfind("\n", start + 1, stop)
            if brk < 0:
                brk = max(text.rfind(" ", start + 1, stop), text.rfind("\t", start + 1, stop))
            if brk > start:
                stop = brk + 1  # the separator stays with the part before it
        yield start, stop
        start = stop
