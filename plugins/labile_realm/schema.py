"""The REALM graph schema (the paper's §3.2.1): four node kinds and fifteen predicates.

Every name is prefixed with ``realm.`` so the bundle can share a store with
others. Symmetric predicates (``contradicts``, ``correlates``,
``analogous_to``) get their reverse edge from the kernel's ``CheckedStore``.
"""

from __future__ import annotations

from typing import Final

from labile.plugin import Layer, NodeKind, Predicate

PREFIX: Final = "realm."

ENTITY: Final = "realm.entity"
EVENT: Final = "realm.event"
EPISODE: Final = "realm.episode"
FACT: Final = "realm.fact"

#: Short kind name (as the LLM prompts spell it) -> registered kind name.
KIND_BY_SHORT: Final[dict[str, str]] = {
    "entity": ENTITY,
    "event": EVENT,
    "episode": EPISODE,
    "fact": FACT,
}
SHORT_BY_KIND: Final[dict[str, str]] = {v: k for k, v in KIND_BY_SHORT.items()}

NODE_KINDS: Final[tuple[NodeKind, ...]] = (
    NodeKind(
        name=ENTITY,
        fields=("name", "aliases", "category", "role"),
        summary="a referable thing: person, place, organisation, title, object or concept",
    ),
    NodeKind(
        name=EVENT,
        fields=("name", "participants", "description", "time"),
        summary="one thing that happened or was said at a point or span of time",
    ),
    NodeKind(
        name=EPISODE,
        fields=("name", "description", "keywords", "time_range"),
        summary="a stretch of experience (a conversation session) made of events",
    ),
    NodeKind(
        name=FACT,
        fields=("statement", "keywords"),
        summary="a stable statement about someone or something",
    ),
)

# (short name, layer, symmetric, one-line meaning in our words)
_PREDICATES: Final[tuple[tuple[str, Layer, bool, str], ...]] = (
    ("contradicts", Layer.LOGICAL, True, "the two cannot both hold"),
    ("implies", Layer.LOGICAL, False, "if the source holds, the target holds"),
    ("constrains", Layer.LOGICAL, False, "the source limits how the target can be or happen"),
    ("verifies", Layer.LOGICAL, False, "the source is evidence that the target is true"),
    ("precedes", Layer.CAUSAL, False, "the source happened before the target (order only)"),
    ("enables", Layer.CAUSAL, False, "the target could not happen without the source"),
    ("triggers", Layer.CAUSAL, False, "the source directly caused the target"),
    ("results_in", Layer.CAUSAL, False, "the target is the state the source produced"),
    ("comprises", Layer.TAXONOMIC, False, "the target is a part of the source"),
    ("instantiates", Layer.TAXONOMIC, False, "the target is a concrete case of the source"),
    ("summarizes", Layer.TAXONOMIC, False, "the source is a condensed account of the target"),
    ("correlates", Layer.ASSOCIATIVE, True, "the two are closely related or very similar"),
    ("supersedes", Layer.ASSOCIATIVE, False, "the source replaces the older target"),
    ("analogous_to", Layer.ASSOCIATIVE, True, "alike in structure, different in domain"),
    ("contextualizes", Layer.ASSOCIATIVE, False, "the source gives background to the target"),
)

PREDICATES: Final[tuple[Predicate, ...]] = tuple(
    Predicate(name=PREFIX + short, layer=layer, symmetric=sym, summary=summary)
    for short, layer, sym, summary in _PREDICATES
)
PREDICATE_BY_NAME: Final[dict[str, Predicate]] = {p.name: p for p in PREDICATES}
#: Short predicate name -> registered name ("precedes" -> "realm.precedes").
PREDICATE_BY_SHORT: Final[dict[str, str]] = {p[0]: PREFIX + p[0] for p in _PREDICATES}
SHORT_BY_PREDICATE: Final[dict[str, str]] = {v: k for k, v in PREDICATE_BY_SHORT.items()}
#: Layer name -> registered predicate names of that layer.
PREDICATES_BY_LAYER: Final[dict[str, tuple[str, ...]]] = {
    layer.value: tuple(p.name for p in PREDICATES if p.layer == layer)
    for layer in (Layer.LOGICAL, Layer.CAUSAL, Layer.TAXONOMIC, Layer.ASSOCIATIVE)
}

CONTRADICTS: Final = "realm.contradicts"
PRECEDES: Final = "realm.precedes"
COMPRISES: Final = "realm.comprises"
CORRELATES: Final = "realm.correlates"
SUPERSEDES: Final = "realm.supersedes"
CONTEXTUALIZES: Final = "realm.contextualizes"
VERIFIES: Final = "realm.verifies"
IMPLIES: Final = "realm.implies"
CONSTRAINS: Final = "realm.constrains"
ENABLES: Final = "realm.enables"
TRIGGERS: Final = "realm.triggers"
RESULTS_IN: Final = "realm.results_in"
INSTANTIATES: Final = "realm.instantiates"
SUMMARIZES: Final = "realm.summarizes"
ANALOGOUS_TO: Final = "realm.analogous_to"


def predicate_name(name: str) -> str | None:
    """The registered predicate for a short or full name, or ``None`` if unknown.

    Args:
        name: ``"precedes"`` or ``"realm.precedes"`` (case and spaces ignored).

    Returns:
        The registered name, or ``None`` when it names no REALM predicate.
    """
    key = name.strip().lower().replace(" ", "_").replace("-", "_")
    if key in PREDICATE_BY_NAME:
        return key
    return PREDICATE_BY_SHORT.get(key)


def kind_name(name: str) -> str | None:
    """The registered node kind for a short or full name, or ``None`` if unknown."""
    key = name.strip().lower()
    if key in SHORT_BY_KIND:
        return key
    return KIND_BY_SHORT.get(key)


def layer_of(predicate: str) -> str | None:
    """The layer name of a registered REALM predicate, or ``None``."""
    pred = PREDICATE_BY_NAME.get(predicate)
    return pred.layer.value if pred is not None else None


def is_symmetric(predicate: str) -> bool:
    """Whether ``predicate`` is one of the symmetric REALM predicates."""
    pred = PREDICATE_BY_NAME.get(predicate)
    return bool(pred and pred.symmetric)


def predicate_table() -> str:
    """The predicates as prompt text: ``layer: name (meaning)`` lines, short names."""
    lines = []
    for short, layer, sym, summary in _PREDICATES:
        note = ", symmetric" if sym else ""
        lines.append(f"- {layer.value}/{short}: {summary}{note}")
    return "\n".join(lines)

#: Speakers that are the agent itself (a chat log's roles for the model's turns): its
#: advice, plans it drafts and the user's words said back tell nothing of what holds.
AGENT_ROLES: Final = frozenset({"assistant", "ai", "bot", "model", "system"})


def is_agent(speaker: object) -> bool:
    """Whether ``speaker`` (a node's ``attrs["speaker"]``) is the agent itself."""
    return str(speaker or "").strip().lower() in AGENT_ROLES
