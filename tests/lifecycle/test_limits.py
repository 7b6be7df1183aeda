"""Size limits per observation and per batch at every entry point, and chunking with provenance."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_helpers import chat

from labile import (
    MAX_OBSERVATION_CHARS,
    InputError,
    Limits,
    Memory,
    Observation,
    chunk_observation,
)
from labile_cli import main

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
HASHING_BM25 = 'preset = "bm25"\n[embedder]\ntype = "hashing"\n'


def _obs(oid: str, text: str, **kw: object) -> Observation:
    return Observation(id=oid, text=text, timestamp=T0, speaker="Ana", **kw)  # type: ignore[arg-type]


def _memory(**kw: object) -> Memory:
    return Memory.open({"preset": "bm25", "store": {"type": "memory"},
                        "embedder": {"type": "hashing"}}, **kw)


def test_an_observation_over_the_limit_is_refused_whole_naming_the_limit_and_the_ways_out() -> None:
    with _memory(limits=Limits(observation_chars=1_000)) as memory:
        memory.add(chat("k"), namespace="u")
        before = memory.list("u").total
        with pytest.raises(InputError) as err:
            memory.add([_obs("ok", "short"), _obs("big", "word " * 300)], namespace="u")
        message = str(err.value)
        assert "observations[1] ('big') holds 1,503 characters" in message
        assert "limit is 1,000" in message
        assert "chunk_observation" in message and "--max-text-chars" in message
        assert memory.list("u").total == before  # nothing of the batch was written


def test_speaker_and_metadata_count_toward_the_limit() -> None:
    with _memory(limits=Limits(observation_chars=100)) as memory:
        with pytest.raises(InputError, match="holds"):
            memory.add([Observation(id="r", text="hi", speaker="x" * 200, timestamp=T0)],
                       namespace="u")
        with pytest.raises(InputError, match="holds"):
            memory.add([_obs("m", "hi", metadata={"note": "y" * 200})], namespace="u")


def test_a_batch_over_the_limit_is_refused() -> None:
    with _memory(limits=Limits(observation_chars=100, batch_chars=250)) as memory:
        with pytest.raises(InputError, match="this batch holds 300 characters.*250"):
            memory.add([_obs(f"o{i}", "z" * 97) for i in range(3)], namespace="u")
        assert memory.list("u").total == 0


def test_the_default_limit_and_raising_it() -> None:
    text = "Long note. " * (MAX_OBSERVATION_CHARS // 10)
    with _memory() as memory:
        assert memory.limits == Limits()
        with pytest.raises(InputError, match="100,000 per observation"):
            memory.add([_obs("doc", text)], namespace="u")
    with _memory(limits=Limits(observation_chars=2 * MAX_OBSERVATION_CHARS)) as memory:
        assert memory.add([_obs("doc", text)], namespace="u").added == ["doc"]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "10"])
def test_limits_must_be_positive_integers(bad: object) -> None:
    with pytest.raises(InputError, match="positive integer"):
        Limits(observation_chars=bad)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="limits must be a labile.Limits"):
        _memory(limits={"observation_chars": 5})


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \n\tc."), max_size=400), st.integers(1, 60))
def test_chunks_tile_the_text_with_their_provenance(text: str, size: int) -> None:
    """For any text and size: the parts are the text's non-blank stretches in order, none
    longer than the size, each naming its original and exact character range."""
    obs = _obs("doc", text or "x", session="s1", metadata={"caption": "c"})
    parts = chunk_observation(obs, size)
    if len(obs.text) <= size:
        assert parts == [obs]
        return
    position = 0
    for n, part in enumerate(parts, 1):
        where = part.metadata["chunk_of"]
        assert part.id == f"doc#{n}" and where["part"] == n and where["parts"] == len(parts)
        assert where["id"] == "doc" and obs.text[where["start"]:where["end"]] == part.text
        assert 0 < len(part.text) <= size and part.text.strip()
        assert not obs.text[position:where["start"]].strip()  # only blank stretches skipped
        position = where["end"]
        assert (part.timestamp, part.speaker, part.session) == (T0, "Ana", "s1")
        assert part.metadata["caption"] == "c"
    assert not obs.text[position:].strip()


def test_limits_fit_cuts_what_is_too_long_so_that_every_part_is_accepted() -> None:
    limits = Limits(observation_chars=500)
    doc = _obs("doc", "\n".join(f"Line {i} of a pasted document." for i in range(200)))
    parts = limits.fit([_obs("a", "short"), doc])
    assert parts[0].id == "a" and len(parts) > 2
    with _memory(limits=limits) as memory:
        report = memory.add(parts, namespace="u")
        assert len(report.added) == len(parts)
        stored = memory.get("u", [p.id for p in parts[1:]])
        assert "".join(p.text for p in stored) == doc.text  # line breaks end the parts


# -- the command line ------------------------------------------------------------------------


def _log(path: Path, texts: list[str]) -> Path:
    path.write_text("\n".join(json.dumps({"role": "user", "content": t}) for t in texts) + "\n")
    return path


def test_cli_add_refuses_raises_or_chunks(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "m.toml"
    cfg.write_text(HASHING_BM25)
    log = _log(tmp_path / "chat.jsonl", ["hello there", "A pasted page. " * 100])
    base = ["add", "-c", str(cfg), "--path", str(tmp_path / "s"), "-n", "u", str(log)]
    assert main([*base, "--max-text-chars", "1000"]) != 0
    err = capsys.readouterr().err
    assert "characters; the limit is 1,000" in err and "--chunk" in err
    assert "--max-text-chars" in err and "\n" not in err.rstrip()
    assert main([*base, "--max-text-chars", "1000", "--chunk"]) == 0
    assert capsys.readouterr().out.startswith("added 3,")  # the short one and two parts
    with Memory.open(path=tmp_path / "s") as memory:
        parts = [o for o in memory.list("u").items if "chunk_of" in o.metadata]
        assert [p.metadata["chunk_of"]["part"] for p in parts] == [1, 2]
        assert all(len(p.text) <= 1000 for p in parts)


def test_cli_add_splits_batches_by_characters(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "m.toml"
    cfg.write_text(HASHING_BM25)
    log = _log(tmp_path / "chat.jsonl", ["x" * 90] * 6)
    code = main(["add", "-c", str(cfg), "--path", str(tmp_path / "s"), "-n", "u", str(log),
                 "--max-batch-chars", "200"])
    out = capsys.readouterr().out
    assert code == 0 and "batches 3" in out  # two messages of 90 + 'user' per batch


def test_cli_limit_options_refuse_non_positive(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path / "chat.jsonl", ["hi"])
    with pytest.raises(SystemExit):
        main(["add", "--path", str(tmp_path / "s"), "-n", "u", str(log), "--max-text-chars", "0"])
    assert "must be a positive integer" in capsys.readouterr().err


def test_import_enforces_the_observation_limit(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    with Memory.open({"preset": "bm25", "embedder": {"type": "hashing"}},
                     path=tmp_path / "a", limits=Limits(observation_chars=10_000)) as memory:
        memory.add([_obs("doc", "Some text. " * 500)], namespace="u")
    assert main(["export", "--path", str(tmp_path / "a"), "-n", "u",
                 "-o", str(tmp_path / "e.jsonl")]) == 0
    target = ["import", "--path", str(tmp_path / "b"), "-n", "v", str(tmp_path / "e.jsonl")]
    assert main([*target, "--max-text-chars", "1000"]) != 0
    assert "exported observation 'doc' holds" in capsys.readouterr().err
    with Memory.open(path=tmp_path / "b") as memory:
        assert memory.list("v").total == 0
    assert main([*target, "--max-text-chars", "10000"]) == 0


def test_the_mcp_server_uses_the_same_limit() -> None:
    pytest.importorskip("mcp", reason="pip install -e '.[mcp]'")
    import argparse

    from labile_mcp.commands import policy_from, serve_mcp_options

    parser = argparse.ArgumentParser()
    serve_mcp_options(parser)
    args = parser.parse_args(["-n", "u"])
    assert args.max_text_chars == MAX_OBSERVATION_CHARS
    assert policy_from(args).max_text_chars == MAX_OBSERVATION_CHARS
