"""The policy's validation, the small-talk judgement and the use signal, in isolation."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from labile import InputError
from labile.plugin import Edge
from labile_retention import RetentionPolicy
from labile_retention.smalltalk import is_small_talk
from labile_retention.use import last_used


def test_a_policy_round_trips_and_names_what_is_wrong() -> None:
    policy = RetentionPolicy.from_mapping({"unused_days": 180, "small_talk_days": 0})
    assert policy.to_mapping() == {"unused_days": 180, "small_talk_days": 0}
    assert RetentionPolicy().is_empty and not policy.is_empty
    with pytest.raises(InputError, match="unknown rule.*older_than.*the rules are unused_days"):
        RetentionPolicy.from_mapping({"older_than": 3})
    for bad in (-1, 36_501, 1.5, True, "90"):
        with pytest.raises(InputError, match="unused_days must be a whole number of days"):
            RetentionPolicy(unused_days=bad)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="must be a table"):
        RetentionPolicy.from_mapping([("unused_days", 1)])  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [
    "Hey, thanks so much!", "haha okay, sounds good", "Good morning!", "lol yes",
    "Bye, talk soon!", "Thank you, have a great weekend", "", "ok",
])
def test_greetings_thanks_and_assent_are_small_talk(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize("text", [
    "Thanks, the bakery in Porto hired me!",      # a place and a fact
    "Good morning, I ran 5 km today",              # a number
    "Say hi to Ines for me",                       # a name inside the sentence
    "I adopted a puppy",                           # one content word is a fact
    "We are moving next month",                    # a plan
    "Thanks! " + "really " * 14,                   # too long to be judged small talk
])
def test_turns_that_carry_a_fact_are_not(text: str) -> None:
    assert not is_small_talk(text)


def _edge(src: str, dst: str, *history: object) -> Edge:
    return Edge(id=f"{src}>{dst}", src=src, dst=dst, predicate="p", weight=0.5,
                attrs={"history": list(history)})


def test_use_is_the_latest_credit_and_blame_cancels_it() -> None:
    t1, t2 = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 6, 1, tzinfo=UTC)
    edges = [
        _edge("a", "b", {"decision": "strengthen", "at": t1.isoformat()},
              {"decision": "add", "at": t2.isoformat()}),
        _edge("b", "c", {"decision": "weaken", "at": t2.isoformat()},
              {"decision": "weaken", "at": t2.isoformat()}),
        _edge("d", "e", {"decision": "strengthen", "at": "not a time"}, "junk",
              {"decision": "strengthen", "at": "2024-01-01T00:00:00"}),  # naive: skipped
        Edge(id="x", src="f", dst="g", predicate="p", weight=0.5, attrs={"history": "bad"}),
    ]
    used = last_used(edges)
    assert used == {"a": t2}  # b: 2 credits, 2 blames; c: blamed only; d, e, f, g: nothing valid
