"""Extractive keyphrases and extractive summaries.

These are the offline descriptor generators: All-Mem's unit summary and
keywords and REALM's node keywords come from here when no LLM is configured.
Both functions only ever return words taken from the input, so a descriptor can
never assert something the evidence does not say.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from datetime import UTC, datetime

from labile.text.tokenize import content_words, is_stopword, stem, words, wordset
from labile_text.dates import FULL_MONTH_NAMES
from labile_text.entities import is_filler, named_entities
from labile_text.names import is_acronym, is_vocative
from labile_text.sentences import split_sentences
from labile_text.timeparse import resolve_time_expressions

__all__ = ["keyphrases", "summarize"]


_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
# Frequent conversational words that make poor keyphrases on their own (hedges,
# intensifiers, interjections, light verbs, relative-time words). They split
# candidate phrases the way stopwords do in RAKE.
_WEAK = wordset(
    """
    really also still even much many lot lots thing things something anything everything
    nothing stuff way kind kinda sort yeah yes wow hey hi hello thanks thank please okay ok
    oh um gonna wanna gotta pretty super totally definitely actually literally maybe sure
    awesome cool nice great good amazing glad happy love loved like liked feel feeling felt
    think thought know knew get gets got getting make makes made going go goes went come
    came want wanted need needed see saw seen look looks looked let lets say said tell told
    take took give gave keep kept lol haha omg guess mean means bit little always never ever
    sometimes often usually lately recently yesterday today tomorrow tonight now soon later
    ago last next sounds sound wonderful fantastic incredible glad totally able lately
    exciting excited awesome anyway anyways btw whats thats hows honestly especially
    one ones someone everyone anyone new old big lots tons every ha yep yup cheers yet
    worries woah whoa near around across behind beside beyond along inside outside together
    """
)
_INTERJECTION = re.compile(r"h?(?:ha|he|hi){2,}h?|lo+l|a+w+|o+h+|h+m+|u+m+|w+o+w+|w+o+a+h+")
_MAX_PHRASE = 4
_ENTITY_BOOST = 2.0
_DATE_BOOST = 1.5
# A neutral anchor: keyphrases only need the spans of time expressions.
_SPAN_ANCHOR = datetime(2000, 1, 1, tzinfo=UTC)


def _stems(tokens: list[str]) -> list[str]:
    return [stem(w) for t in tokens for w in words(t)]


def _is_weak(token: str) -> bool:
    low = "".join(words(token))
    return (
        len(low) <= 1
        or is_stopword(token)
        or low in _WEAK
        or _INTERJECTION.fullmatch(low) is not None
    )


_Candidate = tuple[list[str], list[str], int, float]  # surface words, stems, offset, boost


class _SpanSet:
    """Character spans merged into disjoint sorted runs, asked about overlap by
    bisection (checking every span for every word made long texts quadratic)."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for a, b in sorted(spans):
            if self.ends and a <= self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], b)
            else:
                self.starts.append(a)
                self.ends.append(b)

    def overlaps(self, s: int, e: int) -> bool:
        """Whether ``[s, e)`` overlaps one of the spans."""
        i = bisect_right(self.ends, s)  # the first run ending after s
        return i < len(self.starts) and self.starts[i] < e


def keyphrases(text: str, k: int = 5) -> list[str]:  # noqa: C901, PLR0912
    """Extract up to ``k`` keyphrases from ``text`` (RAKE-style, deterministic).

    Contract:
        * small talk (:func:`~labile_text.entities.is_filler`) has no keyphrases,
          and small-talk sentences inside a longer text contribute none;
        * candidates are maximal runs of words not broken by punctuation,
          stopwords, weak conversational words or relative time expressions
          (at most four words per phrase), plus every named entity that is not
          a vocative and every explicit date ("8 May 2023", "in 2022");
        * a word scores degree/frequency over the candidates; a phrase scores
          the sum over its words, x2 for named entities, x1.5 when it holds a
          number or a month name, +25% per repeat;
        * phrases are deduplicated by their set of stems (a phrase whose stems
          are a subset of a better phrase's is dropped);
        * output is lower-cased except named entities, dates and acronyms,
          ordered by score then position; only words of the input appear.

    Args:
        text: Arbitrary text.
        k: Maximum number of phrases (``k <= 0`` gives ``[]``).

    Returns:
        The keyphrases, best first.
    """
    if k <= 0 or is_filler(text):
        return []
    candidates: list[_Candidate] = []
    blocked: list[tuple[int, int]] = []  # spans whose words must not enter plain runs

    for ent in named_entities(text):
        blocked.append(ent.span)
        if ent.category == "title" or not is_vocative(text, *ent.span):
            toks = _WORD.findall(ent.name)
            candidates.append(
                (toks, [stem(w) for t in toks for w in words(t)], ent.span[0], _ENTITY_BOOST)
            )
    # only where time phrases are matters here, not their dates: no reading of tense
    for tm in resolve_time_expressions(text, _SPAN_ANCHOR, tense="past"):
        blocked.append(tm.span)
        toks = _WORD.findall(tm.phrase)
        explicit = any(c.isdigit() for c in tm.phrase) or any(
            t.casefold() in FULL_MONTH_NAMES for t in toks
        )
        if explicit:
            # Keep the date itself, minus a leading cue word ("in 2022" -> "2022").
            while toks and is_stopword(toks[0]):
                toks = toks[1:]
            candidates.append(
                (toks, [stem(w) for t in toks for w in words(t)], tm.span[0], _DATE_BOOST)
            )

    is_blocked = _SpanSet(blocked).overlaps

    for s, e in split_sentences(text):
        if is_filler(text[s:e]):
            continue  # "Long time no talk!", "Hope all's good!" name no topic
        run: list[tuple[str, int]] = []
        prev_end = s
        for m in _WORD.finditer(text, s, e):
            tok = m.group(0)
            # "Caroline, ..." / "Remember, ...": a sentence-opening word set off by
            # a comma is an address or a discourse marker, not a topic.
            opener = prev_end == s and text[m.end() : m.end() + 1] == ","
            skip = opener or _is_weak(tok) or is_blocked(m.start(), m.end())
            if skip or text[prev_end : m.start()].strip():  # punctuation splits runs too
                _flush(run, candidates)
                run = []
            if not skip:
                run.append((tok, m.start()))
            prev_end = m.end()
        _flush(run, candidates)
    candidates = [c for c in candidates if c[1]]
    if not candidates:
        return []

    freq: dict[str, int] = {}
    degree: dict[str, int] = {}
    for _toks, stems, _pos, _boost in candidates:
        for st in stems:
            freq[st] = freq.get(st, 0) + 1
            degree[st] = degree.get(st, 0) + len(stems)

    scored: dict[frozenset[str], tuple[float, int, str]] = {}
    for toks, stems, pos, boost in candidates:
        score = sum(degree[st] / freq[st] for st in stems) * boost
        if boost != _DATE_BOOST and any(c.isdigit() for t in toks for c in t):
            score *= _DATE_BOOST  # numbers are specific: "3 kids", "Route 66"
        keep_case = boost > 1.0
        surface = " ".join(t if keep_case or is_acronym(t) else t.lower() for t in toks)
        key = frozenset(stems)
        if key in scored:
            best, first, form = scored[key]
            scored[key] = (max(best, score) * 1.25, first, form)
        else:
            scored[key] = (score, pos, surface)

    ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[1][1], kv[1][2]))
    chosen: list[tuple[frozenset[str], str]] = []
    for key, (_score, _pos, surface) in ranked:
        if any(key <= other for other, _ in chosen):
            continue
        chosen.append((key, surface))
        if len(chosen) == k:
            break
    return [surface for _, surface in chosen]


def _flush(run: list[tuple[str, int]], out: list[_Candidate]) -> None:
    """Turn a run of content tokens into candidates of at most ``_MAX_PHRASE`` words."""
    for i in range(0, len(run), _MAX_PHRASE):
        chunk = run[i : i + _MAX_PHRASE]
        toks = [t for t, _ in chunk]
        stems = _stems(toks)
        if stems:
            out.append((toks, stems, chunk[0][1], 1.0))


# --------------------------------------------------------------------------- #
# Summaries                                                                    #
# --------------------------------------------------------------------------- #

_WS_TOKEN = re.compile(r"\S+")


def _informativeness(sentence: str) -> float:
    """Content-word count weighted by content density; questions count less."""
    toks = words(sentence)
    if not toks or is_filler(sentence):
        return 0.0
    content = {w for w in content_words(sentence) if w not in _WEAK}
    if not content:
        return 0.0
    density = len(content) / len(toks)
    score = len(content) * (0.5 + density)
    if any(c.isdigit() for c in sentence):
        score *= 1.2
    if sentence.rstrip().endswith("?"):
        score *= 0.5  # a question asks for information rather than giving it
    return score


def informativeness(sentence: str) -> float:
    """How much a sentence says: content words times content density (0 for small talk).

    Questions count half, digits a little more; the score `summarize` ranks
    sentences by.
    """
    return _informativeness(sentence)


def summarize(text: str, max_words: int = 40) -> str:
    """Return a faithful extractive summary of ``text`` in at most ``max_words`` words.

    Contract:
        * the result is a contiguous run of whole sentences copied verbatim
          from ``text`` (a substring), centred on the most informative
          sentence (content words x content density; greetings, thanks and
          other fillers score zero, questions half);
        * neighbouring sentences are added while they fit the word budget and
          score at least 40% of the best one;
        * if the best sentence alone is longer than ``max_words`` it is cut at
          a word boundary and "…" is appended;
        * if every sentence is filler, the text itself is used (truncated the
          same way); blank text gives "";
        * words are whitespace-separated tokens, so the output never contains
          a word that is not in the input.

    Args:
        text: Arbitrary text.
        max_words: Word budget (at least 1).

    Returns:
        The summary.
    """
    max_words = max(1, max_words)
    spans = split_sentences(text)
    if not spans:
        return ""
    scores = [_informativeness(text[s:e]) for s, e in spans]
    lengths = [len(_WS_TOKEN.findall(text[s:e])) for s, e in spans]
    best = max(range(len(spans)), key=lambda i: (scores[i], -i))
    if scores[best] <= 0.0:
        return _truncate(text[spans[0][0] : spans[-1][1]], max_words)
    lo = hi = best
    used = lengths[best]
    while True:
        options = []
        if lo > 0:
            options.append((scores[lo - 1], -1))
        if hi + 1 < len(spans):
            options.append((scores[hi + 1], 1))
        options = [
            (sc, d)
            for sc, d in options
            if sc >= 0.4 * scores[best] and used + lengths[lo - 1 if d < 0 else hi + 1] <= max_words
        ]
        if not options:
            break
        _, direction = max(options)
        if direction < 0:
            lo -= 1
            used += lengths[lo]
        else:
            hi += 1
            used += lengths[hi]
    return _truncate(text[spans[lo][0] : spans[hi][1]], max_words)


def _truncate(passage: str, max_words: int) -> str:
    tokens = list(_WS_TOKEN.finditer(passage))
    if len(tokens) <= max_words:
        return passage
    return passage[: tokens[max_words - 1].end()] + "…"
