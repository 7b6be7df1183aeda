"""Descriptor compression: evidence in, a regenerable summary and keywords out.

The paper's regenerable descriptors (s, K) of a memory unit.

The ``allmem.descriptor`` kind (`labile_allmem.decisions.Describer`) has two
bundled implementations:

* ``allmem.descriptor.offline`` (`OfflineDescriber`, no model): an extractive
  summary of the evidence (`labile_text.keywords.summarize`, words copied
  from the turn) prefixed with the speaker, the photo caption when there is
  one, and, for a turn that answers the previous message, a short quote of
  what it answers; keywords are extractive keyphrases;
* ``allmem.descriptor.llm`` (`LLMDescriber`): asks the model for
  ``{"summary", "keywords"}`` (3–5) as validated JSON. A failed or invalid
  reply falls back to the offline descriptor for that item (a unit must have
  one either way) and is counted in ``fallbacks``.

Both take a `DescriberConfig`: the offline describer's knobs, which are also
the LLM one's fallback.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from attrs.validators import ge

from labile.plugin import Deps, LLMClient, LLMError, LLMOutputError, get_logger
from labile.text.tokenize import content_words
from labile_allmem import prompts
from labile_text.keywords import keyphrases, summarize
from labile_text.sentences import split_sentences

log = get_logger(__name__)

__all__ = [
    "Descriptor",
    "Evidence",
    "LLMDescriber",
    "OfflineDescriber",
    "OfflineDescriptorConfig",
    "build_llm_describer",
    "build_offline_describer",
    "tagged",
    "untagged",
]


@attrs.frozen(kw_only=True)
class Descriptor:
    """A regenerable descriptor: summary and keywords.

    Attributes:
        summary: A short text standing for the evidence in search.
        keywords: Search phrases.
    """

    summary: str
    keywords: tuple[str, ...] = ()
    when: str = ""
    embed_when: bool = False

    def text(self) -> str:
        """The string embedded for the unit: the summary, then the keywords.

        The date tag is left out unless ``embed_when``: the unit's time is its
        own field, and a restatement on another day should look like the same
        statement to diagnosis.
        """
        summary = tagged(self.summary, self.when) if self.embed_when else self.summary
        if not self.keywords:
            return summary
        return f"{summary} | {', '.join(self.keywords)}"

    def description(self) -> str:
        """The stored description: the summary behind its date tag, if any."""
        return tagged(self.summary, self.when)


def tagged(summary: str, when: str | None) -> str:
    """``summary`` prefixed with ``[when]`` (unchanged when ``when`` is empty)."""
    return f"[{when}] {summary}" if when else summary


def untagged(description: str, when: str | None) -> str:
    """``description`` without the ``[when]`` tag `tagged` put in front of it."""
    prefix = f"[{when}] "
    return description[len(prefix):] if when and description.startswith(prefix) else description


@attrs.frozen(kw_only=True)
class Evidence:
    """What a describer sees of one piece of evidence.

    Attributes:
        text: The evidence itself (a turn, or a segment of one).
        speaker: Who said it.
        caption: Caption of a photo shared with it.
        when: Its date, as text.
        previous: ``(speaker, text)`` of the message it follows, if any.
    """

    text: str
    speaker: str | None = None
    caption: str | None = None
    when: str | None = None
    previous: tuple[str | None, str] | None = None


@attrs.frozen(kw_only=True)
class OfflineDescriptorConfig:
    """Options of the offline descriptor.

    Attributes:
        summary_words: Word budget of the summary: evidence within it is kept
            whole (whitespace normalised), longer evidence is summarised
            extractively.
        keywords: Maximum number of keyphrases.
        speaker: Prefix the summary with the speaker's name.
        caption: Append a shared photo's caption to the summary.
        date: Tag the description with the date (``[1:56 pm on 8 May, 2023]
            …``) so search can match dated questions.
        embed_date: Embed the tag with the summary (the paper embeds the
            summary as a whole). Measured on LoCoMo with MiniLM: +1.2 R@5 and
            no change in what ATC finds; with a purely lexical embedder the
            date dominates short texts, so turn it off there.
        reply_context: Say what a short answer replies to.
        short_words: A turn with fewer content words than this is "short".
        reply_words: Word budget of the quoted previous message.
    """

    summary_words: int = attrs.field(default=25, validator=ge(1))
    keywords: int = attrs.field(default=5, validator=ge(0))
    speaker: bool = True
    caption: bool = True
    date: bool = True
    embed_date: bool = True
    reply_context: bool = True
    short_words: int = attrs.field(default=12, validator=ge(0))
    reply_words: int = attrs.field(default=16, validator=ge(1))


class OfflineDescriber:
    """``allmem.descriptor.offline``: extractive descriptors, where nothing is absent
    from the evidence or its context."""

    def __init__(self, config: OfflineDescriptorConfig | None = None) -> None:
        """Create the describer with ``config`` (defaults if ``None``)."""
        self.config = config or OfflineDescriptorConfig()
        self.fallbacks = 0

    def describe(self, items: Sequence[Evidence]) -> list[Descriptor]:
        """Describe every item (pure function of the items)."""
        return [self.describe_one(item) for item in items]

    def describe_one(self, item: Evidence) -> Descriptor:
        """The offline descriptor of one item."""
        cfg = self.config
        base = _extract(item.text, cfg.summary_words)
        parts: list[str] = []
        if cfg.speaker and item.speaker:
            parts.append(f"{item.speaker}: {base}" if base else f"{item.speaker}:")
        elif base:
            parts.append(base)
        if cfg.caption and item.caption:
            parts.append(f"[shares a photo: {item.caption}]")
        reply = self._reply_context(item)
        if reply:
            parts.append(reply)
        summary = " ".join(parts).strip() or item.text.strip() or "(empty message)"
        source = item.text if not (cfg.caption and item.caption) else f"{item.text}\n{item.caption}"
        keywords = tuple(keyphrases(source, k=cfg.keywords)) if cfg.keywords else ()
        when = item.when if cfg.date and item.when else ""
        return Descriptor(summary=summary, keywords=keywords, when=when,
                          embed_when=cfg.embed_date)

    def _reply_context(self, item: Evidence) -> str:
        """``(replying to X: "…")`` when the turn answers the previous message."""
        cfg = self.config
        if not cfg.reply_context or item.previous is None:
            return ""
        prev_speaker, prev_text = item.previous
        if not prev_text.strip() or (prev_speaker and prev_speaker == item.speaker):
            return ""
        question = _last_question(prev_text)
        short = len(content_words(item.text)) < cfg.short_words
        if question is None and not short:
            return ""
        quoted = summarize(question or prev_text, max_words=cfg.reply_words)
        if not quoted:
            return ""
        who = prev_speaker or "the previous message"
        return f"(replying to {who}: {quoted})"


def _extract(text: str, max_words: int) -> str:
    """The evidence itself when it fits ``max_words``, else its extractive summary.

    A turn that already fits the budget is its own most faithful summary;
    `summarize` would drop its less informative sentences ("He is a beagle.").
    """
    tokens = text.split()
    if not tokens:
        return ""
    if len(tokens) <= max_words:
        return " ".join(tokens)
    return summarize(text, max_words=max_words)


def _last_question(text: str) -> str | None:
    """The last sentence of ``text`` that asks something, if any."""
    found = None
    for start, end in split_sentences(text):
        if "?" in text[start:end]:
            found = text[start:end]
    return found


class LLMDescriber:
    """``allmem.descriptor.llm``: descriptors from an LLM (strict JSON), with the
    offline descriptor for any item whose reply is unusable."""

    def __init__(self, llm: LLMClient, fallback: OfflineDescriber) -> None:
        """Create the describer.

        Args:
            llm: The model client.
            fallback: Used for an item whose reply fails validation.
        """
        self._llm, self._fallback = llm, fallback
        self.fallbacks = 0
        #: Calls the model did not answer at all (not a bad reply): an outage.
        self.unanswered = 0

    def describe(self, items: Sequence[Evidence]) -> list[Descriptor]:
        """One LLM call per item, in order."""
        return [self.describe_one(item) for item in items]

    def describe_one(self, item: Evidence) -> Descriptor:
        """Ask the model; fall back to the offline descriptor if the reply is unusable."""
        prompt = prompts.descriptor_prompt(
            text=item.text, speaker=item.speaker, when=item.when, caption=item.caption,
            previous=item.previous,
        )
        try:
            reply = self._llm.complete_json(
                prompt, prompts.DESCRIPTOR_SCHEMA, operation="allmem.describe",
                system=prompts.SYSTEM,
            )
            descriptor = _descriptor_from_reply(reply)
            if descriptor is not None and self._fallback.config.date and item.when:
                descriptor = attrs.evolve(descriptor, when=item.when)
        except LLMError as exc:
            log.warning("allmem_descriptor_fallback", error=str(exc)[:200])
            self.fallbacks += 1
            self.unanswered += not isinstance(exc, LLMOutputError)
            return self._fallback.describe_one(item)
        if descriptor is None:
            self.fallbacks += 1
            return self._fallback.describe_one(item)
        return descriptor


def _descriptor_from_reply(reply: object) -> Descriptor | None:
    """A descriptor from a schema-valid reply, or ``None`` if it is blank."""
    if not isinstance(reply, dict):
        return None
    summary = str(reply.get("summary", "")).strip()
    keywords = tuple(
        dict.fromkeys(str(k).strip() for k in reply.get("keywords", ()) if str(k).strip())
    )
    if not summary:
        return None
    return Descriptor(summary=summary, keywords=keywords)


@attrs.frozen(kw_only=True)
class DescriberConfig:
    """Options of ``allmem.descriptor.offline`` and ``allmem.descriptor.llm``.

    Attributes:
        offline: Options of the offline describer (the LLM one's fallback).
    """

    offline: OfflineDescriptorConfig = attrs.field(factory=OfflineDescriptorConfig)


def build_offline_describer(config: DescriberConfig, deps: Deps) -> OfflineDescriber:
    """Factory of ``allmem.descriptor.offline``."""
    del deps
    return OfflineDescriber(config.offline)


def build_llm_describer(config: DescriberConfig, deps: Deps) -> LLMDescriber:
    """Factory of ``allmem.descriptor.llm``."""
    return LLMDescriber(deps.llm, OfflineDescriber(config.offline))
