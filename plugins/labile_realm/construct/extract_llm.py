"""LLM unit extraction: the model types the new turn's units and rewrites the summary.

When one ``add`` brings several turns, consecutive turns of one session are
asked together (`LLMUnitsConfig.batch_turns`, default 4): the instructions,
summary and context are paid once per batch instead of once per turn, and
the summary is rewritten once per batch (`LLMUnitExtractor.extract_batch`).

The prompt shows the running summary (s_t), the recent turns (c_t) and the
new turn; the reply must match `labile_realm.prompts.EXTRACT_SCHEMA` and every
``time`` must be ``none``, a date or a date range. Anything else raises
`LLMOutputError` and nothing of the reply is used (the extractor logs and
counts it; the observation itself is already in the log as evidence).

Two guards keep a weak model's output and cost in check (found with
SmolLM2-135M, issue #11):

* a turn of pure small talk (`labile_text.entities.is_filler`: greetings,
  thanks, compliments, with no shared photo) yields no unit and is never
  sent to the model, as the prompt's own rule says it would yield none;
* a rewritten summary that copies the prompt's instructions (any run of
  `COPIED_WORDS` words of the fixed prompt text), loops, or holds JSON is refused:
  the previous summary stays, since a polluted summary is fed into every
  later prompt. Both are counted in ``counts``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, Final

import attrs
from attrs.validators import ge, le

from labile.plugin import (
    Deps,
    LLMClient,
    LLMError,
    LLMOutputError,
    Observation,
    bounded,
    get_logger,
)
from labile_realm import prompts
from labile_realm.construct.extract_offline import Extraction, date_phrase
from labile_realm.construct.units import ConversationState, Unit
from labile_realm.schema import ENTITY, EPISODE, EVENT, FACT, KIND_BY_SHORT
from labile_text.entities import is_filler
from labile_text.sentences import split_sentences

log = get_logger(__name__)

#: A summary sharing a run of this many words with the prompt's fixed text copied it.
COPIED_WORDS: Final = 6
#: A summary repeating a run of `LOOP_WORDS` words `LOOP_TIMES` times is a decoding loop.
LOOP_WORDS: Final = 4
LOOP_TIMES: Final = 3
#: Longest recent-context line shown, in characters (the new turn is never cut).
CONTEXT_CHARS: Final = 240
#: Fewest recent turns a batch prompt shows (the batch's own turns are context too).
MIN_BATCH_CONTEXT: Final = 2

_DATE = r"(\d{4})-(\d{2})-(\d{2})"
_ONE = re.compile(rf"^{_DATE}$")
_RANGE = re.compile(rf"^{_DATE}\s*(?:to|/|–|-)\s*{_DATE}$")


def parse_time(value: str | None) -> tuple[datetime | None, datetime | None]:
    """Parse ``"none"``, ``"YYYY-MM-DD"`` or ``"YYYY-MM-DD to YYYY-MM-DD"``.

    Returns:
        ``(start, inclusive end)``, or ``(None, None)`` for none/empty.

    Raises:
        LLMOutputError: any other shape or an impossible date.
    """
    text = (value or "").strip().lower()
    if text in ("", "none", "null", "unknown", "n/a"):
        return None, None
    try:
        m = _ONE.match(text)
        if m:
            start = datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=UTC)
            return start, start + timedelta(days=1) - timedelta(microseconds=1)
        m = _RANGE.match(text)
        if m:
            start = datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=UTC)
            end = datetime(int(m[4]), int(m[5]), int(m[6]), tzinfo=UTC)
            if end < start:
                raise LLMOutputError(f"time range ends before it starts: {value!r}")
            return start, end + timedelta(days=1) - timedelta(microseconds=1)
    except ValueError as exc:
        raise LLMOutputError(f"impossible date in time {value!r}") from exc
    raise LLMOutputError(f"time must be none, YYYY-MM-DD or a range, got {value!r}")


class LLMUnitExtractor:
    """``realm.unit_extractor.llm``: the LLM proposes the units of a turn, or of a batch of
    turns of one session (see the module doc).

    Args:
        llm: The client.
        context_turns: Recent turns shown as context.
        summary_words: Word budget of the running summary.
        batch_turns: Most turns per extraction call (see `LLMUnitsConfig`).
        batch_chars: Most new-turn characters per extraction call.
    """

    def __init__(self, llm: LLMClient, *, context_turns: int = 6, summary_words: int = 200,
                 batch_turns: int = 1, batch_chars: int = 2400) -> None:
        self.llm = llm
        self.context_turns = context_turns
        self.summary_words = summary_words
        self.batch_turns = batch_turns
        self.batch_chars = batch_chars
        #: ``small_talk_skipped`` and ``summary_refused`` so far.
        self.counts: Counter[str] = Counter()

    def extract(self, obs: Observation, state: ConversationState) -> Extraction:
        """Propose the units of ``obs`` and update ``state.summary``.

        Raises:
            LLMOutputError: the reply was invalid; nothing was changed.
            LLMError: the call failed.
        """
        if self._small_talk(obs):
            return Extraction()
        prompt = prompts.extraction_prompt(state.summary, self._recent(state, self.context_turns),
                                           obs.speaker, obs.timestamp, _turn_text(obs),
                                           self.summary_words)
        reply = self.llm.complete_json(prompt, prompts.EXTRACT_SCHEMA, operation="realm.extract",
                                       system=prompts.SYSTEM)
        units = [self._unit(obs, i, raw) for i, raw in enumerate(reply["units"])]
        self._update_summary(state, reply["summary"], obs.id)
        return _extraction(obs, units)

    def batches(self, observations: Sequence[Observation]) -> list[list[Observation]]:
        """``observations`` cut into runs asked together: consecutive turns of one
        session, at most ``batch_turns`` of them and ``batch_chars`` characters."""
        out: list[list[Observation]] = []
        chars = 0
        for obs in observations:
            size = len(_turn_text(obs))
            last = out[-1] if out else None
            if (last is not None and len(last) < self.batch_turns
                    and last[-1].session == obs.session and chars + size <= self.batch_chars):
                last.append(obs)
                chars += size
            else:
                out.append([obs])
                chars = size
        return out

    def extract_batch(
        self, observations: Sequence[Observation], state: ConversationState
    ) -> list[Extraction]:
        """The units of several turns of one session, asked in one call where possible.

        Small talk is left out before asking. The reply's units are grouped by
        the turn they name: a unit naming a turn that was not shown is dropped
        (``batch_unit_unknown_turn``), and a turn whose units do not all
        validate loses its units only (``batch_turn_rejected``); the other
        turns keep theirs. A turn the reply gives no unit simply has none. A
        reply cut at its token budget keeps the units that closed before the
        cut and asks the turns after them again (`_salvage`,
        ``batch_reply_cut_salvaged``). A reply that fails otherwise (invalid,
        or a prompt over the context window) is asked again as two halves
        (``batch_split``), down to single turns; a single turn whose call
        fails is counted (``batch_turn_failed``) and loses its units.

        Returns:
            One `Extraction` per observation, in order.

        Raises:
            LLMError: a call failed for a reason halving cannot help (the host
                counts every turn of the batch as failed), or a single turn's
                reply was unusable.
        """
        out = [Extraction() for _ in observations]
        asked = [(i, obs) for i, obs in enumerate(observations) if not self._small_talk(obs)]
        self._ask_batch(asked, state, out)
        return out

    def _ask_batch(self, asked: Sequence[tuple[int, Observation]], state: ConversationState,
                   out: list[Extraction]) -> None:
        if not asked:
            return
        if len(asked) == 1:
            index, obs = asked[0]
            out[index] = self.extract(obs, state)
            return
        # every turn sees about as many turns before it as the one-turn prompt shows
        recent = self._recent(state, max(MIN_BATCH_CONTEXT, self.context_turns - len(asked) + 1))
        turns = [(obs.speaker, obs.timestamp, _turn_text(obs)) for _, obs in asked]
        prompt = prompts.extraction_batch_prompt(state.summary, recent, turns, self.summary_words)
        try:
            reply = self.llm.complete_json(
                prompt, prompts.extraction_batch_schema(len(asked)),
                operation="realm.extract_batch", system=prompts.SYSTEM)
        except LLMError as exc:
            if not _halving_helps(exc):
                raise
            if self._salvage(exc, asked, state, out):
                return
            self.counts["batch_split"] += 1
            log.warning("realm_batch_split", turns=len(asked), error=str(exc)[:200])
            half = len(asked) // 2
            self._ask_part(asked[:half], state, out)
            self._ask_part(asked[half:], state, out)
            return
        self._land(reply["units"], asked, out)
        self._update_summary(state, reply["summary"], asked[-1][1].id)

    def _ask_part(self, part: Sequence[tuple[int, Observation]], state: ConversationState,
                  out: list[Extraction]) -> None:
        """`_ask_batch` on part of a batch; a single turn whose reply stays unusable loses
        its units only (counted), so the rest of the batch keeps what it got."""
        try:
            self._ask_batch(part, state, out)
        except LLMError as exc:
            if len(part) > 1 or not _halving_helps(exc):
                raise
            self.counts["batch_turn_failed"] += 1
            out[part[0][0]] = Extraction(failed=True)
            log.warning("realm_batch_turn_failed", observation=part[0][1].id,
                        error=str(exc)[:200])

    def _salvage(self, exc: LLMError, asked: Sequence[tuple[int, Observation]],
                 state: ConversationState, out: list[Extraction]) -> bool:
        """Keep the complete units of a batch reply cut at its token budget.

        A grammar writes ``units`` first and in turn order, so the units that
        closed before the cut are whole and the turns they name were covered;
        the turns after the last one named are asked again (a shorter batch),
        and the summary is left as it was. Returns whether anything was kept.
        """
        units = [u for u in salvage_units(getattr(exc, "raw", None) or "")
                 if _turn_of(u, len(asked)) is not None]
        if not units:
            return False
        covered = max(_turn_of(u, len(asked)) or 0 for u in units)
        self.counts["batch_reply_cut_salvaged"] += 1
        log.warning("realm_batch_salvaged", turns=len(asked), covered=covered,
                    units=len(units))
        self._land(units, asked[:covered], out)
        self._ask_part(asked[covered:], state, out)
        return True

    def _land(self, raw_units: Sequence[dict[str, Any]],
              asked: Sequence[tuple[int, Observation]], out: list[Extraction]) -> None:
        """Give every turn of ``asked`` the units of ``raw_units`` that name it."""
        by_turn: dict[int, list[dict[str, Any]]] = {}
        for raw in raw_units:
            turn = _turn_of(raw, len(asked))
            if turn is None:
                self.counts["batch_unit_unknown_turn"] += 1
                continue
            by_turn.setdefault(turn, []).append(raw)
        for n, (index, obs) in enumerate(asked, start=1):
            try:
                units = [self._unit(obs, i, raw) for i, raw in enumerate(by_turn.get(n, []))]
            except (LLMOutputError, KeyError, ValueError) as exc:
                self.counts["batch_turn_rejected"] += 1
                log.warning("realm_batch_turn_rejected", observation=obs.id, error=str(exc)[:200])
                units = []
            out[index] = _extraction(obs, units)

    def _small_talk(self, obs: Observation) -> bool:
        """Pure small talk with no shared photo: never sent to the model (counted)."""
        if _caption(obs) or not is_filler(obs.text):
            return False
        self.counts["small_talk_skipped"] += 1
        log.debug("realm_small_talk_skipped", observation=obs.id)
        return True

    def _recent(self, state: ConversationState, turns: int) -> list[str]:
        """The last ``turns`` turns of ``state`` as clipped context lines."""
        if turns <= 0:
            return []
        return [_clip(f"[{t.timestamp.date().isoformat()}] {t.speaker or 'someone'}: {t.text}")
                for t in list(state.recent)[-turns:]]

    def _update_summary(self, state: ConversationState, raw: object, observation: str) -> None:
        """Take the model's rewritten summary unless `summary_problem` refuses it."""
        summary = " ".join(str(raw).split()[: self.summary_words])
        problem = summary_problem(summary, self.summary_words)
        if problem is None:
            state.summary = summary
        else:
            self.counts["summary_refused"] += 1
            log.warning("realm_summary_refused", observation=observation, reason=problem)

    def refresh_summary(self, state: ConversationState, sessions: Sequence[str]) -> None:
        """Nothing to do: the model rewrites the summary with every turn."""
        del state, sessions

    def _unit(self, obs: Observation, index: int, raw: dict[str, Any]) -> Unit:
        kind = KIND_BY_SHORT[str(raw["type"])]
        name = " ".join(str(raw["name"]).split())
        description = " ".join(str(raw["description"]).split())
        start, end = parse_time(str(raw.get("time", "none")))
        keywords = tuple(str(k) for k in raw.get("keywords", ()) or ())
        attrs: dict[str, object] = {"name": name, "session": obs.session,
                                    "speaker": obs.speaker, "said_at": obs.timestamp.isoformat()}
        content = obs.text
        if kind == ENTITY:
            attrs.update(aliases=list(raw.get("aliases", []) or []),
                         category=str(raw.get("category", "other")), role=str(raw.get("role", "")))
            content = name
            keywords = keywords or (name,)
        elif kind == EVENT:
            attrs.update(participants=list(raw.get("participants", []) or []),
                         description=description, time=start.isoformat() if start else "none")
            if start is None:
                start = end = obs.timestamp
            description = f"{description} (told on {date_phrase(obs.timestamp)})"
        elif kind == EPISODE:
            attrs.update(description=description, keywords=list(keywords),
                         time_range=[start.isoformat(), end.isoformat()] if start and end else None)
        elif kind == FACT:
            statement = " ".join(str(raw.get("statement") or description).split())
            attrs.update(statement=statement, keywords=list(keywords), subject=obs.speaker)
            description = statement if statement == description else f"{statement} ({description})"
            start = end = None
        return Unit(
            kind=kind, key=f"{kind}|{obs.id}|{index}", name=name, content=content,
            description=description, keywords=keywords, time_start=start, time_end=end,
            sources=(obs.id,), attrs=attrs,
        )


def _caption(obs: Observation) -> str:
    caption = obs.metadata.get("caption") if obs.metadata else None
    return str(caption).strip() if isinstance(caption, str) else ""


def _turn_text(obs: Observation) -> str:
    """The turn as the model reads it: its text and the photo it shares, if any."""
    caption = _caption(obs)
    return f"{obs.text} [shares a photo: {caption}]" if caption else obs.text


def _extraction(obs: Observation, units: list[Unit]) -> Extraction:
    questions = tuple(
        obs.text[s:e].strip() for s, e in split_sentences(obs.text)
        if obs.text[s:e].rstrip().endswith("?")
    )
    return Extraction(units=units, questions=questions,
                      terms=[u.name for u in units if u.kind != ENTITY][:6])


def _turn_of(raw: object, shown: int) -> int | None:
    """The turn number a raw unit names, or ``None`` unless it is one of 1..shown."""
    turn = raw.get("turn") if isinstance(raw, dict) else None
    if not isinstance(turn, int) or isinstance(turn, bool) or not 1 <= turn <= shown:
        return None
    return turn


def salvage_units(raw: str) -> list[dict[str, Any]]:
    """The unit objects that closed in a reply cut short, in order.

    Reads ``{"units": [ {...}, {...}, {...`` up to the first unit that does
    not parse (the one the cut went through); anything else gives ``[]``.
    """
    found = re.match(r'\s*\{\s*"units"\s*:\s*\[', raw)
    if found is None:
        return []
    decoder = json.JSONDecoder()
    units: list[dict[str, Any]] = []
    pos = found.end()
    while True:
        while pos < len(raw) and raw[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(raw) or raw[pos] != "{":
            return units
        try:
            value, pos = decoder.raw_decode(raw, pos)
        except ValueError:
            return units
        if isinstance(value, dict):
            units.append(value)


def _halving_helps(exc: LLMError) -> bool:
    """A batch reply that failed whole may succeed in halves: invalid or cut replies,
    and prompts over the context window (a shorter prompt fits)."""
    return isinstance(exc, LLMOutputError) or str(getattr(exc, "kind", "")) == "context_window"


def _clip(line: str) -> str:
    return line if len(line) <= CONTEXT_CHARS else line[:CONTEXT_CHARS].rsplit(" ", 1)[0] + "…"


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


@cache
def _instruction_runs(summary_words: int) -> frozenset[tuple[str, ...]]:
    """Every `COPIED_WORDS`-word run of the extraction prompt's fixed text."""
    fixed = prompts.extraction_prompt("", [], None, datetime(2000, 1, 1, tzinfo=UTC), "",
                                      summary_words)
    words = _words(fixed)
    return frozenset(tuple(words[i:i + COPIED_WORDS])
                     for i in range(len(words) - COPIED_WORDS + 1))


def summary_problem(summary: str, summary_words: int = 200) -> str | None:
    """Why a model's rewritten summary must not replace the running one, or ``None``.

    Refused: a summary holding JSON or schema text; one that repeats a run
    of `COPIED_WORDS` words of the prompt's fixed instructions (SmolLM2-135M
    copied "Use as few units as cover everything new" and the unit-type list
    into it, which then fed every later prompt); one that repeats a run of
    `LOOP_WORDS` words `LOOP_TIMES` times (SmolLM2 looped over a list of
    invented names until the string's limit).
    """
    if re.search(r"[{}]|\bschema\b|\"type\"\s*:", summary, re.IGNORECASE):
        return "holds JSON or schema text"
    words = _words(summary)
    repeats = Counter(tuple(words[i:i + LOOP_WORDS]) for i in range(len(words) - LOOP_WORDS + 1))
    looped = [run for run, n in repeats.items() if n >= LOOP_TIMES]
    if looped:
        return f"repeats itself: {' '.join(looped[0])!r}"
    runs = _instruction_runs(summary_words)
    for i in range(len(words) - COPIED_WORDS + 1):
        if tuple(words[i:i + COPIED_WORDS]) in runs:
            return f"copies the instructions: {' '.join(words[i:i + COPIED_WORDS])!r}"
    return None


@attrs.frozen(kw_only=True)
class LLMUnitsConfig:
    """Options of ``realm.unit_extractor.llm``.

    Attributes:
        batch_turns: Most turns of one session asked in one extraction call
            when an ``add`` brings several (1: one call per turn, as the paper
            does). Turns added one ``add`` at a time are always asked alone.
        batch_chars: Most characters of new-turn text in one batch call; a
            longer turn is asked alone. Keeps a batch prompt well inside a
            small model's context window.
        context_turns: Recent turns shown to the model.
        summary_words: Word budget of the running conversation summary.
    """

    batch_turns: int = attrs.field(default=4, validator=[ge(1), le(16)])
    batch_chars: int = attrs.field(default=2400, validator=bounded(200, 1_000_000))
    context_turns: int = attrs.field(default=6, validator=bounded(0, 1000))
    summary_words: int = attrs.field(default=200, validator=[ge(20), le(400)])


def build_llm_units(config: LLMUnitsConfig, deps: Deps) -> LLMUnitExtractor:
    """Factory of ``realm.unit_extractor.llm``."""
    return LLMUnitExtractor(deps.llm, context_turns=config.context_turns,
                            summary_words=config.summary_words, batch_turns=config.batch_turns,
                            batch_chars=config.batch_chars)
