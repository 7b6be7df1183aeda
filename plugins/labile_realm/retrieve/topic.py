"""Which kind of value a question about now asks for, and which stored texts talk about it.

"Where does she live now?" asks for a home; "What's his job these days?" for
work. The lean towards the latest statement (`labile_realm.retrieve.validity.recency_prior`)
should then pick the latest statement *about that*, not the latest turn that
happens to share a word ("I cook every night now"). This module names a few
kinds of value that change over months in a person's life — home, work, diet,
relationship, pets, getting around, health, exercise, trips, habits (smoking, coffee,
drink), music — by the everyday English words for
them: `question_topics` reads a question's kinds from the words that ask for
them, `statement_topics` a stored text's from the wider set of words that talk
about them ("we signed a lease", "my first shift"). A question whose kind is
not recognised reads as none, and then nothing changes.
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["OCCUPATIONS", "PETS", "question_topics", "statement_topics"]

#: Occupations, for telling a statement of one's job ("I'm a junior planner").
OCCUPATIONS: Final = (
    r"analyst|engineer|developer|programmer|designer|nurse|teacher|manager|planner|"
    r"consultant|lawyer|doctor|accountant|illustrator|writer|researcher|scientist|intern|"
    r"barista|chef|cook|architect|editor|director|officer|technician|specialist|"
    r"coordinator|administrator|associate|trainee|apprentice|paramedic|pharmacist|"
    r"therapist|counsel+or|electrician|plumber|mechanic|driver|clerk|cashier|professor|"
    r"lecturer")
#: Kinds of pet, for telling talk about one's pets and a statement of them.
PETS: Final = (r"dogs?|cats?|pupp(?:y|ies)|kittens?|pets?|hamsters?|rabbits?|bunn(?:y|ies)|"
               r"parrots?|birds?|turtles?|tortoises?|guinea\s+pigs?|horses?|chickens?|"
               r"goldfish|fish")

#: The words a question uses to ask for each kind of value. "What does she do?" asks
#: for work; "What does she do on Sundays / for fun?" does not.
_ASKS: Final = {kind: re.compile(p, re.IGNORECASE) for kind, p in (
    # "go live" (a launch) is not about a home
    ("home", r"\b(?:(?<!go\s)(?<!goes\s)(?<!went\s)live|lives|(?<!a\s)living|home|address|"
             r"apartment|flat|house|neighbou?rhood|"
             r"reside\w*|roommates?|flatmates?|housemates?|landlord|based|staying)\b"),
    ("work", r"\b(?:job|jobs|work|works|working|career|employ\w*|employer|company|office|"
             r"position|title|occupation|profession|boss|role|team|earn|earns|salary|"
             r"freelanc\w*|self-employed|unemployed|retired|retirement)\b|"
             r"\bfor\s+a\s+living\b|"
             r"\bwhat\s+(?:does|do)\s+\w+(?:\s+\w+)?\s+do\b"
             r"(?!\s+(?:on|at|in|with|for\s+fun))|"
             # "Is she still at Google?": where one works
             r"\b(?:still|now)\s+at\s+(?:the\s+)?(?-i:[A-Z])"),
    ("diet", r"\b(?:eat|eats|eating|diet|vegetarian|vegan|pescatarian|meat|breakfast|"
             r"lunch|dinner|food|meals?|keto|paleo|plant-based|fasting)\b"),
    ("relationship", r"\b(?:married|single|dating|girlfriend|boyfriend|partner|wife|husband|"
                     r"engaged|divorced|relationship|spouse|fianc\w+|seeing)\b|"
                     # "Is she still with Mark?"
                     r"\bstill\s+with\s+(?-i:[A-Z])"),
    ("pet", rf"\b(?:{PETS})\b"),
    ("transport", r"\b(?:commute|commuting|"
                  r"(?:get|gets|getting)\s+to\s+(?:work|school|the\s+office)|"
                  r"drive|drives|car|bus|train|"
                  r"bike|cycle|cycling)\b"),
    ("health", r"\b(?:injur\w+|hurt|pain|sick|ill|recover\w*|health|surgery|doctor|"
               r"medication|meds|tablets|pills|therapy|physio\w*)\b"),
    ("trip", r"\b(?:trip|trips|travel\w*|holiday|vacation|flights?|fly|flying|visit\w*|"
             r"itinerary)\b|\bgoing\s+to\s+(?-i:[A-Z])"),
    ("music", r"\b(?:music|band|choir|sing|sings|singing|guitar|piano|violin|drums|instruments?|"
              r"concerts?|gigs?|songs?)\b"),
    ("habit", r"\b(?:smoke|smokes|smoking|cigarettes?|vape|vaping|drink|drinks|drinking|"
              r"coffee|caffeine|alcohol|beer|wine|cups?)\b"),
    ("exercise", r"\b(?:run|runs|running|miles|race|marathon|training|train|climb|climbs|"
                 r"climbing|gym|yoga|swim|swimming|walk|walks|walking|workout|exercise\w*|"
                 r"sport|sports|football|tennis|pilates|lift|lifting|"
                 r"weights|boulder\w*|cycle|cycling|bike|biking)\b"),
)}

#: The words a stored text uses when it talks about each kind of value.
_TALKS: Final = {kind: re.compile(p, re.IGNORECASE) for kind, p in (
    # "home" and "place" alone are as often somewhere one is ("I'm home more", "a little
    # Italian place") as where one lives
    ("home", r"\b(?:live|lives|living|lived|move[ds]?|moving|apartments?|flats?|houses?|"
             r"rooms?|rent|lease|landlord|roommates?|flatmates?|housemates?|"
             r"neighbou?rhoods?|studios?|bedrooms?|condos?|unpack\w*|mortgage|dorms?|"
             r"settled)\b|"
             r"\b(?:my|our|new|own)\s+(?:place|home)\b|\bhome\s+(?:in|is)\b"),
    # "work" as a place or a time ("the canteen at work", "after work") says nothing of
    # the job; "I work at / as / for …" does
    ("work", r"\b(?:job|jobs|hired|offer|role|position|promot\w+|"
             r"manager|company|firm|office|boss|colleagues?|co-?workers?|shifts?|career|"
             r"quit|notice|resign\w*|laid\s+off|intern\w*|salary|interview\w*|clients?|"
             r"employer|startup|contract|team\s+lead|lead|co-?working|on-?call|"
             r"retired|retirement|pension)\b|"
             r"\b(?:work|works|working|worked)\s+(?:as|at|for|in|with)\b|"
             r"\b(?:my|new|of)\s+work\b|"
             # "I'm now a data analyst at Acme", "as a junior planner": the speaker's
             # occupation ("found a new piano teacher" is someone else's)
             r"\b(?:I['’]m|I\s+am|as|became|become|now|still)\s+(?:a|an)\s+(?:\w+\s+){0,2}"
             rf"(?:{OCCUPATIONS})\b"),
    ("diet", r"\b(?:eat|eats|eating|ate|diet|vegetarian|vegan|pescatarian|meat|fish|"
             r"dairy|cook\w*|meals?|food|keto|paleo|gluten|plant-based|fasting)\b"),
    ("relationship", r"\b(?:married|single|dating|girlfriend|boyfriend|partner|wife|husband|"
                     r"engaged|divorced|relationship|wedding|spouse|fianc\w+|broke\s+up|"
                     r"split\s+up|proposed)\b|\b(?:first|second|a)\s+date\b|"
                     r"\bseeing\s+(?:someone|somebody|anyone|(?-i:[A-Z]))"),
    ("pet", rf"\b(?:{PETS}|vet|adopted|shelter|litter)\b"),
    ("transport", r"\b(?:commute|commuting|drive|drives|driving|drove|car|bus|train|bike|"
                  r"e-?bike|cycle|cycling|cycled|walk|walking)\b"),
    ("health", r"\b(?:injur\w+|hurt|pain|sick|ill|recover\w*|health|surgery|doctor|physio\w*|"
               r"fracture|broken|sprain\w*|cleared|hospital|knee|ankle|medication|meds|"
               r"tablets|pills|therapy|therapist|GP)\b"),
    ("trip", r"\b(?:trip|trips|travel\w*|holiday|vacation|flights?|fly|flying|flew|"
             r"visit\w*|itinerary|cancel\w*|called\s+off|postponed?|book(?:ed|ing)?|"
             r"hotel|airbnb)\b|\bgoing\s+to\s+(?-i:[A-Z])"),
    ("music", r"\b(?:music\w*|band|bands|choir|sing|sings|singing|sang|singer|guitar|piano|"
              r"violin|cello|drums?|drummer|concerts?|gigs?|songs?|rehears\w*|lessons?|"
              r"teacher|recital|album)\b"),
    ("habit", r"\b(?:smok\w*|cigarettes?|vap\w*|patch(?:es)?|nicotine|drink|drinks|drinking|"
              r"drank|coffees?|caffeine|espresso|alcohol|beers?|wine|booze|sober|cups?|"
              r"red\s+bulls?|energy\s+drinks?|cravings?)\b"),
    ("exercise", r"\b(?:run|runs|running|ran|runner|miles?|km|race|races|marathon|half|"
                 r"training|trained|climb|climbs|climbing|climbed|wall|boulder\w*|gym|yoga|"
                 r"swim|swimming|walk|walks|walking|walked|workouts?|exercis\w*|sports?|"
                 r"football|tennis|pace|routes?|pilates|hike|hikes|hiking|hiked|lift|lifting|"
                 r"weights|cycle|cycling|cycled|bike|biking)\b"),
)}


def question_topics(question: str) -> frozenset[str]:
    """The kinds of value ``question`` asks for (empty when none is recognised)."""
    return frozenset(kind for kind, pattern in _ASKS.items() if pattern.search(question))


#: What was: "my old landlord", "the former office", "my ex-boss" talk about a value
#: that no longer holds, so they are not talk about the current one ("still in my old
#: room" is the current one).
_FORMER: Final = re.compile(
    r"(?<!still\sin\s)(?<!still\sat\s)\b(?:my|our|his|her|their|the)\s+"
    r"(?:old|former|previous|ex)(?:\s+|-)\w+", re.IGNORECASE)


@functools.lru_cache(maxsize=8192)
def statement_topics(text: str) -> frozenset[str]:
    """The kinds of value a stored ``text`` talks about (empty when none); a value
    named as a former one ("my old landlord") does not count."""
    text = _FORMER.sub(" ", text)
    return frozenset(kind for kind, pattern in _TALKS.items() if pattern.search(text))
