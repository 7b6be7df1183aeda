"""LLM unit extraction: the model types the new turn's units and rewrites the summary.

The prompt shows the running summary (s_t), the recent turns (c_t) and the
new turn; the reply must match `labile_realm.prompts.EXTRACT_SCHEMA` and every
``time`` must be ``none``, a date or a date range. Anything else raises
`LLMOutputError` and nothing of the reply is used (the extractor logs and
counts it; the observation itself is already in the log as evidence).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from labile.plugin import Deps, LLMClient, LLMOutputError, NoConfig, Observation
from labile_realm import prompts
from labile_realm.construct.extract_offline import Extraction, date_phrase
from labile_realm.construct.units import ConversationState, Unit
from labile_realm.schema import ENTITY, EPISODE, EVENT, FACT, KIND_BY_SHORT
from labile_text.sentences import split_sentences

if TYPE_CHECKING:
    from labile_realm.construct.extractor import RealmConstructConfig

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

    def extract(self, obs: Observation, state: ConversationState) -> Extraction:
        """Propose the units of ``obs`` and update ``state.summary``.

        Raises:
            LLMOutputError: the reply was invalid; nothing was changed.
            LLMError: the call failed.
        """
        recent = [
            f"[{t.timestamp.date().isoformat()}] {t.speaker or 'someone'}: {t.text}"
            for t in list(state.recent)[-self.context_turns:]
        ] if self.context_turns else []
        text = obs.text
        caption = obs.metadata.get("caption") if obs.metadata else None
        if isinstance(caption, str) and caption.strip():
            text = f"{text} [shares a photo: {caption.strip()}]"
        prompt = prompts.extraction_prompt(state.summary, recent, obs.speaker, obs.timestamp, text,
                                           self.summary_words)
        reply = self.llm.complete_json(prompt, prompts.EXTRACT_SCHEMA, operation="realm.extract",
                                       system=prompts.SYSTEM)
        units = [self._unit(obs, i, raw) for i, raw in enumerate(reply["units"])]
        words = str(reply["summary"]).split()
        state.summary = " ".join(words[: self.summary_words])
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


def build_llm_units(config: NoConfig, deps: Deps, host: RealmConstructConfig) -> LLMUnitExtractor:
    """Factory of ``realm.unit_extractor.llm`` (context and summary budget from the host)."""
    del config
    return LLMUnitExtractor(deps.llm, context_turns=host.context_turns,
                            summary_words=host.summary_words)
