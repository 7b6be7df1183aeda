"""How two memory units relate: duplicate, restatement, or a later revision.

The offline diagnoser (`labile_allmem.consolidate.diagnose`) asks these rules
about pairs from one neighbourhood. They read only what any evidence-carrying
node has: its text (``content``), its caption, its speaker, its time, and an
embedding of its evidence, so they are not tied to All-Mem's node kind.

A `UnitProfile` holds the lexical facts of one unit, computed once per run:
its terms, topic terms (keyphrases), numbers, negation, change-of-state cues,
resolved time spans, and, per sentence, its role (statement / social /
question) and stance (plan / report).

Scores returned here are *raw evidence strengths* in [0, 1]; the diagnoser
turns them into calibrated confidences (`labile_allmem.consolidate.calibration`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

import attrs

from labile.plugin import Node
from labile_allmem.lexical import change_cues, jaccard, negated, numbers, term_set
from labile_text.entities import is_filler
from labile_text.keywords import keyphrases
from labile_text.sentences import split_sentences
from labile_text.statements import sentence_role, speaks_of_self, stance, states_fact
from labile_text.timeparse import resolve_time_expressions

__all__ = [
    "PairSignals",
    "UnitProfile",
    "disjoint_times",
    "phatic_act",
    "profile",
    "restatement",
    "revision",
]

#: The kind of an Update whose report is dated inside the window of the plan it realises.
DATED_PLAN_REALISED = "dated plan realised"

#: Change cues that are common in talk without any change of state ("try it now").
WEAK_CUES = frozenset({"now", "these days"})

_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
# Calendar words name when, not what: sharing one does not make a subject.
_TIME_TERMS = term_set(
    "day days week weeks weekend month months year years summer winter spring fall autumn "
    "morning evening night today tomorrow yesterday time"
)


@attrs.frozen
class Sentence:
    """One sentence of a unit's evidence with what it does."""

    text: str
    role: str
    stance: str
    fact: bool
    own: bool
    terms: frozenset[str]
    times: tuple[tuple[datetime, datetime], ...]


@attrs.frozen
class UnitProfile:
    """The lexical facts of one unit the offline rules look at."""

    speaker: str
    session: str
    terms: frozenset[str]
    topic: frozenset[str]
    heads: frozenset[str]
    numbers: frozenset[str]
    negated: bool
    cues: tuple[str, ...]
    filler: bool
    asks_only: bool
    times: tuple[tuple[datetime, datetime], ...]
    sentences: tuple[Sentence, ...]
    act: str = ""

    @property
    def own(self) -> tuple[Sentence, ...]:
        """The statements the speaker makes about themselves (first person)."""
        return tuple(s for s in self.sentences if s.own)

    @property
    def own_terms(self) -> frozenset[str]:
        """The content terms of the speaker's statements about themselves."""
        return frozenset(t for s in self.own for t in s.terms)

    @property
    def facts(self) -> tuple[Sentence, ...]:
        """The sentences that state a fact (`labile_text.statements.states_fact`)."""
        return tuple(s for s in self.sentences if s.fact)


def evidence_text(node: Node) -> str:
    """The node's evidence with its caption, if any (what is compared)."""
    caption = node.attrs.get("caption")
    return f"{node.content}\n{caption}" if caption else node.content


def profile(node: Node) -> UnitProfile:
    """Compute the profile of ``node`` (its time anchors relative time words)."""
    text = node.content
    anchor = node.time_start or _EPOCH
    phrases = keyphrases(text, k=8)
    sentences = []
    for a, b in split_sentences(text):
        sent = text[a:b]
        sentences.append(Sentence(
            text=sent, role=sentence_role(sent), stance=stance(sent), fact=states_fact(sent),
            own=sentence_role(sent) == "statement" and speaks_of_self(sent), terms=term_set(sent),
            # an undecided bare date ("Japan in May!") gives both of its readings
            times=tuple(r for m in resolve_time_expressions(sent, anchor) for r in m.readings),
        ))
    return UnitProfile(
        speaker=str(node.attrs.get("speaker", "")),
        session=str(node.attrs.get("session", "")),
        terms=term_set(evidence_text(node)),
        topic=term_set(*phrases),
        heads=term_set(*(p.split()[-1] for p in phrases if p.split())),
        numbers=numbers(text),
        negated=negated(text),
        cues=tuple(change_cues(text)),
        filler=is_filler(text),
        asks_only=not any(s.role != "question" and s.terms for s in sentences),
        times=tuple(t for s in sentences for t in s.times),
        sentences=tuple(sentences),
        act=phatic_act(text, tuple((s.text, s.role) for s in sentences)),
    )


# How a conversation is opened or closed. A greeting opens the turn; a
# farewell may come anywhere in it ("Thanks, Mel! Bye!").
_GREETING: Final = re.compile(
    r"\s*(?:hey+|hi+|hello|hiya|howdy|yo|good\s+(?:morning|afternoon|evening))\b", re.IGNORECASE)
_FAREWELL: Final = re.compile(
    r"\b(?:bye|goodbye|take\s+care|see\s+(?:you|ya)\s+(?:later|soon|then|around|next|tomorrow)|"
    r"talk\s+(?:to\s+you\s+)?(?:soon|later)|"
    r"catch\s+(?:you|ya)\s+later|good\s*night|until\s+next\s+time|ttyl)\b", re.IGNORECASE)

# The listener's own affairs: a wish or thanks about something of theirs.
_LISTENERS_AFFAIRS: Final = re.compile(r"\b(?:your|yours|congrat\w*)\b", re.IGNORECASE)


def phatic_act(text: str, sentences: tuple[tuple[str, str], ...]) -> str:
    """The conversational ritual a turn performs, if that is all it does.

    ``"greeting"`` (it opens with "Hey", "Hi", "Hello" …) or ``"farewell"``
    ("Bye", "Take care", "See you" …) when no sentence of it is a statement
    (`labile_text.statements.sentence_role`: every sentence is small talk, a
    reaction or a question), none speaks of the listener's affairs outside a
    question ("Hope your injury is better", "Your support means a lot",
    "Congrats on …" refer to something said elsewhere), and it performs
    exactly one of the two; ``""`` otherwise. Two turns of one speaker
    performing the same ritual say the same thing: a turn that also tells
    something ("Hi! I got the job.") is not a ritual, and neither is one
    that greets and takes leave at once.

    Args:
        text: The turn.
        sentences: Each of its sentences with its role.
    """
    if not sentences or any(role == "statement" for _, role in sentences):
        return ""
    if any(role != "question" and _LISTENERS_AFFAIRS.search(sent) is not None
           for sent, role in sentences):
        return ""
    greets, leaves = _GREETING.match(text) is not None, _FAREWELL.search(text) is not None
    if greets == leaves:
        return ""
    return "greeting" if greets else "farewell"


def disjoint_times(a: tuple[tuple[datetime, datetime], ...],
                   b: tuple[tuple[datetime, datetime], ...]) -> bool:
    """Both sides date what they say, and no two of their time spans overlap."""
    if not a or not b:
        return False
    return not any(s1 < e2 and s2 < e1 for s1, e1 in a for s2, e2 in b)


@attrs.frozen
class PairSignals:
    """The signals one rule found for a pair, and their raw strength."""

    strength: float
    why: str
    kind: str = ""


def restatement(a: UnitProfile, b: UnitProfile, cos: float,
                generic: frozenset[str] = frozenset()) -> PairSignals | None:
    """Whether two units of one speaker state the same thing (a Merge candidate).

    Both must say something about the speaker (a first-person statement
    each: compliments and reactions to the listener do not count), use the same
    numbers and polarity, not date what they say on disjoint days, and share
    their subject: a Jaccard of at least 0.2 between the terms of their
    first-person statements, and two shared topic terms or one that is not
    ``generic`` (common across the namespace). A plan in one and the report
    of it in the other make a revision, not a restatement. ``cos`` is the
    cosine of their evidence embeddings. The strength grows with the cosine
    and with the overlap of those statements' terms.

    Returns:
        The signals, or ``None`` when the pair is not a restatement.
    """
    if a.speaker != b.speaker or not a.own or not b.own:
        return None
    if a.numbers != b.numbers or a.negated != b.negated:
        return None
    if disjoint_times(a.times, b.times):
        return None
    for sa_ in a.own:
        for sb_ in b.own:
            if {sa_.stance, sb_.stance} == {"plan", "report"} and (sa_.terms & sb_.terms) - generic:
                return None  # a plan and the report of it: a revision, not a restatement
    sa, sb = a.own_terms, b.own_terms
    overlap = jaccard(sa, sb) if sa and sb else 0.0
    shared = a.topic & b.topic
    shared_topic = len(shared)
    if overlap < 0.2 or not (shared_topic >= 2 or shared - generic):
        return None
    strength = (0.5 * max(0.0, cos) + 0.3 * min(1.0, overlap / 0.5)
                + 0.2 * min(1.0, shared_topic / 3))
    return PairSignals(strength=strength, kind="restatement",
                       why=f"restatement: cos {cos:.2f}, overlap {overlap:.2f}, "
                           f"{shared_topic} shared topic terms")


def revision(newer: UnitProfile, older: UnitProfile, cos: float,
             generic: frozenset[str] = frozenset()) -> PairSignals | None:
    """Whether ``newer`` revises what ``older`` (same speaker) said (an Update candidate).

    The two must come from different sessions and share their subject: a
    fact sentence of each sharing a term that is not ``generic`` (common
    across the namespace) and is the head of a key phrase of either unit
    ("conference" in "transgender conference", not "transgender"). Then one
    of these changes must show:

    * **plan realised**: the older sentence is a plan, the newer one reports
      something done on the same subject (not a habit, not negated: "I won't
      quit" is a resolve, not a report) ("I'm going to a conference this
      month" → "I went to a conference two days ago"); when both sentences
      are dated, the report must fall inside the plan's window (the
      *dated plan realised* kind): a trip done outside it is another trip;
    * **moved date**: both are plans on the same subject dated on disjoint days;
    * **stated change**: the newer statement has a strong change-of-state cue
      the older unit lacks ("no longer", "switched to", "moved to" …);
    * **new value**: both state numbers and they differ.

    Returns:
        The signals (strength from the cosine, the subject overlap and the
        kind of change), or ``None``.
    """
    if newer.speaker != older.speaker or newer.asks_only or older.asks_only:
        return None
    if newer.filler or older.filler or newer.session == older.session:
        return None
    best: tuple[float, str, str] | None = None
    new_cues = [c for c in newer.cues if c not in older.cues and c not in WEAK_CUES]
    for sn in newer.facts:
        for so in older.facts:
            shared = (sn.terms & so.terms) - generic - _TIME_TERMS
            if not shared & (newer.heads | older.heads):
                continue  # they must share what a key phrase is about, not a modifier
            subject = min(1.0, len(shared) / 2)
            if so.stance == "plan" and sn.stance == "report" and not negated(sn.text):
                # "I won't quit" reports nothing done: a negated report is a resolve.
                if disjoint_times(sn.times, so.times):
                    continue  # done outside the planned window: another occasion
                if sn.times and so.times:
                    # The report is dated within the plan's window ("next month"
                    # → "last week", a month later): the plan, carried out.
                    kind, base = DATED_PLAN_REALISED, 0.6
                else:
                    kind, base = "plan realised", 0.55
            elif so.stance == "plan" and sn.stance == "plan" and disjoint_times(sn.times, so.times):
                kind, base = "moved date", 0.6
            elif new_cues and set(change_cues(sn.text)) & set(new_cues):
                kind, base = "stated change", 0.5
            elif newer.numbers and older.numbers and newer.numbers != older.numbers:
                kind, base = "new value", 0.35
            else:
                continue
            strength = base + 0.25 * max(0.0, cos) + 0.2 * subject
            if best is None or strength > best[0]:
                cues = f" ({', '.join(new_cues)})" if kind == "stated change" else ""
                best = (strength, f"{kind}{cues}: shared {', '.join(sorted(shared)[:3])}, "
                                  f"cos {cos:.2f}", kind)
    if best is None:
        return None
    return PairSignals(strength=min(1.0, best[0]), why=best[1], kind=best[2])
