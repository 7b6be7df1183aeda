"""Context cues that type a name: is "Biscuit" a person, a pet, a company or a place?

`labile_text.entities` finds a name and guesses its category from the name
itself (honorifics, "University", "Lake" …); a bare one-word name defaults to
"person". Chat usually says what a name is in the words around it, and those
words are general English, not knowledge of particular names:

* **animal**: an animal noun next to the name ("my dog Biscuit", "Biscuit, our
  cat", "Biscuit the beagle", "Biscuit is a beagle") or a verb only animals do
  ("Biscuit barked", "Biscuit wagged"), or a pronoun soon after that says so
  ("walking Rufus tonight, he's a lab");
* **organization**: a work relation before it ("works at", "a job at",
  "hired by", "interview with"; not "work with": as often a colleague) or a
  company word after it ("Acme Health", "Brightline Labs", see
  `entity_vocab.ORG_CUES`);
* **place**: a home or travel verb before it ("live in", "moved to", "flew to",
  "born in"), which also overrides a company-looking name ("moved to Salt Lake");
* **thing**: an indefinite article or a buying verb before it ("a Kindle",
  "bought an iPhone") — people are rarely "a" someone.

`type_by_context` returns the category a cue gives and the cue's name, or
``None`` when nothing around the name says what it is; the caller keeps its
own guess then, marked as a guess so a later cue can overrule it.
"""

from __future__ import annotations

import re
from typing import Final

from labile.text.tokenize import wordset

__all__ = ["ANIMAL_NOUNS", "introduces_speaker", "type_by_context"]

#: Pets and other animals a conversation names, with common dog and cat breeds
#: (a generic lexicon: what "my X Biscuit" can be when Biscuit is an animal).
ANIMAL_NOUNS: Final = wordset(
    """
    dog dogs doggo doggy pup puppy puppies cat cats kitten kittens kitty pet pets
    hamster hamsters gerbil rabbit rabbits bunny parrot parakeet budgie bird birds
    horse horses pony mare stallion fish goldfish turtle tortoise lizard gecko iguana
    snake python ferret chinchilla hedgehog rat mouse cockatiel canary chicken hen
    rooster goat cow pig duck donkey alpaca llama guinea-pig
    beagle labrador lab retriever poodle terrier corgi husky pug bulldog dachshund
    chihuahua spaniel collie shepherd greyhound whippet doodle labradoodle goldendoodle
    schnauzer boxer rottweiler pitbull shiba tabby siamese persian maine-coon ragdoll
    """
)
_ANIMAL = "|".join(sorted((re.escape(w) for w in ANIMAL_NOUNS), key=len, reverse=True))
#: Verbs (and body parts after a possessive) that only animals go with.
_ANIMAL_VERBS: Final = (
    r"bark(?:s|ed|ing)?|meow(?:s|ed|ing)?|purr(?:s|ed|ing)?|wag(?:s|ged|ging)?|"
    r"growl(?:s|ed|ing)?|woof(?:s|ed)?|neigh(?:s|ed)?|chirp(?:s|ed)?|"
    r"fetch(?:es|ed)?|shed(?:s|ding)?|sniff(?:s|ed|ing)?|"
    r"chas(?:es|ed|ing)\s+(?:the\s+)?(?:ball|cat|squirrels?|birds?|its\s+tail)"
)
_ANIMAL_PARTS: Final = r"paws?|tail|fur|leash|collar|kibble|litter(?:\s*box)?|vet|crate|kennel"
#: Work relations: the name after them is an employer or a school-like body.
_WORK_BEFORE: Final = (
    r"(?:work(?:s|ed|ing)?|job|jobs|position|role|internship|intern(?:ed|ing)?|"
    r"employed|started|start|starting|hired|interview(?:ed|ing)?|offer|contract|"
    r"promoted|shift|shifts|notice)"
)
_ORG_LEFT: Final = re.compile(
    rf"\b(?:{_WORK_BEFORE}\s+(?:at|for)|interview\s+with|hired\s+by|employed\s+by|"
    r"offer\s+from|quit|laid\s+off\s+(?:from|by)|founded|co-?founded|"
    r"(?:ceo|cto|manager|director|engineer|nurse|analyst|designer|boss|colleagues?|"
    r"coworkers?|co-workers?|team)\s+(?:at|of))\s+(?:the\s+)?$",
    re.IGNORECASE,
)
_PLACE_LEFT: Final = re.compile(
    r"\b(?:live[sd]?|living|moved|moving|move|relocat(?:e|ed|ing)|born|grew\s+up|"
    r"raised|flew|flying|fly|drove|driving|travel(?:l?ed|l?ing)?|trip|vacation|holiday|"
    r"honeymoon|apartment|flat|house|home|based|settled|stayed|staying)"
    r"\s+(?:up\s+|down\s+|back\s+|out\s+)?(?:in|to|from|near|at|outside|around)\s+"
    r"(?:the\s+)?$",
    re.IGNORECASE,
)
_THING_LEFT: Final = re.compile(
    r"\b(?:an?|bought|buy|buying|ordered|order|got\s+(?:a|an|my)|new|my\s+new|"
    r"downloaded|installed|using|use)\s+$",
    re.IGNORECASE,
)
# "my dog Biscuit", "our new puppy, Pepper", "the cat Max"
_ANIMAL_LEFT: Final = re.compile(
    rf"\b(?:{_ANIMAL})(?:\s+is)?(?:\s+officially)?(?:\s+(?:named|called))?\s*,?\s*$",
    re.IGNORECASE,
)
# "walking Rufus at night. he's a lab": a pronoun later in the turn says what it is.
_ANIMAL_PRONOUN: Final = re.compile(
    rf"\b(?:he|she|it)(?:['’]s|\s+is|\s+was)\s+(?:a|an|my|our)\s+(?:\w+\s+)?(?:{_ANIMAL})\b",
    re.IGNORECASE,
)
# "Biscuit, my dog", "Biscuit (our cat)", "Biscuit the beagle", "Biscuit is a beagle",
# "Biscuit barked", "Biscuit's paws"
_ANIMAL_RIGHT: Final = re.compile(
    rf"^(?:\s*,\s*|\s*\(\s*|\s+the\s+)(?:(?:my|our|his|her|their|a|an|the)\s+)?"
    rf"(?:\w+\s+)?(?:{_ANIMAL})\b"
    rf"|^\s+(?:is|was)\s+(?:a|an|my|our)\s+(?:\w+\s+)?(?:{_ANIMAL})\b"
    rf"|^\s+(?:just\s+|always\s+|keeps?\s+|kept\s+|won't\s+stop\s+)?(?:{_ANIMAL_VERBS})\b"
    rf"|^['’]s\s+(?:\w+\s+)?(?:{_ANIMAL_PARTS})\b",
    re.IGNORECASE,
)


def type_by_context(text: str, start: int, end: int) -> tuple[str, str] | None:
    """The category the words around ``text[start:end]`` give the name, and the cue.

    Args:
        text: The whole turn.
        start: Where the name starts.
        end: Where it ends (a possessive "'s" right after is read as context).

    Returns:
        ``(category, cue)`` with category one of "animal", "organization",
        "place", "other" and cue one of "animal-noun", "animal-verb",
        "work-relation", "home-or-travel", "article-or-purchase"; ``None`` when
        no cue applies.
    """
    left = text[max(0, start - 60):start]
    right = text[end:end + 60]
    animal_right = _ANIMAL_RIGHT.match(right)
    if (_ANIMAL_LEFT.search(left) or animal_right is not None
            or _ANIMAL_PRONOUN.search(text, end, end + 120)):
        verb = animal_right is not None and re.match(rf"^\s+\w*\s*(?:{_ANIMAL_VERBS})", right,
                                                     re.IGNORECASE)
        return "animal", "animal-verb" if verb else "animal-noun"
    if _ORG_LEFT.search(left):
        return "organization", "work-relation"
    if _PLACE_LEFT.search(left):
        return "place", "home-or-travel"
    if _THING_LEFT.search(left):
        return "other", "article-or-purchase"
    return None


# "I'm Elena", "my name is Elena", "call me Lena", "Elena here" — said by the speaker.
# Not "this is X" / "it's X": chat uses them to show a photo or name a thing
# ("this is Max!", "It's Seattle"), far more often than to introduce oneself.
_INTRODUCTION_LEFT: Final = re.compile(
    r"(?:^|[\s,.!?;:(])(?:i['’]m|i\s+am|my\s+name\s+is|my\s+name['’]s|call\s+me)\s+$",
    re.IGNORECASE,
)
_INTRODUCTION_RIGHT: Final = re.compile(
    r"^(?:\s*[,.!?;:)]|\s*$|\s+(?:and|here|btw|by\s+the\s+way|from)\b)"
)


def introduces_speaker(text: str, start: int, end: int) -> bool:
    """Whether the name ``text[start:end]`` is the speaker introducing themself.

    "Hi! I'm Elena.", "my name is Elena and …", "Elena here", "call me Lena":
    the name follows "I'm" / "I am" / "my name is" / "call me" and ends its
    clause (so "I'm Elena's sister" does not count), or it opens the turn
    followed by "here".
    """
    right = text[end:end + 20]
    if right[:1] in {"'", "’"}:
        return False
    if not text[:start].strip() and re.match(r"^\s+here\b", right, re.IGNORECASE):
        return True
    return bool(_INTRODUCTION_LEFT.search(text[max(0, start - 20):start])
                and _INTRODUCTION_RIGHT.match(right))
