"""Offline unit extraction: events, facts and entities from one turn, with context.

This is the no-LLM counterpart of the paper's unit-construction step. Like
that step, it is conditioned on the recent context: a reply is described
together with the question it answers and the person it addresses, because a
short answer ("Yes, last Saturday!") is meaningless on its own and retrieval
matches descriptions, not just raw text.

Per observation it proposes:

* one **event** per informative turn (a turn made only of greetings, thanks
  and other small talk gives no event). Its time span runs from the first
  resolved time expression ("yesterday", "last Saturday", "in 2022" …; the
  raw phrase is kept in ``attrs["time_text"]``) to the moment the turn was
  said, or is that moment alone;
* a **fact** for each stable first-person statement (preferences, identity,
  possessions, relationships, work, home), about the speaker;
* an **entity** for the speaker and for each named thing mentioned (people,
  places, organisations, titles).

Every unit's ``sources`` is the observation id. Session episodes and the
running summary are maintained by the extractor (`labile_realm.construct.extractor`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta

import attrs
from attrs.validators import ge, le

from labile.plugin import Deps, Observation
from labile_realm.construct.clauses import clause_units
from labile_realm.construct.facts import spot_facts
from labile_realm.construct.identity import INTRODUCTION, ROLE_NAMED
from labile_realm.construct.passages import DOCUMENT_CHARS, PASSAGE_CHARS, cut, passage_units
from labile_realm.construct.units import ConversationState, Unit
from labile_realm.ids import stable_id
from labile_realm.schema import ENTITY, EVENT, FACT
from labile_text.entities import Entity, is_filler, named_entities, normalize_name
from labile_text.entity_types import introduces_speaker
from labile_text.keywords import keyphrases
from labile_text.names import is_vocative
from labile_text.sentences import split_sentences
from labile_text.timeparse import TimeMention, resolve_time_expressions

_ONE_MICRO = timedelta(microseconds=1)
_WS = re.compile(r"\s+")
#: Granularities precise enough to date an event ("in 2022" is kept as a phrase
#: and a span too; vague words are never resolved by the toolkit).
_EVENT_GRANULARITIES = frozenset({"day", "weekend", "week", "month", "year", "range"})


@attrs.frozen(kw_only=True)
class OfflineExtractionConfig:
    """Knobs of the offline unit extractor.

    Attributes:
        facts: Propose fact units for stable first-person statements.
        entities: Propose entity units for speakers and named things.
        max_facts: At most this many facts per turn.
        max_keywords: Keyphrases kept per event.
        context_chars: Longest quoted question kept in a reply's description.
        clauses: Propose cause and effect units for causal links the turn
            states (`labile_realm.construct.clauses`).
    """

    facts: bool = True
    entities: bool = True
    max_facts: int = 3
    max_keywords: int = 6
    context_chars: int = 200
    clauses: bool = True


@attrs.define(kw_only=True)
class Extraction:
    """What one observation yields.

    Attributes:
        units: The proposed units, the event (if any) first.
        questions: The questions the turn asks (context for the next reply).
        terms: Keyphrases of the turn (they feed the session episode).
        failed: The extractor gave up on this turn (its reply stayed unusable), so it
            yields nothing; the host counts it as a failed extraction.
    """

    units: list[Unit] = attrs.field(factory=list)
    questions: tuple[str, ...] = ()
    terms: list[str] = attrs.field(factory=list)
    failed: bool = False


def turn_event(obs: Observation) -> Unit:
    """The turn itself as an event unit: its words, speaker and time, nothing read into it.

    For a turn whose LLM reply was unusable: the turn stays findable, and the rules that
    read a turn (a change told in it) still see it. It has the key, so the node id, of the
    event this extractor makes of a turn (`unit_id_of_turn`), and its description frame.
    """
    name = " ".join(obs.text.split()[:6])
    sentences = [obs.text[a:b].strip() for a, b in split_sentences(obs.text)]
    only_questions = bool(sentences) and all(t.endswith("?") for t in sentences)
    desc = (f"On {date_phrase(obs.timestamp)}, {obs.speaker or 'a note'} "
            f"{'asked' if only_questions else 'said'}: {obs.text}")
    return Unit(
        kind=EVENT, key=f"event|{obs.id}", name=name, content=obs.text, description=desc,
        keywords=(), time_start=obs.timestamp, time_end=obs.timestamp, sources=(obs.id,),
        attrs={"name": name, "session": obs.session, "speaker": obs.speaker,
               "said_at": obs.timestamp.isoformat(), "participants": [],
               "act": "question" if only_questions else "statement", "description": desc,
               "time": obs.timestamp.isoformat(), "turn_fallback": True})


def turn_only(obs: Observation, *, failed: bool = False) -> Extraction:
    """An extraction holding only `turn_event` (``failed`` as the extractor reports it)."""
    return Extraction(units=[turn_event(obs)], failed=failed)


def date_phrase(moment: datetime) -> str:
    """``"8 May 2023"``: the day of a moment, as text both people and BM25 read."""
    return f"{moment.day} {moment.strftime('%B')} {moment.year}"


def span_phrase(mention: TimeMention) -> str:
    """A resolved time mention as text: a day, a month, a year or a range."""
    start, end = mention.start, mention.end - _ONE_MICRO
    if mention.granularity == "day":
        return date_phrase(start)
    if mention.granularity == "month":
        return f"{start.strftime('%B')} {start.year}"
    if mention.granularity == "year":
        return str(start.year)
    return f"{date_phrase(start)} to {date_phrase(end)}"


def _clean(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _shorten(text: str, limit: int) -> str:
    text = _clean(text)
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + "…"


class OfflineUnitExtractor:
    """``realm.unit_extractor.offline``: units from rules, keyphrases and time parsing.

    The extractor reads the conversation state (who spoke last, which
    questions are pending) but never writes it, except for the running
    summary, which `refresh_summary` rebuilds once per ``add`` call.

    Args:
        config: Extraction knobs.
        summary_words: Word budget of the running summary.
        document_chars: A turn longer than this is built as a document
            (`labile_realm.construct.passages`).
        passage_chars: Longest passage of a document.
    """

    def __init__(
        self, config: OfflineExtractionConfig | None = None, *, summary_words: int = 200,
        document_chars: int = DOCUMENT_CHARS, passage_chars: int = PASSAGE_CHARS,
    ) -> None:
        # The document sizes are constants, not config options: an option is part of the
        # shape a store records, and a new one would refuse every store built before it.
        self.config = config or OfflineExtractionConfig()
        self.summary_words = summary_words
        self.document_chars = document_chars
        self.passage_chars = passage_chars

    def refresh_summary(self, state: ConversationState, sessions: Sequence[str]) -> None:
        """Rebuild the running summary from the sessions' keyphrase counts."""
        update_summary(state, list(sessions), self.summary_words)

    def extract(self, obs: Observation, state: ConversationState) -> Extraction:
        """Propose the units of ``obs``.

        Args:
            obs: The new observation.
            state: The namespace's conversation state (read only).

        Returns:
            The units (event first), the questions the turn asks and its terms.
        """
        text = obs.text or ""
        if len(text) <= self.document_chars:
            return self._extract_turn(obs, state)
        # Document mode (`labile_realm.construct.passages`): the opening as a turn.
        (_, end), *_ = cut(text, 0, self.document_chars)
        out = self._extract_turn(attrs.evolve(obs, text=text[:end]), state)
        event = out.units[0] if out.units and out.units[0].kind == EVENT else None
        out.units.extend(passage_units(obs, event, end, self.passage_chars,
                                       date_phrase(obs.timestamp)))
        return out

    def _extract_turn(self, obs: Observation, state: ConversationState) -> Extraction:
        cfg = self.config
        text = obs.text or ""
        caption = _caption(obs)
        spans = split_sentences(text)
        sentences = [text[s:e] for s, e in spans]
        informative = [s for s in sentences if not is_filler(s)]
        questions = tuple(_clean(s) for s in informative if s.rstrip().endswith("?"))
        statements = [s for s in informative if not s.rstrip().endswith("?")]
        out = Extraction(questions=questions)
        speaker = obs.speaker
        listener = state.listener_for(speaker)
        asked_turn, asked = state.pending_question(speaker)
        mentions = [
            m for m in resolve_time_expressions(" ".join(statements), obs.timestamp)
            if m.granularity in _EVENT_GRANULARITIES
        ]
        ents = named_entities(text) if cfg.entities or cfg.max_keywords else []
        if informative or caption:
            keywords = keyphrases(" ".join(informative) or (caption or ""), k=cfg.max_keywords)
            out.terms = list(keywords)
            event = self._event(obs, informative, statements, caption, listener,
                                asked_turn.speaker if asked_turn else None, asked,
                                mentions, keywords, ents)
            out.units.append(event)
            if cfg.clauses:
                out.units.extend(
                    clause_units(obs, event, statements, date_phrase(obs.timestamp))
                )
        if cfg.facts and speaker:
            out.units.extend(self._facts(obs, statements))
        if cfg.entities:
            out.units.extend(self._entities(obs, ents, state, sentences))
        return out

    # -- events ---------------------------------------------------------------
    def _event(
        self,
        obs: Observation,
        informative: list[str],
        statements: list[str],
        caption: str | None,
        listener: str | None,
        asker: str | None,
        asked: tuple[str, ...],
        mentions: list[TimeMention],
        keywords: list[str],
        ents: list[Entity],
    ) -> Unit:
        said = _clean(obs.text) or " ".join(_clean(s) for s in informative)
        when = date_phrase(obs.timestamp)
        only_questions = bool(informative) and not statements
        # "asked Tom", "said to Tom", "shared a photo with Tom"
        if not said:
            verb, joiner = "shared a photo", " with "
        elif only_questions:
            verb, joiner = "asked", " "
        else:
            verb, joiner = "said", " to "
        if obs.speaker:
            desc = f"On {when}, {obs.speaker} {verb}{joiner + listener if listener else ''}"
        else:  # a plain note, said by no one: not "someone said"
            desc = f"On {when}, a note"
        if said:
            desc += f": {said}"
        if caption:
            desc += f" [shares a photo: {_clean(caption)}]"
        if asked:
            question = _shorten(" ".join(asked[-2:]), self.config.context_chars)
            desc += f" (replying to {asker or listener or 'a question'}: {question})"
        time_start, time_end = obs.timestamp, obs.timestamp
        attrs_: dict[str, object] = {
            "name": keywords[0] if keywords else _shorten(said or (caption or ""), 60),
            "participants": [p for p in (obs.speaker, listener) if p]
            + [e.name for e in ents if e.category == "person"],
            "speaker": obs.speaker,
            "listener": listener,
            "session": obs.session,
            "said_at": obs.timestamp.isoformat(),
            "act": "question" if only_questions else "statement",
        }
        if asked:
            attrs_["answers"] = list(asked[-2:])
        if mentions:
            first = mentions[0]
            # The span runs from what is talked about to when it is told: both
            # are times a question may use to locate the event. An undecided bare
            # date ("Japan in October!") spans both its readings, which is the union
            # of the two spans since each reaches the time it was told.
            time_start = min(first.start, obs.timestamp)
            time_end = max(first.readings[-1][1] - _ONE_MICRO, obs.timestamp)
            attrs_["time_text"] = first.phrase
            attrs_["time_granularity"] = first.granularity
            phrase = span_phrase(first)
            if first.alternative is not None:
                attrs_["time_readings"] = [[a.isoformat(), (b - _ONE_MICRO).isoformat()]
                                           for a, b in first.readings]
                ahead = attrs.evolve(first, start=first.alternative[0],
                                     end=first.alternative[1], alternative=None)
                phrase = f"{phrase} or {span_phrase(ahead)}"
            keywords = [*keywords, f"{first.phrase}: {phrase}"]
        content = obs.text
        if caption:
            content = f"{obs.text} [photo: {caption}]"
        attrs_["description"] = desc
        attrs_["time"] = time_start.isoformat()
        return Unit(
            kind=EVENT, key=f"event|{obs.id}", name=str(attrs_["name"]), content=content,
            description=desc, keywords=tuple(keywords), time_start=time_start,
            time_end=time_end, sources=(obs.id,), attrs=attrs_,
        )

    # -- facts ----------------------------------------------------------------
    def _facts(self, obs: Observation, statements: list[str]) -> list[Unit]:
        units: list[Unit] = []
        speaker = obs.speaker or ""
        for sentence in statements:
            for match in spot_facts(sentence, speaker):
                statement = _clean(match.statement)
                kws = keyphrases(sentence, k=3)
                units.append(Unit(
                    kind=FACT,
                    key=f"fact|{obs.id}|{len(units)}",
                    name=f"{speaker}: {match.attribute}",
                    content=statement,
                    description=f"{statement} (stated by {speaker} on "
                                f"{date_phrase(obs.timestamp)})",
                    keywords=tuple(kws),
                    sources=(obs.id,),
                    attrs={
                        "statement": statement, "keywords": kws, "subject": speaker,
                        "attribute": match.attribute, "value": match.value,
                        "stated_at": obs.timestamp.isoformat(), "session": obs.session,
                    },
                ))
                if len(units) >= self.config.max_facts:
                    return units
        return units

    # -- entities ---------------------------------------------------------------
    def _entities(
        self, obs: Observation, ents: list[Entity], state: ConversationState,
        sentences: list[str],
    ) -> list[Unit]:
        """One unit per named thing, typed; the speaker's own unit carries a self-introduction.

        A name the speaker introduces themself by is an alias on the speaker's
        unit, not a unit of its own; the node decision settles the rest of
        its identity (`labile_realm.construct.identity.settle_identity`).
        """
        units: dict[str, Unit] = {}
        text = obs.text
        speaker = obs.speaker or ""
        introduced = [e for e in ents if speaker and e.category == "person"
                      and introduces_speaker(text, *e.span)]
        speaker_unit = self._speaker_unit(obs, state, [e.name for e in introduced])
        if speaker_unit is not None:
            units[normalize_name(speaker)] = speaker_unit
        said_names = {normalize_name(e.name) for e in introduced}
        for ent in ents:
            key = normalize_name(ent.name)
            if not key or key in units or key in said_names or len(key) < 2:
                continue
            if ent.category == "person" and is_vocative(
                text, *ent.span, cues=_GREETINGS, cue_match="suffix"
            ):
                continue
            sentence = next((s for s in sentences if ent.name in s), text)
            role = f"mentioned by {obs.speaker}: \"{_shorten(sentence, 160)}\"" if obs.speaker \
                else f"mentioned: \"{_shorten(sentence, 160)}\""
            units[key] = Unit(
                kind=ENTITY, key=f"entity|{key}", name=ent.name, content=ent.name,
                description=f"{ent.name} ({ent.category}), {role}",
                keywords=(ent.name,), sources=(obs.id,),
                attrs={"name": ent.name, "aliases": [], "category": ent.category,
                       "category_cue": ent.cue, "role": role},
            )
        return list(units.values())

    @staticmethod
    def _speaker_unit(
        obs: Observation, state: ConversationState, introduced: list[str]
    ) -> Unit | None:
        """The speaker's unit: on their first turn, or when they introduce themself by name."""
        speaker = obs.speaker or ""
        key = normalize_name(speaker)
        if not key:
            return None
        why = {n: INTRODUCTION for n in introduced if normalize_name(n) != key}
        role = _role_alias(obs, state)
        if role is not None:
            why[role] = ROLE_NAMED
        aliases = list(why)
        first = key not in state.speakers and key not in state.entity_index
        if not first and not aliases:
            return None
        called = f" (also {', '.join(aliases)})" if aliases else ""
        unit_attrs: dict[str, object] = {
            "name": speaker, "aliases": aliases, "category": "person",
            "category_cue": "speaker", "role": "conversation participant",
        }
        if aliases:
            # Logged as merges from the start, so `undo_merge` can take them back
            # even when the speaker's node is created by this very turn.
            unit_attrs["merges"] = [
                {"alias": a, "reason": r, "sources": []} for a, r in why.items()
            ]
            unit_attrs["alias_reasons"] = why
        return Unit(
            kind=ENTITY, key=f"entity|{key}", name=speaker, content=speaker,
            description=f"{speaker}{called}: a person taking part in the conversation",
            keywords=(speaker, *aliases), sources=(obs.id,), attrs=unit_attrs,
        )


def _role_alias(obs: Observation, state: ConversationState) -> str | None:
    """The chat role a named speaker spoke as ("user" for Elena), unless already theirs.

    Ingestion names a role's turns (`labile_io.speakers`) and keeps the role in
    ``metadata["role"]``; turns said before the name was known made a node
    named after the role. Whether the role may join this speaker (it must not
    when another named person already wrote as it) is settled at decision
    time (`labile_realm.construct.identity.settle_identity`).
    """
    role = obs.metadata.get("role") if obs.metadata else None
    if not isinstance(role, str):
        return None
    key, rkey = normalize_name(obs.speaker or ""), normalize_name(role)
    if not rkey or rkey == key:
        return None
    held = state.entity_index.get(rkey)
    return None if held is not None and held == state.entity_index.get(key) else role


_GREETINGS = ("hey", "hi", "hello", "thanks", "thank you", "bye", "congrats", "dear", "yo",
              "wow", "oh", "aw", "aww", "sure", "yes", "yeah", "no", "ok", "okay", "sorry")


def _caption(obs: Observation) -> str | None:
    value = obs.metadata.get("caption") if obs.metadata else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def unit_id(unit: Unit) -> str:
    """The stable node id a new unit gets (from its kind and key)."""
    prefix = {EVENT: "ev", FACT: "fa", ENTITY: "en"}.get(unit.kind, "nd")
    return stable_id(prefix, unit.key)


def unit_id_of_turn(observation_id: str) -> str:
    """The node id of the event the offline extractor makes of one observation."""
    return stable_id("ev", f"event|{observation_id}")


def session_key(obs: Observation) -> str:
    """The episode an observation belongs to: its session, else its day."""
    return obs.session if obs.session else obs.timestamp.date().isoformat()


@attrs.frozen(kw_only=True)
class OfflineUnitsConfig:
    """Options of ``realm.unit_extractor.offline``.

    Attributes:
        extraction: What the rules extract (`OfflineExtractionConfig`).
        summary_words: Word budget of the running conversation summary.
    """

    extraction: OfflineExtractionConfig = attrs.field(factory=OfflineExtractionConfig)
    summary_words: int = attrs.field(default=200, validator=[ge(20), le(400)])


def build_offline_units(config: OfflineUnitsConfig, deps: Deps) -> OfflineUnitExtractor:
    """Factory of ``realm.unit_extractor.offline``."""
    del deps
    return OfflineUnitExtractor(config.extraction, summary_words=config.summary_words)


def update_summary(state: ConversationState, sessions: list[str], max_words: int = 200) -> str:
    """Refresh the running summary from the sessions' keyphrase counts.

    The offline summary is one line per session, newest last, naming the
    session's most frequent topics; older lines are dropped to stay within
    ``max_words``.

    Args:
        state: The conversation state (its ``summary`` is replaced).
        sessions: Session keys, in the order they were seen.
        max_words: Word budget.

    Returns:
        The new summary.
    """
    lines: list[str] = []
    for key in sessions:
        terms: Counter[str] = state.session_terms.get(key, Counter())
        if not terms:
            continue
        who = " and ".join(sorted(state.speakers.values())) or "The speakers"
        top = ", ".join(t for t, _ in terms.most_common(6))
        lines.append(f"Session {key}: {who} talked about {top}.")
    words: list[str] = []
    kept: list[str] = []
    for line in reversed(lines):
        n = len(line.split())
        if len(words) + n > max_words:
            break
        kept.insert(0, line)
        words.extend(line.split())
    state.summary = " ".join(kept)
    return state.summary
