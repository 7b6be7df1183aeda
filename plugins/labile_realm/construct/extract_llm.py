"""LLM unit extraction: the model types the new turn's units and rewrites the summary.

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

import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any, Final

import structlog

from labile.plugin import Deps, LLMClient, LLMOutputError, NoConfig, Observation
from labile_realm import prompts
from labile_realm.construct.extract_offline import Extraction, date_phrase
from labile_realm.construct.units import ConversationState, Unit
from labile_realm.schema import ENTITY, EPISODE, EVENT, FACT, KIND_BY_SHORT
from labile_text.entities import is_filler
from labile_text.sentences import split_sentences

if TYPE_CHECKING:
    from labile_realm.construct.extractor import RealmConstructConfig

log = structlog.get_logger(__name__)

#: A summary sharing a run of this many words with the prompt's fixed text copied it.
COPIED_WORDS: Final = 6
#: A summary repeating a run of `LOOP_WORDS` words `LOOP_TIMES` times is a decoding loop.
LOOP_WORDS: Final = 4
LOOP_TIMES: Final = 3
#: Longest recent-context line shown, in characters (the new turn is never cut).
CONTEXT_CHARS: Final = 240

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
    """``realm.unit_extractor.llm``: the LLM proposes the units of one turn (see the module doc).

    Args:
        llm: The client.
        context_turns: Recent turns shown as context.
        summary_words: Word budget of the running summary.
    """

    def __init__(self, llm: LLMClient, *, context_turns: int = 6, summary_words: int = 200) -> None:
        self.llm = llm
        self.context_turns = context_turns
        self.summary_words = summary_words
        #: ``small_talk_skipped`` and ``summary_refused`` so far.
        self.counts: Counter[str] = Counter()

    def extract(self, obs: Observation, state: ConversationState) -> Extraction:
        """Propose the units of ``obs`` and update ``state.summary``.

        Raises:
            LLMOutputError: the reply was invalid; nothing was changed.
            LLMError: the call failed.
        """
        caption = obs.metadata.get("caption") if obs.metadata else None
        has_photo = isinstance(caption, str) and bool(caption.strip())
        if not has_photo and is_filler(obs.text):
            self.counts["small_talk_skipped"] += 1
            log.debug("realm_small_talk_skipped", observation=obs.id)
            return Extraction()
        recent = [
            _clip(f"[{t.timestamp.date().isoformat()}] {t.speaker or 'someone'}: {t.text}")
            for t in list(state.recent)[-self.context_turns:]
        ] if self.context_turns else []
        text = f"{obs.text} [shares a photo: {str(caption).strip()}]" if has_photo else obs.text
        prompt = prompts.extraction_prompt(state.summary, recent, obs.speaker, obs.timestamp, text,
                                           self.summary_words)
        reply = self.llm.complete_json(prompt, prompts.EXTRACT_SCHEMA, operation="realm.extract",
                                       system=prompts.SYSTEM)
        units = [self._unit(obs, i, raw) for i, raw in enumerate(reply["units"])]
        summary = " ".join(str(reply["summary"]).split()[: self.summary_words])
        problem = summary_problem(summary, self.summary_words)
        if problem is None:
            state.summary = summary
        else:
            self.counts["summary_refused"] += 1
            log.warning("realm_summary_refused", observation=obs.id, reason=problem)
        questions = tuple(
            obs.text[s:e].strip() for s, e in split_sentences(obs.text)
            if obs.text[s:e].rstrip().endswith("?")
        )
        return Extraction(units=units, questions=questions,
                          terms=[u.name for u in units if u.kind != ENTITY][:6])

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


def build_llm_units(config: NoConfig, deps: Deps, host: RealmConstructConfig) -> LLMUnitExtractor:
    """Factory of ``realm.unit_extractor.llm`` (context and summary budget from the host)."""
    del config
    return LLMUnitExtractor(deps.llm, context_turns=host.context_turns,
                            summary_words=host.summary_words)
