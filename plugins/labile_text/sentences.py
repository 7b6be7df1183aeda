"""Grounded sentence splitting.

Sentences are returned as character spans into the original text rather than as
copies, so every downstream unit (a REALM fact, an All-Mem split segment, a
summary) can be traced back to the exact characters it came from.
"""

from __future__ import annotations

import re

from labile.text.tokenize import wordset

__all__ = ["split_sentences"]


# Line breaks always end a sentence: chat messages use them as separators.
_LINE_BREAK = re.compile(r"\r\n|[\n\r\u2028\u2029\x0b\x0c\x1c\x1d\x1e\x85]")
# A run of terminators, then any closing quotes/brackets that belong to it.
_TERMINATOR = re.compile(r"""[.!?…‽]+['"”’»)\]}]*""")
# Emoticons and emoji runs can close a chat sentence on their own ("so fun :) See").
_EMOJI_CHARS = (
    "\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\u3030\u303d\ufe0f\u200d"
)
_EMO = re.compile(
    r"(?<!\S)(?:[:;=][-'^o]?[()\[\]DPpOo3/\\|*]+|<3+|[xX]D+|\^_*\^|T_T)(?!\S)"
    rf"|[{_EMOJI_CHARS}]+"
)
# Abbreviations after which a period never ends a sentence.
_NEVER_END = wordset(
    "mr mrs ms dr prof st sr jr rev gen capt lt col sgt mt vs e.g i.e cf viz approx fig"
)
# Abbreviations that end a sentence only when a capitalised word follows.
_MAY_END = wordset("etc a.m p.m u.s u.k inc ltd co corp dept est")
_DOTTED_ACRONYM = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")
# The first word at or after a position (``\s`` is what ``str.isspace`` holds).
_NEXT_WORD = re.compile(r"\s*(\S+)")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Split text into sentences given as ``(start, end)`` character spans.

    Contract:
        * ``text[start:end]`` is the sentence exactly as it appears in ``text``;
        * spans are in order, non-overlapping, non-empty and carry no leading or
          trailing whitespace;
        * line breaks always separate sentences; inside a line a sentence ends
          after a run of ``. ! ? …`` (plus closing quotes/brackets) followed by
          whitespace, except after known abbreviations ("Dr.", "e.g."),
          initials ("J. K.", "J.K."), decimals ("3.5") and an ellipsis followed by a
          lower-case word; an emoticon/emoji run followed by a capitalised word
          also ends a sentence;
        * pieces without any letter or digit (emoji-only tails, stray
          punctuation) are merged into the neighbouring sentence on the same line;
        * text without a terminator is one span; blank text gives ``[]``.

    Args:
        text: Arbitrary text.

    Returns:
        The sentence spans.
    """
    spans: list[tuple[int, int]] = []
    line_start = 0
    for brk in _LINE_BREAK.finditer(text):
        spans.extend(_split_line(text, line_start, brk.start()))
        line_start = brk.end()
    spans.extend(_split_line(text, line_start, len(text)))
    return spans


def _split_line(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Split ``text[lo:hi]`` (one line) into trimmed sentence spans."""
    line = text[lo:hi]
    cuts = sorted({m.end() for m in _TERMINATOR.finditer(line) if _ends_sentence(line, m)})
    cuts_emo = [m.end() for m in _EMO.finditer(line) if _emo_ends_sentence(line, m.end())]
    bounds = sorted(set(cuts) | set(cuts_emo))
    pieces: list[tuple[int, int]] = []
    prev = 0
    for cut in [*bounds, len(line)]:
        span = _trim(line, prev, cut)
        if span is not None:
            pieces.append(span)
        prev = cut
    merged = _merge_contentless(line, pieces)
    return [(lo + s, lo + e) for s, e in merged]


def _trim(line: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and line[start].isspace():
        start += 1
    while end > start and line[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _has_content(piece: str) -> bool:
    return any(ch.isalnum() for ch in piece)


def _merge_contentless(line: str, pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Attach pieces with no letters/digits to the previous (else next) piece."""
    out: list[tuple[int, int]] = []
    pending_start: int | None = None  # contentless prefix waiting for a sentence
    for s, e in pieces:
        if _has_content(line[s:e]):
            out.append((pending_start if pending_start is not None else s, e))
            pending_start = None
        elif out:
            out[-1] = (out[-1][0], e)
        elif pending_start is None:
            pending_start = s
    if pending_start is not None:
        # The whole line is content-free ("!!!", "😊 😊"): keep it as one sentence.
        end = pieces[-1][1]
        out.append((pending_start, end))
    return out


def _next_word(line: str, pos: int) -> str:
    # Matched in place: slicing the rest of the line at every terminator made
    # splitting quadratic in the line's length.
    match = _NEXT_WORD.match(line, pos)
    return match.group(1) if match else ""


def _starts_upper(word: str) -> bool:
    word = word.lstrip("\"'“‘([{«")
    return bool(word) and word[0].isupper()


def _starts_lower(word: str) -> bool:
    word = word.lstrip("\"'“‘([{«")
    return bool(word) and word[0].islower()


def _ends_sentence(line: str, m: re.Match[str]) -> bool:  # noqa: PLR0911
    """Decide whether the terminator run ``m`` closes a sentence."""
    end = m.end()
    if end < len(line) and not line[end].isspace():
        return False  # "3.5", "example.com", "e.g.," ... are inside a sentence
    if end == len(line):
        return True
    punct = m.group(0).rstrip("'\"”’»)]}")
    following = _next_word(line, end)
    if ("…" in punct or ".." in punct) and _starts_lower(following):
        return False  # "I was thinking... maybe" continues the sentence
    if punct != ".":
        return True
    # A single period: check the token it closes for an abbreviation or initial.
    tok_start = m.start()
    while tok_start > 0 and not line[tok_start - 1].isspace():
        tok_start -= 1
    token = line[tok_start : m.start()].lstrip("\"'“‘([{«")
    low = token.lower()
    if low in _NEVER_END:
        return False
    if low in _MAY_END:
        return _starts_upper(following)  # "in the U.S. Then" but "7 a.m. and"
    if (len(token) == 1 and token.isupper() and token != "I") or (
        _DOTTED_ACRONYM.fullmatch(token) and token.isupper()
    ):
        return False  # initials: "J. K. Rowling", "J.K. Rowling"
    if _DOTTED_ACRONYM.fullmatch(token):
        return _starts_upper(following)
    return True


def _emo_ends_sentence(line: str, end: int) -> bool:
    """An emoticon/emoji run ends a sentence when a capitalised word follows it."""
    if end >= len(line) or not line[end].isspace():
        return False
    return _starts_upper(_next_word(line, end))
