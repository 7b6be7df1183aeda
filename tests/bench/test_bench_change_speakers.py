"""``labile bench change`` builds memory from the shipped logs as ``labile add`` would:
a ``user`` who introduces herself is stored under her name (#28 item 3)."""

from __future__ import annotations

from labile_bench.change import load_change
from labile_bench.change_run import observations_of


def test_every_role_log_of_the_shipped_set_names_its_person_and_only_its_person() -> None:
    for conv in load_change():
        said = {o.speaker for session in observations_of(conv) for o in session}
        roles = {t.speaker for session in conv.sessions for t in session}
        if "user" in roles:
            assert said == {conv.person, "assistant"}, conv.id
        else:
            assert said == roles, conv.id  # named speakers are never renamed
