"""Tokens, stopwords and the Porter2 (Snowball English) stemmer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile.text.tokenize import STOPWORDS, content_words, is_stopword, stem, terms, words

# Reference pairs from the Snowball English algorithm (the classic Porter2
# examples plus the special cases of the current Snowball version).
SNOWBALL_PAIRS = {
    "caresses": "caress",
    "ponies": "poni",
    "ties": "tie",
    "cries": "cri",
    "caress": "caress",
    "cats": "cat",
    "gas": "gas",
    "gaps": "gap",
    "kiwis": "kiwi",
    "feed": "feed",
    "agreed": "agre",
    "plastered": "plaster",
    "bled": "bled",
    "motoring": "motor",
    "sing": "sing",
    "conflated": "conflat",
    "troubled": "troubl",
    "sized": "size",
    "hopping": "hop",
    "tanned": "tan",
    "falling": "fall",
    "hissing": "hiss",
    "fizzed": "fizz",
    "failing": "fail",
    "filing": "file",
    "added": "add",
    "happy": "happi",
    "happily": "happili",
    "running": "run",
    "generously": "generous",
    "generate": "generat",
    "national": "nation",
    "relational": "relat",
    "conditional": "condit",
    "rational": "ration",
    "valency": "valenc",
    "hesitancy": "hesit",
    "digitizer": "digit",
    "conformably": "conform",
    "radically": "radic",
    "differently": "differ",
    "vilely": "vile",
    "analogously": "analog",
    "vietnamization": "vietnam",
    "predication": "predic",
    "operator": "oper",
    "feudalism": "feudal",
    "decisiveness": "decis",
    "hopefulness": "hope",
    "callousness": "callous",
    "formality": "formal",
    "sensitivity": "sensit",
    "sensibility": "sensibl",
    "triplicate": "triplic",
    "formalize": "formal",
    "electricity": "electr",
    "electrical": "electr",
    "hopeful": "hope",
    "goodness": "good",
    "revival": "reviv",
    "allowance": "allow",
    "inference": "infer",
    "airliner": "airlin",
    "adjustable": "adjust",
    "defensible": "defens",
    "irritant": "irrit",
    "replacement": "replac",
    "adjustment": "adjust",
    "dependent": "depend",
    "adoption": "adopt",
    "communism": "communism",
    "activate": "activ",
    "angularity": "angular",
    "homologous": "homolog",
    "effective": "effect",
    "bowdlerize": "bowdler",
    "probate": "probat",
    "rate": "rate",
    "cease": "ceas",
    "controll": "control",
    "roll": "roll",
    "consigned": "consign",
    "consolation": "consol",
    "knightly": "knight",
    "knives": "knive",
    "geology": "geolog",
    "biologist": "biolog",
    "fully": "fulli",
    "needlessly": "needless",
    # Exceptions and special forms.
    "sky": "sky",
    "skies": "sky",
    "dying": "die",
    "lying": "lie",
    "news": "news",
    "evening": "evening",
    "inning": "inning",
    "succeeded": "succeed",
    "proceeding": "proceed",
    "universal": "universal",
    "university": "universiti",
}


@pytest.mark.parametrize(("word", "expected"), sorted(SNOWBALL_PAIRS.items()))
def test_stem_matches_snowball_reference(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_stem_short_words_unchanged() -> None:
    assert stem("") == ""
    assert stem("a") == "a"
    assert stem("is") == "is"


def test_stem_consonantal_y() -> None:
    assert stem("yesterday") == "yesterday"
    assert stem("enjoying") == "enjoy"
    assert stem("saying") == "say"


def test_words_lowercases_and_drops_inner_apostrophes() -> None:
    assert words("Don't STOP me now!") == ["dont", "stop", "me", "now"]
    assert words("Caroline's 3.5 km—run") == ["carolines", "3", "5", "km", "run"]
    assert words("I’m here") == ["im", "here"]


def test_words_edge_cases() -> None:
    assert words("") == []
    assert words("?!... --- ***") == []
    assert words("snake_case") == ["snake", "case"]
    assert words("Café naïve Straße") == ["café", "naïve", "strasse"]
    assert words("😊 wow 😊") == ["wow"]


def test_stopwords_list() -> None:
    assert 170 <= len(STOPWORDS) <= 260
    assert {"the", "and", "i", "you", "dont", "im"} <= STOPWORDS
    assert not {"ill", "well", "shed", "wed", "hell", "paris", "may"} & STOPWORDS


def test_is_stopword_handles_contractions() -> None:
    assert is_stopword("The")
    assert is_stopword("I'll")
    assert is_stopword("we’d")
    assert not is_stopword("Mel's")
    assert not is_stopword("well")


def test_content_words() -> None:
    assert content_words("I went to the LGBTQ support group yesterday!") == [
        "went",
        "lgbtq",
        "support",
        "group",
        "yesterday",
    ]
    # Contractions of stopwords are not the words "ill"/"wed".
    assert content_words("I'll see, we'd go. Mel's dog") == ["see", "go", "mels", "dog"]
    assert content_words("a b c") == []
    assert content_words("") == []


def test_terms_are_stemmed_content_words() -> None:
    assert terms("The runners were running generously") == ["runner", "run", "generous"]
    assert terms("Painting paintings painted") == ["paint", "paint", "paint"]
    assert terms("") == []


@given(st.text())
def test_content_words_is_subsequence_of_words(text: str) -> None:
    """Content words are the text's words in order, with some (stop words) left out."""
    all_words = iter(words(text))
    assert all(w in all_words for w in content_words(text))


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz'", max_size=20))
def test_stem_is_total_and_never_longer(word: str) -> None:
    """Stemming never fails and grows a word by at most one letter (a restored "-e")."""
    out = stem(word)
    assert isinstance(out, str)
    assert len(out) <= len(word) + 1  # only "-e" restoration can add a letter
