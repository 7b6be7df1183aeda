"""Clause units: the cause and the effect a turn states, as events linked by a causal edge.

A turn is one event, but the causal layer links *two* things: what happened
and what it led to. When a speaker states the link explicitly ("the support
group made me feel accepted", "it bugged me, so I tried to apologize"),
`labile_text.discourse.causal_links` returns both sides; each becomes a small
event node (``attrs["clause_of"]`` names the turn's event) rewritten about the
speaker, the turn's event ``comprises`` both, and the cause links to the
effect with the predicate the marker states (``triggers``, ``results_in``,
``enables``, ``constrains``). Clause nodes take no other structural edge and
no embedding: the turn's event stays the unit of the conversation's order,
mentions and search. Measured on two LoCoMo conversations, embedded clause
nodes took about one of the top-5 slots per question from other turns and cost
2 points of N@5.
"""

from __future__ import annotations

from typing import Final

from labile.plugin import Observation
from labile_realm.construct.facts import third_person
from labile_realm.construct.units import Unit, UnitLink
from labile_realm.schema import COMPRISES, EVENT, PREFIX
from labile_text.discourse import CausalLink, causal_links

#: Confidence of each stated relation: an explicit enabling or limiting verb
#: names the relation more surely than "so" or an anaphoric "it made me".
_WEIGHT: Final[dict[str, float]] = {
    "triggers": 0.7, "results_in": 0.7, "enables": 0.75, "constrains": 0.7,
}
#: How each relation reads in an edge description.
_READS: Final[dict[str, str]] = {
    "triggers": "led to",
    "results_in": "left {who} with",
    "enables": "made possible",
    "constrains": "limited",
}
_MAX_LINKS: Final = 3


def _text(clause: str, speaker: str) -> str:
    out = third_person(clause, speaker)
    return out[:1].upper() + out[1:]


def clause_units(
    obs: Observation, event: Unit, sentences: list[str], when: str
) -> list[Unit]:
    """Cause and effect units for the causal links stated in ``sentences``.

    Contract: returns two units per link (at most three links per turn), each
    with ``sources`` = the observation and ``attrs["clause_of"]`` = the event's
    key; ``event.links`` gains a ``comprises`` link to each, and each cause unit
    links to its effect. Nothing is returned for a turn without a speaker.

    Args:
        obs: The observation.
        event: The turn's event unit (its ``links`` are extended).
        sentences: The turn's statement sentences, in order.
        when: The turn's date as text.

    Returns:
        The clause units, cause before effect.
    """
    speaker = obs.speaker
    if not speaker:
        return []
    units: list[Unit] = []
    event_links = list(event.links)
    for i, link in enumerate(causal_links(sentences)[:_MAX_LINKS]):
        cause = _clause(obs, event, speaker, when, link, i, "cause")
        effect = _clause(obs, event, speaker, when, link, i, "effect")
        reads = _READS[link.relation].format(who=speaker)
        cause.links = (UnitLink(
            predicate=PREFIX + link.relation, target=effect.key,
            description=f"{speaker}: {cause.content} — {reads} — {effect.content}",
            weight=_WEIGHT[link.relation],
        ),)
        for part in (cause, effect):
            event_links.append(UnitLink(
                predicate=COMPRISES, target=part.key,
                description=f"what {speaker} said includes the {part.attrs['role']}: "
                            f"{part.content}",
                # Low: the clause adds no turn the event does not already give,
                # so expansion should spend its budget elsewhere first.
                weight=0.3,
            ))
        units += [cause, effect]
    event.links = tuple(event_links)
    return units


def _clause(
    obs: Observation, event: Unit, speaker: str, when: str, link: CausalLink, index: int,
    role: str,
) -> Unit:
    raw = link.cause if role == "cause" else link.effect
    text = _text(raw, speaker)
    return Unit(
        kind=EVENT, key=f"clause|{obs.id}|{index}|{role}", name=text[:60], content=text,
        description=f"On {when}, {speaker} ({role}): {text}",
        keywords=(), time_start=event.time_start, time_end=event.time_end,
        sources=(obs.id,), searchable=False,
        attrs={"name": text[:60], "clause_of": event.key, "role": role,
               "relation": link.relation, "marker": link.marker, "speaker": speaker,
               "session": obs.session, "said_at": obs.timestamp.isoformat(),
               "participants": [speaker], "description": text,
               "time": event.attrs.get("time")},
    )
