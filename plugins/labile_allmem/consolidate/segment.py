"""Topic segmentation of one unit's evidence at sentence boundaries (offline Split).

The evidence is cut into sentences (`labile_text.sentences.split_sentences`,
grounded spans), and adjacent blocks are merged back together while they look
like one topic:

1. a sentence that opens with a continuation word ("it", "that", "so", "and" …)
   or a pronoun joins the block before it: it talks about what came before;
2. a block that states nothing on its own joins its more similar neighbour:
   fewer than ``min_segment_words`` content words, or no sentence that
   states a fact (`labile_text.statements.states_fact`): only opinions, small talk
   ("Thanks!", "Wow, great!"), reactions to the listener ("You're so
   inspiring!") or questions (a question to the other speaker is not evidence
   of a fact, and as a unit of its own it would outrank the answer);
3. the two adjacent blocks with the highest similarity are merged, repeatedly,
   while that similarity reaches ``similarity``; the similarity of two blocks is
   the larger of the cosine of their mean sentence embeddings and the Jaccard
   overlap of their content terms (a shared name or object keeps them together).

What is left are the segments; each is ``text[start:end]`` of its first and
last sentence, so it is an exact substring of the evidence. The confidence that
the unit is conflated is ``1 - max similarity between adjacent segments``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import attrs
import numpy as np
from numpy.typing import NDArray

from labile.text.tokenize import content_words, words
from labile_allmem.lexical import jaccard, term_set, wordset
from labile_text.entities import is_filler
from labile_text.sentences import split_sentences
from labile_text.statements import states_fact

# First words that tie a sentence to the one before it.
_CONTINUATIONS: Final = wordset(
    """
    it its it's itll that thats this these those they them their theyre he she his her him
    so and but or because also too then which who there theres such both either neither
    anyway plus though although however still yet besides afterwards after later even
    """
)


@attrs.frozen(kw_only=True)
class Segmentation:
    """The result of segmenting one text.

    Attributes:
        spans: ``(start, end)`` of each segment in the text, in order.
        max_similarity: The highest similarity between adjacent segments (1.0 if one segment).
        sentences: How many sentences the text has.
        marked: Every boundary opens with an explicit change of topic
            ("On another note", "Speaking of which" …).
    """

    spans: tuple[tuple[int, int], ...]
    max_similarity: float
    sentences: int
    marked: bool = False

    def segments(self, text: str) -> tuple[str, ...]:
        """The segment texts (exact substrings of ``text``)."""
        return tuple(text[s:e] for s, e in self.spans)

    @property
    def confidence(self) -> float:
        """How sure the text is conflated (0 if one segment): 1 - max adjacent
        similarity, raised to at least `MARKED_STRENGTH` when every boundary is
        an explicit change of topic (the speaker says the subject changes)."""
        if len(self.spans) < 2:
            return 0.0
        raw = float(min(1.0, max(0.0, 1.0 - self.max_similarity)))
        return max(raw, MARKED_STRENGTH) if self.marked else raw


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentence spans of ``text`` (grounded)."""
    return split_sentences(text)


def segment(  # noqa: C901
    text: str,
    spans: Sequence[tuple[int, int]],
    vectors: NDArray[np.float32],
    *,
    similarity: float,
    min_segment_words: int,
) -> Segmentation:
    """Segment ``text`` given its sentence spans and their unit-length embeddings.

    Args:
        text: The evidence.
        spans: Its sentence spans (`sentence_spans`).
        vectors: One unit-length row per span.
        similarity: Adjacent blocks at least this similar stay together.
        min_segment_words: Blocks with fewer content words join a neighbour.

    Returns:
        The segmentation.
    """
    n = len(spans)
    if n < 2:
        return Segmentation(spans=tuple(spans), max_similarity=1.0, sentences=n)
    sents = [text[s:e] for s, e in spans]
    blocks: list[list[int]] = [[0]]
    shifts: set[int] = set()
    for i in range(1, n):
        # An explicit change of topic ("On another note, …", "Speaking of
        # which, …") starts a block whatever else the sentence says.
        if _SHIFT.match(sents[i]) is not None:
            blocks.append([i])
            shifts.add(i)
        # After an announcement ("By the way, I had a setback.", "I had a bad
        # experience on a hike."), the next sentence tells what it was about.
        elif _continues(sents[i]) or _announces(sents[i - 1]):
            blocks[-1].append(i)
        else:
            blocks.append([i])

    def weak(block: list[int]) -> bool:
        # Too short, or no statement (only questions, small talk, compliments):
        # it states nothing on its own, so it is not a fact of its own.
        text = " ".join(sents[i] for i in block)
        return (
            sum(len(content_words(sents[i])) for i in block) < min_segment_words
            or not any(states_fact(sents[i]) for i in block)
            or is_filler(text)
        )

    def vec(block: list[int]) -> NDArray[np.float32]:
        v = np.asarray(vectors[block].mean(axis=0), dtype=np.float32)
        norm = float(np.linalg.norm(v))
        return v / np.float32(norm) if norm > 0 else v

    def sim(a: list[int], b: list[int]) -> float:
        cos = float(vec(a) @ vec(b))
        ta, tb = term_set(*(sents[i] for i in a)), term_set(*(sents[i] for i in b))
        lex = jaccard(ta, tb) if ta and tb else 0.0
        return max(cos, lex)

    # Small blocks join their more similar neighbour.
    changed = True
    while changed and len(blocks) > 1:
        changed = False
        for j, block in enumerate(blocks):
            if not weak(block):
                continue
            if j == 0:
                k = 1
            elif j == len(blocks) - 1:
                k = j - 1
            else:
                k = j - 1 if sim(blocks[j - 1], block) >= sim(block, blocks[j + 1]) else j + 1
            lo, hi = min(j, k), max(j, k)
            blocks[lo:hi + 1] = [blocks[lo] + blocks[hi]]
            changed = True
            break

    # Agglomerate the most similar adjacent pair while it is similar enough.
    while len(blocks) > 1:
        sims = [sim(blocks[j], blocks[j + 1]) for j in range(len(blocks) - 1)]
        best = max(range(len(sims)), key=lambda j: (sims[j], -j))
        if sims[best] < similarity:
            break
        blocks[best:best + 2] = [blocks[best] + blocks[best + 1]]
    if len(blocks) < 2:
        return Segmentation(spans=((spans[0][0], spans[-1][1]),), max_similarity=1.0,
                            sentences=n)
    max_sim = max(sim(blocks[j], blocks[j + 1]) for j in range(len(blocks) - 1))
    out = tuple((spans[b[0]][0], spans[b[-1]][1]) for b in blocks)
    marked = all(b[0] in shifts for b in blocks[1:])
    return Segmentation(spans=out, max_similarity=max_sim, sentences=n, marked=marked)


def _continues(sentence: str) -> bool:
    """Whether a sentence is tied to the previous one.

    It opens with a continuation word, refers back within its first four
    words ("I missed it but …", "We love it"), adds to what was said ("I
    even bought a copy", "… is important too"), or ends on what was just
    said ("… made so much money from it"): each points at the sentence
    before it.
    """
    toks = words(sentence)
    if not toks:
        return False
    return (toks[0] in _CONTINUATIONS or any(t in _BACK_REFERENCES for t in toks[1:4])
            or any(t in _ADDITIVES for t in toks) or _OBJECT_BACK.search(sentence) is not None)


def _announces(sentence: str) -> bool:
    """Whether a sentence announces what the next one tells.

    It opens with a change-of-topic marker ("By the way, …", "Guess what"),
    it names an occurrence without saying what it was ("I had a bad
    experience", "some news", "a setback", "so much has happened", "last
    week was wild"), or it talks about the talk ("since we last chatted").
    """
    return _SHIFT.match(sentence) is not None or _ANNOUNCEMENT.search(sentence) is not None


_SHIFT: Final = re.compile(
    r"\s*(?:by\s+the\s+way|btw|anyway|oh,?\s+and|speaking\s+of|on\s+(?:an)?other\s+note|"
    r"on\s+a\s+different\s+note|in\s+other\s+news|guess\s+what)\b", re.IGNORECASE,
)
_ANNOUNCEMENT: Final = re.compile(
    r"\b(?:a|an|some)\s+(?:[\w'-]+\s+){0,3}?(?:experience|setback|news|story|incident|"
    r"situation|surprise|update)\b"
    # A teaser: "So much has happened", "Something cool happened to me", "Crazy
    # thing happened since we last talked", "Last week was wild".
    r"|\b(?:so\s+much|a\s+lot|lots|something|\w+\s+thing)\s+(?:[\w'-]+\s+){0,2}?happen"
    r"|\b(?:week|weekend|month|day|time)\s+(?:has\s+been|was|'s\s+been)\s+"
    r"(?:\w+\s+)?(?:wild|crazy|eye-opening|intense|hectic|insane)\b"
    # Talk about the talk itself: "It's been ages since we last chatted."
    r"|\bsince\s+we\s+(?:last\s+)?(?:talked|chatted|spoke)\b",
    re.IGNORECASE,
)

# Pronouns that point back at what was said before.
_BACK_REFERENCES: Final = wordset("it that this them those these there")
# Adverbs that add to what was just said.
_ADDITIVES: Final = wordset("too also even either")
# A pronoun object after a preposition or a verb at the end of the sentence.
_OBJECT_BACK: Final = re.compile(
    r"\b(?:from|of|about|with|for|on|in|at|to|try|do|did|love|like)\s+(?:it|them|that|this)"
    r"(?:\s+(?:out|up|too|again))?\s*[.!?]*\s*$", re.IGNORECASE,
)

#: Raw strength of a segmentation whose every boundary is an explicit topic change.
MARKED_STRENGTH: Final = 0.9
