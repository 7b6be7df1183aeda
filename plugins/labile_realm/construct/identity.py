"""One entity node per referent: when two mentions are the same thing, and how a merge is undone.

An entity mention carries a category and the cue that gave it
(`labile_text.entities.Entity.cue`). A cue-less "person" (a capitalised name
and nothing else) or a category read off a preposition ("at X" -> place) is a
*guess*; every other cue — the name's own words ("Acme Health"), the words
around it ("my dog Biscuit", "works at Globex"), a self-introduction — is
*evidence*. The rules:

* **same referent**: the same normalised name or short form
  (`labile_text.entities.name_keys`: case, possessive, "Dr. Lee" / "Lee"),
  unless both sides have evidence for different categories ("Jordan" the
  person and "Jordan" the country stay two nodes, the second keyed
  ``"jordan|place"``);
* **type upgrade**: a node takes the category of a mention typed by a
  stronger cue (none < a preposition < evidence): "Biscuit", then "my dog
  Biscuit" makes the node an animal, "Osaka", then "from Osaka" a place;
* **speaker and name**: a speaker's self-introduction ("Hi, I'm Elena" said as
  ``user``) makes the name an alias of the speaker's node, and a speaker that
  ingestion named (``metadata["role"] == "user"``, speaker "Elena") takes the
  role as an alias; a node made before under the other name is not rewritten,
  the speaker's node lists it in ``same_as``, and the index sends both names
  to the speaker's node from then on.

Merges are non-destructive: content never changes, and every identity merge
(one that adds an alias or a ``same_as``) is logged in the node's
``attrs["merges"]`` with the alias, the node it absorbed, the sources it added
and its reason, so `undo_merge` can take it back and no node id stops resolving.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from labile.plugin import Node
from labile_realm.construct.entity_keys import entity_type, typed_key
from labile_text.entities import GUESS_CUES, normalize_name
from labile_text.entity_vocab import HONORIFICS

if TYPE_CHECKING:
    from labile_realm.construct.units import ConversationState, Unit

__all__ = [
    "INTRODUCTION",
    "ROLE_NAMED",
    "adopt_type",
    "entity_type",
    "has_evidence",
    "settle_identity",
    "titles_clash",
    "typed_key",
    "types_conflict",
    "undo_merge",
]

#: The reason logged for an alias a speaker gave themself ("Hi, I'm Elena").
INTRODUCTION = "self-introduction by the speaker"
#: The reason logged for the chat role a named speaker wrote as ("user" for Elena).
ROLE_NAMED = "the speaker's chat role, named at ingestion"


def _strength(cue: str) -> int:
    """0 for no cue, 1 for a preposition or the name's form, 2 for evidence."""
    return 2 if has_evidence(cue) else int(cue == "form")


def has_evidence(cue: str) -> bool:
    """Whether a cue is evidence for the category, not a guess."""
    return cue not in GUESS_CUES


def types_conflict(a: tuple[str, str] | None, b: tuple[str, str]) -> bool:
    """Whether two typed mentions cannot be one referent: both have evidence, and it differs."""
    if a is None:
        return False
    return has_evidence(a[1]) and has_evidence(b[1]) and a[0] != b[0]


def titles_clash(a: str, b: str) -> bool:
    """Whether two names open with different titles ("Mr. Park" / "Mrs. Park")."""
    first_a, first_b = normalize_name(a).split(" ")[0], normalize_name(b).split(" ")[0]
    return first_a != first_b and first_a in HONORIFICS and first_b in HONORIFICS


def adopt_type(
    node_attrs: dict[str, Any], description: str, unit_attrs: Mapping[str, Any]
) -> str:
    """Give a node the category of a mention typed by a stronger cue.

    Cues rank: none ("" — a bare capitalised name) < "form" (a preposition
    before it: "from Osaka") < evidence. A node keeps its type against an
    equal or weaker cue.

    Updates ``node_attrs`` in place and returns the description with the new
    category in place of the old one ("Biscuit (person), …" -> "Biscuit (animal), …").
    """
    old, old_cue = entity_type(node_attrs)
    new, new_cue = entity_type(unit_attrs)
    if _strength(new_cue) <= _strength(old_cue) or not new or new == old:
        return description
    node_attrs["category"] = new
    node_attrs["category_cue"] = new_cue
    return description.replace(f"({old})", f"({new})", 1) if old else description


def settle_identity(unit: Unit, state: ConversationState) -> None:
    """Settle an entity unit's identity against the graph so far, at decision time.

    Runs when the unit is placed (earlier turns of the same ``add`` are indexed
    by then), and edits the unit in place:

    * a name spelled like a node whose evidenced type differs gets the typed
      key (``"entity|jordan|place"``), hence a node id of its own;
    * a name the speaker introduced themself by (or the chat role ingestion
      named them from) that already has another node becomes a ``same_as``
      link, logged with the alias — unless that node already carries another
      person's name (two people who both wrote as ``user``): then the role
      alias is dropped.
    """
    key = unit.key.removeprefix("entity|")
    category, cue = entity_type(unit.attrs)
    known = state.entity_index.get(key)
    if known is not None and types_conflict(state.entity_types.get(known), (category, cue)):
        unit.key = "entity|" + typed_key(key, category)
    own = state.entity_index.get(normalize_name(unit.name))
    _drop_taken_roles(unit, state, own)
    same_as: list[str] = list(unit.attrs.get("same_as", ()))
    merges = [dict(m) for m in unit.attrs.get("merges", ())]
    for entry in merges:
        other = state.entity_index.get(normalize_name(str(entry.get("alias", ""))))
        if other is not None and other != own and other not in same_as:
            same_as.append(other)
            entry["same_as"] = other
    if same_as:
        unit.attrs["same_as"] = same_as
        unit.attrs["merges"] = merges


def _drop_taken_roles(unit: Unit, state: ConversationState, own: str | None) -> None:
    """Drop a role alias whose node already has a person's name: two people wrote as it."""
    taken = []
    for entry in unit.attrs.get("merges", ()):
        if entry.get("reason") != ROLE_NAMED:
            continue
        rkey = normalize_name(str(entry["alias"]))
        held = state.entity_index.get(rkey)
        if held is None or held == own:
            continue
        own_keys = {rkey, typed_key(rkey, "person")}
        if any(v == held and k not in own_keys for k, v in state.entity_index.items()):
            taken.append(entry["alias"])
    if taken:
        unit.attrs["aliases"] = [a for a in unit.attrs.get("aliases", ()) if a not in taken]
        unit.attrs["merges"] = [m for m in unit.attrs["merges"] if m["alias"] not in taken]
        unit.keywords = tuple(k for k in unit.keywords if k not in taken)


def undo_merge(node: Node, alias: str) -> Node:
    """Take back the identity merge that gave ``node`` the alias ``alias``.

    The alias (and its keyword), the ``same_as`` link and the sources that merge added are
    removed and its log entry dropped; the absorbed node, never rewritten,
    is again the only holder of its name once the index is rebuilt (reopen
    the store or `ConversationState.index_entity` the two nodes).

    Args:
        node: The entity node that absorbed the alias.
        alias: The alias to take back, as logged in ``attrs["merges"]``.

    Returns:
        The node as it would be without that merge.

    Raises:
        KeyError: ``node`` logs no merge for ``alias``.
    """
    log = list(node.attrs.get("merges", ()))
    entry = next((m for m in log if m.get("alias") == alias), None)
    if entry is None:
        raise KeyError(f"entity {node.id} logs no merge that added the alias {alias!r}; "
                       f"logged: {[m.get('alias') for m in log]}")
    log.remove(entry)
    new_attrs = dict(node.attrs)
    new_attrs["merges"] = log
    new_attrs["aliases"] = [a for a in node.attrs.get("aliases", ()) if a != alias]
    absorbed = entry.get("same_as")
    if absorbed:
        new_attrs["same_as"] = [i for i in node.attrs.get("same_as", ()) if i != absorbed]
    added = set(entry.get("sources", ()))
    sources = tuple(s for s in node.sources if s not in added)
    keywords = tuple(k for k in node.keywords if k != alias)
    return attrs.evolve(node, attrs=new_attrs, sources=sources, keywords=keywords)
