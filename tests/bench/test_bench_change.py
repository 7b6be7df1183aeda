"""The benchmark of change: its metrics, its loader's contract, the shipped data, and a run."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labile import Memory
from labile_bench.change import KINDS, load_change, load_change_file
from labile_bench.change_metrics import ChangeScorer, stale_first
from labile_bench.change_run import SCHEMA_VERSION, format_table, run_change, said_after
from labile_bench.compare import compare_logs

FAST = {"store": {"type": "memory"}, "embedder": {"type": "hashing"}}


# -- stale-first -----------------------------------------------------------------------


def test_stale_first_counts_a_stale_turn_above_the_first_gold_one() -> None:
    assert stale_first(["old", "new"], {"new"}, {"old"}, 5) == 1.0
    assert stale_first(["new", "old"], {"new"}, {"old"}, 5) == 0.0
    assert stale_first(["x", "old"], {"new"}, {"old"}, 5) == 1.0  # stale found, gold not
    assert stale_first(["x", "y"], {"new"}, {"old"}, 5) == 0.0  # neither found
    assert stale_first(["x", "new", "old"], {"new"}, {"old"}, 1) == 0.0  # outside the cut


def test_stale_first_rejects_what_is_undefined() -> None:
    with pytest.raises(ValueError, match="both gold and stale"):
        stale_first(["a"], {"a"}, {"a", "b"}, 5)
    with pytest.raises(ValueError, match="needs both"):
        stale_first(["a"], {"a"}, set(), 5)
    with pytest.raises(ValueError, match="positive int"):
        stale_first(["a"], {"a"}, {"b"}, 0)


turn_ids = st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8)


@given(ranked=turn_ids, gold=st.sets(st.sampled_from("abcd"), min_size=1),
       stale=st.sets(st.sampled_from("efgh"), min_size=1),
       k=st.integers(1, 8), more=st.integers(0, 4))
def test_stale_first_is_kept_by_a_larger_cut_and_excluded_by_gold_on_top(
        ranked: list[str], gold: set[str], stale: set[str], k: int, more: int) -> None:
    """Property: stale-first at k stays 1 at any larger cut, is 0 when a gold turn ranks
    first, and is 0 when no stale turn is in the top k."""
    value = stale_first(ranked, gold, stale, k)
    if value:  # a stale turn above every gold one stays so when more turns are looked at
        assert stale_first(ranked, gold, stale, k + more) == 1.0
    if ranked and ranked[0] in gold:
        assert value == 0.0
    if not set(ranked[:k]) & stale:
        assert value == 0.0


def test_scorer_means_per_kind_with_stale_first_on_current_only() -> None:
    scorer = ChangeScorer(ks=(1, 5))
    scorer.add(["old", "new"], {"new"}, {"old"}, kind="current")  # stale first
    scorer.add(["new", "old"], {"new"}, {"old"}, kind="current")  # right
    scorer.add(["x", "then"], {"then"}, (), kind="past")
    means = scorer.means()
    assert means["current"]["hit@1"] == 50.0 and means["current"]["recall@5"] == 100.0
    assert means["current"]["stale_first@5"] == 50.0 and means["current"]["n_stale"] == 2
    assert means["past"]["recall@1"] == 0.0 and "stale_first@5" not in means["past"]
    assert means["overall"]["n"] == 3 and means["overall"]["stale_first@5"] == 50.0
    with pytest.raises(ValueError, match="both gold and stale"):
        scorer.add(["new"], {"new"}, {"new"}, kind="current")
    assert len(scorer.retrieval) == 3  # a refused question is not half-recorded


# -- the loader's contract ----------------------------------------------------------------


def conversation(**question: Any) -> dict[str, Any]:
    """A two-session conversation (a move) with one question, overridable."""
    turns = [
        [("D1:1", "Ana", "I live in a small flat in Lisbon near the river."),
         ("D1:2", "Rui", "Lisbon suits you. Still teaching piano?"),
         ("D1:3", "Ana", "Yes, piano lessons for kids on Saturdays.")],
        [("D2:1", "Ana", "We moved! The new house in Porto has a garden."),
         ("D2:2", "Rui", "Porto, wow. Do you miss the river?")],
    ]
    dates = ["2025-01-05T10:00:00+00:00", "2025-06-05T10:00:00+00:00"]
    q = {"id": "ana-q1", "question": "Where does Ana live now?",
         "asked_at": "2025-07-01T09:00:00+00:00", "kind": "current",
         "gold": ["D2:1"], "stale": ["D1:1"]}
    q.update(question)
    return {"id": "ana", "person": "Ana", "speakers": ["Ana", "Rui"], "about": "a move",
            "sessions": [{"turns": [{"id": i, "speaker": s, "text": t,
                                     "timestamp": dates[n][:-11] + f"{j:02d}:00+00:00"}
                                    for j, (i, s, t) in enumerate(session)]}
                         for n, session in enumerate(turns)],
            "questions": [q]}


def write(tmp_path: Path, doc: dict[str, Any], name: str = "ana.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize(("question", "message"), [
    ({"stale": []}, "needs the stale turns"),
    ({"kind": "past"}, "only current questions have stale"),
    ({"kind": "later"}, "not one of current, past, change, control"),
    ({"gold": ["D9:9"]}, "D9:9 name no turn"),
    ({"gold": ["D1:1"]}, "both gold and stale"),
    ({"gold": []}, "gold is empty"),
    ({"asked_at": "2025-02-01T00:00:00+00:00"}, "before its gold was said"),
    ({"asked_at": "2025-08-01T00:00:00"}, "no UTC offset"),
])
def test_a_broken_question_is_refused_with_the_rule_it_breaks(
        tmp_path: Path, question: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        load_change_file(write(tmp_path, conversation(**question)))
    assert "ana.json question 'ana-q1'" in str(err.value)


def test_turns_out_of_time_order_and_duplicate_ids_are_refused(tmp_path: Path) -> None:
    doc = conversation()
    doc["sessions"][1]["turns"][0]["timestamp"] = "2024-01-01T00:00:00+00:00"
    with pytest.raises(ValueError, match="before the previous turn"):
        load_change_file(write(tmp_path, doc))
    doc = conversation()
    doc["sessions"][1]["turns"][1]["id"] = "D2:1"
    with pytest.raises(ValueError, match="turn id used twice"):
        load_change_file(write(tmp_path, doc))
    folder = tmp_path / "set"
    folder.mkdir()
    write(folder, conversation(), "a.json")
    write(folder, conversation(), "b.json")
    with pytest.raises(ValueError, match="conversation id 'ana' is used twice"):
        load_change([folder])


# -- the shipped set -----------------------------------------------------------------------


def test_the_shipped_set_is_loaded_whole_and_meets_its_brief() -> None:
    conversations = load_change()
    questions = [q for c in conversations for q in c.questions]
    assert len(conversations) >= 10 and len(questions) >= 150
    share = {kind: sum(q.kind == kind for q in questions) / len(questions) for kind in KINDS}
    assert 0.35 <= share["current"] <= 0.45
    assert all(0.15 <= share[kind] <= 0.25 for kind in ("past", "change", "control"))
    for conv in conversations:
        assert len(conv.sessions) >= 6
        months = (conv.turns[-1].timestamp - conv.turns[0].timestamp).days / 30
        assert months >= 3, conv.id
    roles = [c for c in conversations if set(c.speakers) == {"user", "assistant"}]
    assert len(roles) >= 2  # OpenAI-style logs, where the person introduces themselves


# -- a run ---------------------------------------------------------------------------------


def test_a_tiny_conversation_end_to_end_with_bm25(tmp_path: Path) -> None:
    data = write(tmp_path, conversation(), "ana.json")
    summary = run_change(["bm25"], load_change([data]), log_dir=tmp_path / "logs",
                         config_overrides=FAST, show_progress=False)
    assert summary["schema_version"] == SCHEMA_VERSION and summary["questions"] == 1
    bm25 = summary["presets"]["bm25"]
    assert set(bm25["overall"]) >= {"R@1", "R@5", "N@5", "Hit@1", "stale_first@5", "n"}
    # "live" is only in the January turn: BM25 ranks the stale value first
    assert bm25["by_kind"]["current"]["stale_first@5"] == 100.0
    assert bm25["by_kind"]["current"]["Hit@1"] == 0.0
    assert bm25["by_kind"]["current"]["R@5"] == 100.0  # five turns in all
    rows = [json.loads(line)
            for line in (tmp_path / "logs" / "change-bm25.jsonl").read_text().splitlines()]
    assert rows[0]["retrieved_turns"][0] == "D1:1" and rows[0]["stale_first"] == 1.0
    assert rows[0]["category"] == "current" and rows[0]["asked_at"].startswith("2025-07-01")
    assert rows[0]["future"] == [] and bm25["future_seen"] == 0  # asked after every turn
    assert compare_logs(rows, rows).questions == 1  # `bench compare` reads the log
    table = format_table(summary)
    assert "stale-first" in table and "bm25" in table.splitlines()[0]


def test_each_question_is_searched_as_of_the_time_it_is_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[datetime | None] = []
    search = Memory.search

    def spy(self: Memory, query: str, **kwargs: Any) -> Any:
        seen.append(kwargs.get("as_of"))
        return search(self, query, **kwargs)

    monkeypatch.setattr(Memory, "search", spy)
    run_change(["bm25"], load_change([write(tmp_path, conversation())]), config_overrides=FAST,
               show_progress=False)
    assert seen == [datetime(2025, 7, 1, 9, tzinfo=UTC)]


def test_turns_said_after_the_question_are_picked_out() -> None:
    said = {"a": datetime(2025, 1, 1, tzinfo=UTC), "b": datetime(2025, 6, 1, tzinfo=UTC)}
    asked = datetime(2025, 3, 1, tzinfo=UTC)
    assert said_after(["b", "x", "a"], said, asked) == ["b"]
    assert said_after(["a"], said, datetime(2025, 1, 1, tzinfo=UTC)) == []  # at, not after


def test_the_command_names_what_is_wrong_with_a_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from labile_cli import main

    bad = write(tmp_path, conversation(kind="later"))
    code = main(["bench", "change", str(bad), "--preset", "bm25", "--no-progress"])
    err = capsys.readouterr().err
    assert code != 0 and "ana.json question 'ana-q1'" in err and "not one of current" in err


def test_the_command_prints_the_table_and_writes_the_summary(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from labile_cli import main

    data, out = write(tmp_path, conversation()), tmp_path / "summary.json"
    code = main(["bench", "change", str(data), "--preset", "bm25", "--json", str(out),
                 "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0 and "1 conversations, 1 questions" in printed and "stale-first" in printed
    assert json.loads(out.read_text())["presets"]["bm25"]["overall"]["n"] == 1


def test_the_command_refuses_a_cut_off_below_one(capsys: pytest.CaptureFixture[str]) -> None:
    from labile_cli import main

    code = main(["bench", "change", "--preset", "bm25", "--k", "0", "5"])
    assert code != 0 and "--k takes positive cut-offs, got 0 5" in capsys.readouterr().err


def test_the_summary_counts_the_replaced_nodes_and_the_llm_calls(tmp_path: Path) -> None:
    """``realm`` records the move (the Lisbon turn replaced), ``bm25`` records no change;
    neither calls a model offline."""
    doc = conversation()
    doc["sessions"][1]["turns"][0]["text"] = "We moved to Porto! The new house has a garden."
    data = load_change([write(tmp_path, doc)])
    summary = run_change(["realm", "bm25"], data, config_overrides=FAST, show_progress=False)
    realm, bm25 = summary["presets"]["realm"], summary["presets"]["bm25"]
    assert realm["replaced_nodes"] >= 1 and bm25["replaced_nodes"] == 0
    assert realm["llm_calls_ingest"] == 0 == bm25["llm_calls_ingest"]
    assert "nodes replaced (ingest)" in format_table(summary)


def test_the_command_limits_the_conversations_and_puts_the_llm_in_every_preset(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from labile_cli import main

    write(tmp_path, conversation())
    write(tmp_path, {**conversation(id="bea-q1"), "id": "bea"}, "bea.json")
    out = tmp_path / "summary.json"
    code = main(["bench", "change", str(tmp_path), "--preset", "bm25", "--limit-conversations",
                 "1", "--llm", "scripted", "--json", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["conversations"] == 1
    code = main(["bench", "change", "--preset", "bm25", "--limit-conversations", "0"])
    assert code != 0 and "--limit-conversations takes a positive count, got 0" \
        in capsys.readouterr().err
