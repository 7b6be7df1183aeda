"""Speakers are people: turning a chat role (``user``) into the name of who spoke.

A chat log names its speakers by role. Memory built from it then knows
"user likes hiking", and a question about Elena finds nothing. Three things
tie a role to a name, strongest first:

1. the caller's mapping (``labile add --speaker user=Elena``, ``speakers=``
   in Python, MCP and HTTP): always wins;
2. the log itself: an OpenAI message's ``name`` field, or a record's
   ``speaker`` next to its ``role``;
3. a self-introduction by a chat role ("Hi! I'm Elena", "my name is Elena",
   "call me Elena"): the role is that person from that turn on.

A named turn keeps its role in ``metadata["role"]`` and says how it was
named in ``metadata["speaker_named_by"]`` (``"caller"``, ``"log"``,
``"introduction"``). Those stored turns *are* the namespace's mapping: a later
add reads it back (`stored_names`), the latest named turn of a role wins, and
it survives reopening, export and import with the turns themselves. To undo a
learned name, pass the role as its own name (``--speaker user=user``): the
turns of that add keep the role, and so do later ones; forgetting the turns
that named a role forgets the name too.
"""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from labile.plugin import InputError, Observation, get_logger
from labile.text.tokenize import is_stopword, wordset
from labile_text.dates import MONTH_NUMBERS, WEEKDAY_NUMBERS
from labile_text.entity_vocab import COMMON, HOLIDAYS, NATIONALITIES

if TYPE_CHECKING:
    from labile import AsyncMemory, Memory

__all__ = ["CHAT_ROLES", "NAMED_BY_KEY", "ROLE_KEY", "SpeakerNames", "introduced_name",
           "is_name_like", "name_with_stored", "name_with_stored_async", "parse_speakers",
           "stored_names"]

log = get_logger(__name__)

#: Speakers that are roles, not people: a self-introduction by one of them names it.
CHAT_ROLES: Final = frozenset({"user", "assistant", "human", "ai", "bot", "model"})
#: Metadata key of a named turn: the role the log gave its speaker.
ROLE_KEY: Final = "role"
#: Metadata key of a named turn: what named it (``caller``, ``log``, ``introduction``).
NAMED_BY_KEY: Final = "speaker_named_by"

# Capitalised words that follow "I'm" without being a name: states, places one is
# at, faiths, and what Title Case chat writes ("I'm Back!", "I'm So Happy").
_NOT_NAMES: Final = wordset(
    """
    back home here there done fine good ok okay sorry sure ready tired busy free new
    happy sad glad excited sick ill hungry late early alone single married engaged
    pregnant retired divorced vegan vegetarian pescatarian jewish christian muslim
    catholic buddhist hindu atheist gay straight trans not so very really still also
    always never just only all about almost in on at off out from with over under
    going coming trying thinking gonna looking feeling getting doing being moving
    working starting planning leaving staying bored curious afraid scared worried
    proud grateful thankful blessed lucky stuck lost confused serious kidding joking
    exhausted stressed yours mr mrs ms dr
    """
)
_MONTHS: Final = frozenset(MONTH_NUMBERS)
_DAYS: Final = frozenset(WEEKDAY_NUMBERS)
_NAME_WORD = r"[^\W\d_]+(?:['’\-][^\W\d_]+)*"
# A self-introduction: the cue, then one to three words that may be a name.
_INTRO = re.compile(
    r"(?:\b(?P<weak>I\s*['’]?\s*m|I\s+am)|(?P<strong>\bmy\s+name\s*(?:['’]s|is)|\bcall\s+me))"
    rf"\s+(?P<name>{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,2}})",
    re.IGNORECASE,
)


def is_name_like(word: str) -> bool:
    """Whether ``word`` may be a person's given or family name.

    A name is letters (with inner apostrophes or hyphens: "O'Neil", "Jean-Luc"),
    starts with a capital, is not all capitals past two letters ("OK", "NYC"),
    and is none of: a stopword, a chat interjection or discourse word, a
    nationality, a faith, a holiday, a month or weekday, a state one is in
    ("Tired", "Back"), or a verb in ``-ing`` ("Going").
    """
    if not re.fullmatch(_NAME_WORD, word) or not word[:1].isupper():
        return False
    letters = [c for c in word if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return False
    low = word.replace("'", "").replace("’", "").casefold()
    if is_stopword(word) or low in COMMON or low in NATIONALITIES or low in HOLIDAYS:
        return False
    if low in _NOT_NAMES or low in _MONTHS or low in _DAYS:
        return False
    return not (low.endswith("ing") and len(low) >= 5)


def introduced_name(text: str) -> str | None:
    """The name a speaker gives themselves in ``text``, or ``None``.

    Cues: "I'm X" / "I am X" (X written with a capital), and the stronger
    "my name is X" / "my name's X" / "call me X" (a lower-case "elena" is
    accepted after "my name is"). Up to three name-like words are taken
    ("I'm Elena Ruiz"); a cue followed by a word that is not name-like
    ("I'm Tired", "I'm Going to ...", "call me tomorrow"), by a possessive
    ("I'm Elena's sister") or by a run of capitalised words that goes on
    past the name (Title Case: "I'm Really Happy Today") gives nothing.
    """
    for match in _INTRO.finditer(text):
        name = _name_after(match, text)
        if name:
            return name
    return None


def _name_after(match: re.Match[str], text: str) -> str | None:
    words = list(re.finditer(r"\S+", match.group("name")))
    lenient = (match.group("strong") or "").casefold().startswith("my")
    taken: list[str] = []
    for word in (w.group() for w in words):
        if re.search(r"['’]s$", word):  # "I'm Elena's sister": someone else's name
            return None
        candidate = word[:1].upper() + word[1:] if lenient and word.islower() else word
        if not is_name_like(candidate):
            break
        taken.append(candidate)
    if not taken:
        return None
    if lenient:
        return " ".join(taken)
    # Title Case ("I'm Really Happy Today", "I'm Going To Rome"): the capitalised run
    # goes on past the words taken, so they are not a name.
    after = text[match.start("name") + words[len(taken) - 1].end():]
    if re.match(r"[ \t]+[A-Z]", after):
        return None
    return " ".join(taken)


def parse_speakers(pairs: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """A role → name mapping from ``ROLE=NAME`` strings (``--speaker user=Elena``) or
    a mapping; roles are compared in lower case.

    Raises:
        InputError: a pair without ``=``, an empty role or name, or one role given
            two different names.
    """
    if pairs is None:
        return {}
    items: Iterator[tuple[Any, Any]] = (
        iter(pairs.items()) if isinstance(pairs, Mapping) else (_split_pair(p) for p in pairs))
    out: dict[str, str] = {}
    for role, name in items:
        if not isinstance(role, str) or not isinstance(name, str):
            raise InputError(f"speakers: role and name must be strings, got {role!r}: {name!r}")
        key, name = role.strip().casefold(), " ".join(name.split())
        if not key or not name:
            raise InputError(f"speakers: {role!r}={name!r} needs a role and a name "
                             "(e.g. user=Elena)")
        if out.get(key, name) != name:
            raise InputError(f"speakers: the role {key!r} is given two names "
                             f"({out[key]!r} and {name!r}); give one")
        out[key] = name
    return out


def _split_pair(pair: str) -> tuple[str, str]:
    role, sep, name = pair.partition("=")
    if not sep:
        raise InputError(f"--speaker {pair!r}: expected ROLE=NAME (e.g. user=Elena)")
    return role, name


@attrs.define
class SpeakerNames:
    """Who each role is, applied to turns in the order they were said.

    Attributes:
        given: The caller's role → name mapping (lower-case roles): always wins.
        known: Names learned so far (from stored turns, the log, introductions);
            `apply` adds to it.
    """

    given: Mapping[str, str] = attrs.field(factory=dict)
    known: dict[str, str] = attrs.field(factory=dict)

    def apply(self, observations: Sequence[Observation]) -> list[Observation]:
        """The turns with their roles replaced by names (see the module docstring).

        A turn already named (its metadata has a role) is kept as it is and
        teaches its name; other turns whose speaker is a role get the caller's
        name for it, else the name learned so far; a self-introduction by a
        chat role the caller did not name teaches a name from that turn on.
        """
        return [self._name(obs) for obs in observations]

    def _name(self, obs: Observation) -> Observation:
        role = obs.metadata.get(ROLE_KEY)
        if isinstance(role, str) and obs.speaker:
            self.known[role.casefold()] = obs.speaker  # named already (the log, a re-add)
            return obs
        if not obs.speaker:
            return obs
        key = obs.speaker.casefold()
        if key in self.given:
            return _named(obs, self.given[key], "caller")
        if key in CHAT_ROLES:
            introduced = introduced_name(obs.text)
            if introduced and introduced != self.known.get(key):
                log.info("speaker_introduced", role=key, observation=obs.id)
                self.known[key] = introduced
        name = self.known.get(key)
        return _named(obs, name, "introduction") if name and name != obs.speaker else obs


def _named(obs: Observation, name: str, how: str) -> Observation:
    return attrs.evolve(obs, speaker=name,
                        metadata={**obs.metadata, ROLE_KEY: obs.speaker, NAMED_BY_KEY: how})


def stored_names(observations: Iterable[Observation]) -> dict[str, str]:
    """The role → name mapping that stored turns (in the order they were added) carry:
    for each role, the speaker of its latest named turn (a turn named as its own
    role undoes a name)."""
    return _current(_latest(observations))


def _latest(observations: Iterable[Observation], into: dict[str, str] | None = None,
            ) -> dict[str, str]:
    """Each role's speaker on its latest named turn, a role named as itself included."""
    known = {} if into is None else into
    for obs in observations:
        role = obs.metadata.get(ROLE_KEY)
        if isinstance(role, str) and obs.speaker:
            known[role.casefold()] = obs.speaker
    return known


def _current(latest: Mapping[str, str]) -> dict[str, str]:
    return {role: name for role, name in latest.items() if name.casefold() != role}


# What a memory's namespaces were last seen to say: namespace -> (its observation count
# then, `_latest` of its turns). Reading every stored turn per add would cost a
# server a pass over the namespace per call (0.2-0.7 s at 10,000 turns); the count
# (one cheap store call) tells when the pass must be made again: another writer's
# add, a forget, or an add of this process that did not store what was expected.
_SEEN: weakref.WeakKeyDictionary[Any, dict[str, tuple[int, dict[str, str]]]] = (
    weakref.WeakKeyDictionary())


def _observation_count(stats: Mapping[str, Any]) -> int:
    return int(stats.get("observations") or 0)


def _remember(memory: Any, namespace: str, count: int, latest: dict[str, str],
              named: Sequence[Observation], stored: set[str]) -> None:
    """Note what the namespace will say once ``named`` (minus ``stored`` ids) is added."""
    fresh = {o.id: o for o in named if o.id not in stored}
    _SEEN.setdefault(memory, {})[namespace] = (count + len(fresh),
                                              _latest(fresh.values(), dict(latest)))


def _seen(memory: Any, namespace: str, count: int) -> dict[str, str] | None:
    seen = _SEEN.get(memory, {}).get(namespace)
    return seen[1] if seen is not None and seen[0] == count else None


def name_with_stored(memory: Memory, namespace: str, observations: Sequence[Observation],
                     speakers: Iterable[str] | Mapping[str, str] | None = None,
                     ) -> list[Observation]:
    """``observations`` named as they would be if added to ``namespace`` now: the
    caller's ``speakers`` first, then what the namespace's stored turns and the
    turns themselves say (see the module docstring).

    The stored turns are read only when a turn's speaker is a chat role the
    caller did not name, and then only when the namespace changed otherwise
    than by this process's adds of what this function returned. Another
    process adding to the namespace at the same moment may teach a name this
    call does not see yet.

    Raises:
        InputError: ``speakers`` is malformed (see `parse_speakers`).
    """
    given = parse_speakers(speakers)
    if not _unnamed_roles(observations, given):
        return SpeakerNames(given=given).apply(observations)
    count = _observation_count(memory.store.stats(namespace))
    latest = _seen(memory, namespace, count)
    if latest is None:
        latest = _latest(memory.store.iter_observations(namespace)) if count else {}
    named = SpeakerNames(given=given, known=_current(latest)).apply(observations)
    stored = memory.store.existing_observation_ids(namespace, [o.id for o in named])
    _remember(memory, namespace, count, latest, named, stored)
    return named


async def name_with_stored_async(
    memory: AsyncMemory, namespace: str, observations: Sequence[Observation],
    speakers: Iterable[str] | Mapping[str, str] | None = None,
) -> list[Observation]:
    """`name_with_stored` for an `AsyncMemory` (the MCP and HTTP servers)."""
    given = parse_speakers(speakers)
    if not _unnamed_roles(observations, given):
        return SpeakerNames(given=given).apply(observations)
    count = _observation_count((await memory.stats(namespace))["store"])
    latest = _seen(memory.memory, namespace, count)
    if latest is None:
        latest = _latest((await memory.list(namespace, limit=sys.maxsize)).items) \
            if count else {}
    named = SpeakerNames(given=given, known=_current(latest)).apply(observations)
    stored = {o.id for o in await memory.get(namespace, [o.id for o in named])}
    _remember(memory.memory, namespace, count, latest, named, stored)
    return named


def _unnamed_roles(observations: Sequence[Observation], given: Mapping[str, str]) -> bool:
    """Whether a turn is said by a chat role that nothing names yet."""
    return any(o.speaker and o.speaker.casefold() in CHAT_ROLES
               and o.speaker.casefold() not in given and ROLE_KEY not in o.metadata
               for o in observations)
