"""The word lists behind `labile_text.entities`: general-English cue words, never names
taken from particular conversations.

Each list is lowercase and answers one question the entity rules ask: is a
capitalised word a nationality, a holiday, or a word chat capitalises without
it being a name (`COMMON`)? Does a cue make a group of names an organisation
or a place? Which words before "to"/"from"/"at" make the next name a person?
Which words make a turn small talk (`FILLER_VOCAB`)?
"""

from __future__ import annotations

from labile.text.tokenize import wordset

__all__ = [
    "COMMON", "FILLER_VOCAB", "GREETING_BEFORE_NAME", "HOLIDAYS", "HONORIFICS", "NATIONALITIES",
    "ORG_CUES", "ORG_HEADS", "PERSON_BEFORE_PREP", "PLACE_CUES", "PLACE_HEADS", "PLACE_PREPS",
]

# Nationality and language adjectives are capitalised but are not names of people.
NATIONALITIES = wordset(
    """
    american english british spanish german french italian chinese japanese korean
    european african asian canadian mexican indian russian portuguese greek dutch swedish
    irish scottish australian latin arabic brazilian turkish polish thai vietnamese
    """
)
HOLIDAYS = wordset(
    "christmas easter thanksgiving halloween hanukkah passover ramadan diwali xmas"
)
# Words often capitalised at the start of a chat sentence (or shouted) that are
# never names on their own: interjections, discourse markers, time adverbs,
# quantifiers, kinship terms and chat abbreviations.
COMMON = wordset(
    """
    hey hi hello hiya howdy yo wow whoa oh ooh ah aw aww haha hahaha lol lmao omg yay
    yeah yep yup yes no nope ok okay alright sure thanks thank thx please sorry well hmm
    um uh ugh btw tbh idk imo fyi diy tv congrats congratulations cheers bye goodbye
    good great nice cool awesome amazing wonderful fantastic sounds glad love hope
    yesterday today tomorrow tonight now then later soon recently lately sometimes
    also anyway anyways besides plus still finally first second last next maybe
    perhaps honestly actually luckily unfortunately sadly hopefully definitely
    totally really just even though although however since after before once
    everyone everybody someone somebody anyone anybody nobody everything something
    anything nothing mom dad mum mommy daddy grandma grandpa granny sis bro sir madam
    dear guys man dude girl buddy pal folks wish keep take see let lets check look
    what whats where wheres who whos how hows why when which there theres here heres
    one two three four five six seven eight nine ten oops whoops gosh geez jeez damn
    dang wait huh yikes ouch phew meh welp mhm ha mine yours ours theirs every many
    """
)
HONORIFICS = wordset(
    "mr mrs ms miss dr prof professor aunt uncle sir lady lord saint captain coach"
)
ORG_CUES = wordset(
    """
    inc corp corporation co ltd llc university college school academy institute center
    centre group club church company foundation agency association society council
    committee department hospital clinic bank band team league union network studio
    studios press records labs magazine museum library charity shelter
    health healthcare systems technologies technology tech software solutions consulting
    partners capital media foods motors airlines airways insurance pharma therapeutics
    analytics robotics energy logistics industries enterprises holdings ventures games
    entertainment pictures bakery brewery brewing cafe café restaurant bistro diner gym
    fitness pharmacy dental clinics hospitals group associates realty construction
    """
)
ORG_HEADS = frozenset(
    {"university", "college", "bank", "church", "school", "academy", "cafe", "café"}
)
PLACE_CUES = wordset(
    """
    city town village street st avenue ave road rd boulevard park lake river mountain
    mountains mount mt beach island islands valley canyon county state province falls bay
    coast forest desert ocean sea hill hills square bridge airport station harbor harbour
    peninsula gulf national republic kingdom
    """
)
PLACE_HEADS = frozenset({"mount", "mt", "lake", "lago", "isle", "cape", "fort", "port"})
# Prepositions and verbs that introduce a place: "in Paris", "visited Rome".
PLACE_PREPS = wordset(
    "in to from at near around across towards toward through via into visit visited visiting visits"
)
# Words after which "to X"/"from X"/"at X" names a person: "talked to Mel",
# "a card from Mel".
PERSON_BEFORE_PREP = wordset(
    """
    talk talked talking talks said say says spoke speak speaking speaks gave give giving
    gives sent send sending sends wrote write writing writes listen listened listening
    introduced married reached close next thanks thank according belong belongs belonged
    message messaged text texted letter card gift call called heard hear hearing received
    learned note email present lesson lessons advice shout look looked looking smiled used
    goodbye bye hello hi
    """
)
# Vocabulary of small talk: greetings, thanks, farewells, acknowledgements,
# interjections and stock compliments. A turn made only of these (plus stopwords
# and the name of the person addressed) carries no memorable information.
FILLER_VOCAB = wordset(
    """
    hey hi hello hiya howdy yo greetings morning afternoon evening night good great nice
    cool awesome amazing wonderful fantastic excellent lovely sweet neat super incredible
    impressive beautiful gorgeous stunning cute adorable perfect brilliant fab fabulous
    wow whoa oh ooh ah aw aww haha hahaha hehe lol lmao omg yay hooray woohoo yeah yep
    yup yes no nope ok okay alright sure right true exactly absolutely definitely totally
    indeed agreed agree thanks thank thx ty appreciate appreciated welcome bye goodbye
    farewell cya later soon see talk catch care take luck cheers congrats congratulations
    sounds sound glad happy hear heard sorry love fun really much lot lots well hmm um uh
    ugh wish best pleasure anytime np problem bet dear friend buddy pal man dude girl
    guys everyone keep day meet wait proud means miss excited interesting inspiring hope
    going new anything thing things stuff also truly get got kind hug hugs xoxo long time
    ages em nah
    """
)
GREETING_BEFORE_NAME = wordset(
    "hey hi hello hiya thanks thank bye goodbye congrats congratulations dear yo morning night"
)
