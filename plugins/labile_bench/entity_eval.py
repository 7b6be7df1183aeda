"""Precision of entity types (and recall against a pooled sample) on hand-judged mentions.

The sample (``data/entities/mentions.jsonl``) holds only ids and verdicts: the
source ("locomo" or "change"), the conversation, the turn id, a character span
in the turn's text and the judged type ("person", "animal", "organization",
"place", "thing", or "none" where the span names nothing). The text is read
from the data at run time (LoCoMo from its file, the change benchmark from
``data/change``), so the repository never holds LoCoMo text.

The sample was drawn by `draw_sample` (fixed seed): random turns, every
mention that `labile_text` or spaCy finds in them pooled by overlapping spans,
then judged by reading the turn. A system's mention *matches* a judged one
when their spans overlap. Per system:

* **type precision**: of its mentions in the sampled turns, the share that
  match a judged entity of the same type ("none" counts as wrong);
* **recall**: of the judged entities, the share it finds with the right type
  (pooled recall: an entity neither system found is not in the sample);
* **turns/s**: every sampled turn run through the recogniser once, after one
  warm-up turn, timed in this process.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from labile_bench.change import load_change
from labile_io.locomo import load_locomo
from labile_text.entities import named_entities

__all__ = [
    "LABILE_TYPES",
    "SPACY_TYPES",
    "TYPES",
    "Mention",
    "Scores",
    "draw_sample",
    "labile_recogniser",
    "load_judged",
    "load_turn_texts",
    "score",
    "spacy_recogniser",
]

#: The judged types; "none" marks a span that names nothing.
TYPES: Final = ("person", "animal", "organization", "place", "thing", "none")
#: `labile_text.entities.Entity.category` -> judged type.
LABILE_TYPES: Final = {"person": "person", "animal": "animal", "organization": "organization",
                       "place": "place", "title": "thing", "other": "thing"}
#: spaCy's OntoNotes labels -> judged type (numbers, dates and amounts are not entities here).
SPACY_TYPES: Final = {"PERSON": "person", "ORG": "organization", "GPE": "place", "LOC": "place",
                      "FAC": "place", "NORP": "thing", "PRODUCT": "thing",
                      "WORK_OF_ART": "thing", "EVENT": "thing", "LAW": "thing",
                      "LANGUAGE": "thing"}
SAMPLE: Final = Path(__file__).with_name("data") / "entities" / "mentions.jsonl"

TurnKey = tuple[str, str, str]  # (source, conversation, turn id)


@attrs.frozen
class Mention:
    """A typed span of one turn's text."""

    start: int
    end: int
    type: str

    def overlaps(self, other: Mention) -> bool:
        """Whether the two spans share a character."""
        return self.start < other.end and other.start < self.end


Recogniser = Callable[[str], list[Mention]]


def labile_recogniser(text: str) -> list[Mention]:
    """`labile_text.entities.named_entities`, types mapped to the judged ones."""
    return [Mention(e.span[0], e.span[1], LABILE_TYPES[e.category]) for e in named_entities(text)]


def spacy_recogniser(nlp: Any) -> Recogniser:
    """A recogniser from a loaded spaCy pipeline (labels outside `SPACY_TYPES` dropped)."""
    def recognise(text: str) -> list[Mention]:
        return [Mention(e.start_char, e.end_char, SPACY_TYPES[e.label_])
                for e in nlp(text).ents if e.label_ in SPACY_TYPES]
    return recognise


def load_turn_texts(locomo: str | Path | None) -> dict[TurnKey, str]:
    """Every turn's text, keyed by (source, conversation, turn id); LoCoMo only if given."""
    texts: dict[TurnKey, str] = {}
    for conv in load_change():
        for turn in conv.turns:
            texts[("change", conv.id, turn.id)] = turn.text
    if locomo is not None:
        conversations, _ = load_locomo(locomo)
        for sample in conversations:
            for session in sample.sessions:
                for t in session.turns:
                    texts[("locomo", sample.sample_id, t.id)] = t.text
    return texts


def load_judged(path: Path = SAMPLE) -> list[dict[str, Any]]:
    """The judged rows (one JSON object per line)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for row in rows:
        if row.get("type") not in TYPES:
            raise ValueError(f"{path}: judged type {row.get('type')!r} is not one of {TYPES}")
    return rows


def draw_sample(
    texts: dict[TurnKey, str], recognisers: Sequence[Recogniser], *, mentions: int,
    seed: int = 28,
) -> list[dict[str, Any]]:
    """Random turns until ``mentions`` pooled mentions: rows to judge (``type`` left empty)."""
    keys = sorted(texts)
    random.Random(seed).shuffle(keys)
    rows: list[dict[str, Any]] = []
    for key in keys:
        pooled: list[Mention] = []
        for recognise in recognisers:
            for m in recognise(texts[key]):
                hit = next((p for p in pooled if p.overlaps(m)), None)
                if hit is None:
                    pooled.append(m)
                else:  # one judged span per referent: the union of the overlapping ones
                    pooled[pooled.index(hit)] = Mention(min(hit.start, m.start),
                                                        max(hit.end, m.end), hit.type)
        for m in sorted(pooled, key=lambda p: p.start):
            rows.append({"source": key[0], "conversation": key[1], "turn": key[2],
                         "span": [m.start, m.end], "type": ""})
        if len(rows) >= mentions:
            break
    return rows


@attrs.frozen(kw_only=True)
class Scores:
    """One recogniser's figures on the judged sample."""

    found: int
    correct: int
    judged_entities: int
    recalled: int
    turns: int
    seconds: float
    confusion: dict[str, int]

    @property
    def precision(self) -> float:
        """Correctly typed mentions / mentions found, in percent."""
        return 100.0 * self.correct / self.found if self.found else 0.0

    @property
    def recall(self) -> float:
        """Judged entities found with the right type / judged entities, in percent."""
        return 100.0 * self.recalled / self.judged_entities if self.judged_entities else 0.0

    @property
    def turns_per_s(self) -> float:
        """Turns recognised per second."""
        return self.turns / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The figures, rounded, for JSON."""
        return {"found": self.found, "correct": self.correct,
                "precision": round(self.precision, 1), "judged_entities": self.judged_entities,
                "recalled": self.recalled, "recall": round(self.recall, 1),
                "turns": self.turns, "turns_per_s": round(self.turns_per_s, 1),
                "confusion": dict(sorted(self.confusion.items()))}


def score(
    rows: Iterable[dict[str, Any]], texts: dict[TurnKey, str], recognise: Recogniser
) -> Scores:
    """Score ``recognise`` on the judged ``rows`` (see the module docstring).

    Raises:
        KeyError: A judged turn is not in ``texts`` (its data was not loaded).
    """
    gold: dict[TurnKey, list[Mention]] = {}
    for row in rows:
        key = (row["source"], row["conversation"], row["turn"])
        if key not in texts:
            raise KeyError(f"judged turn {key} is not in the loaded data "
                           "(pass the LoCoMo file for 'locomo' rows)")
        gold.setdefault(key, []).append(Mention(row["span"][0], row["span"][1], row["type"]))
    turns = sorted(gold)
    recognise(texts[turns[0]])  # warm-up (lazy loading, caches)
    began = time.perf_counter()
    found = {key: recognise(texts[key]) for key in turns}
    seconds = time.perf_counter() - began
    n_found = correct = entities = recalled = 0
    confusion: Counter[str] = Counter()
    for key in turns:
        judged = gold[key]
        for m in found[key]:
            n_found += 1
            hit = next((g for g in judged if g.overlaps(m)), None)
            truth = hit.type if hit is not None else "unjudged"
            confusion[f"{truth}->{m.type}"] += 1
            correct += truth == m.type
        for g in judged:
            if g.type == "none":
                continue
            entities += 1
            recalled += any(m.overlaps(g) and m.type == g.type for m in found[key])
    return Scores(found=n_found, correct=correct, judged_entities=entities, recalled=recalled,
                  turns=len(turns), seconds=seconds, confusion=dict(confusion))
