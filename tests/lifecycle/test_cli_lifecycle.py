"""The data commands end to end: add (batches, resume), list, get, forget, purge, export, import."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from lifecycle_helpers import CHAT

from labile import Memory
from labile_cli import main

HASHING_BM25 = 'preset = "bm25"\n[embedder]\ntype = "hashing"\n'


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps({"role": s, "content": t}) for s, t in CHAT) + "\n")
    return path


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str], log: Path) -> str:
    cfg = tmp_path / "m.toml"
    cfg.write_text(HASHING_BM25)
    path = str(tmp_path / "store")
    code, out, err = run(capsys, "add", "-c", str(cfg), "--path", path, "-n", "u",
                         "--batch-size", "3", str(log))
    assert code == 0, err
    assert out.startswith("added 10, already stored 0") and "batches 4" in out
    return path


def test_add_twice_adds_nothing_and_the_store_remembers_its_pipeline(
    store: str, log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "add", "--path", store, "-n", "u", str(log))  # no config
    assert code == 0 and out.startswith("added 0, already stored 10")
    code, _, err = run(capsys, "add", "--path", store, "-n", "u", "--preset", "realm", str(log))
    assert code == 2 and "would store different things" in err and "\n" not in err.rstrip()


def test_an_interrupted_add_keeps_acknowledged_batches_and_resumes(
    store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    more = tmp_path / "more.jsonl"
    more.write_text("\n".join(json.dumps({"role": "user", "content": f"fact number {i}"})
                              for i in range(9)))
    real_add = Memory.add
    calls = {"n": 0}

    def flaky_add(self: Memory, *args: Any, **kw: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real_add(self, *args, **kw)

    monkeypatch.setattr(Memory, "add", flaky_add)
    code, out, err = run(capsys, "add", "--path", store, "-n", "u", "--batch-size", "3",
                         str(more))
    assert code == 130 and "added 6" in out and "run the same command again" in err
    monkeypatch.setattr(Memory, "add", real_add)
    code, out, _ = run(capsys, "add", "--path", store, "-n", "u", "--batch-size", "3", str(more))
    assert code == 0 and out.startswith("added 3, already stored 6")


def test_list_get_forget_purge(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--path", store, "-n", "u", "--limit", "4", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 4 and rows[0]["text"] == CHAT[0][1]
    code, out, _ = run(capsys, "list", "--path", store, "-n", "u", "--offset", "8")
    assert "(2 of 10 from offset 8)" in out
    code, out, _ = run(capsys, "list", "--path", store, "-n", "u", "--nodes", "--limit", "1")
    assert "sources:" in out and "next: --offset 1" in out
    first = rows[0]["id"]
    code, out, err = run(capsys, "get", "--path", store, "-n", "u", first, "nope")
    assert code == 1 and CHAT[0][1] in out and "not found in 'u': nope" in err
    code, out, _ = run(capsys, "forget", "--path", store, "-n", "u", first, "--erase")
    assert code == 0 and "observations 1" in out and "nodes removed 1" in out
    code, out, _ = run(capsys, "search", "--path", store, "-n", "u", "pottery", "--json")
    assert first not in {h["id"] for h in json.loads(out)["hits"]}
    code, _, err = run(capsys, "purge", "--path", store, "-n", "u")
    assert code == 2 and "pass --yes" in err
    code, out, _ = run(capsys, "purge", "--path", store, "-n", "u", "--yes")
    assert code == 0
    code, _, err = run(capsys, "list", "--path", store, "-n", "u")
    assert code == 1 and "no namespace 'u' in this store (it is empty)" in err


def test_export_import_round_trip(store: str, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    dump = tmp_path / "u.jsonl"
    code, _, _ = run(capsys, "export", "--path", store, "-n", "u", "-o", str(dump))
    header = json.loads(dump.read_text().splitlines()[0])
    assert code == 0 and header["format"] == "labile-export" and header["version"] == 1
    cfg = tmp_path / "m.toml"
    other = str(tmp_path / "other")
    code, out, err = run(capsys, "import", "-c", str(cfg), "--path", other, str(dump))
    assert code == 0, err
    assert out.startswith("observations 10, nodes 10")
    code, _, err = run(capsys, "import", "--path", other, str(dump))
    assert code == 2 and "already holds data" in err
    for path in (store, other):
        code, out, _ = run(capsys, "search", "--path", path, "-n", "u", "tram studio", "--json")
        assert code == 0
    a, b = (json.loads(run(capsys, "search", "--path", p, "-n", "u", "Sam", "--json")[1])
            for p in (store, other))
    assert [h["id"] for h in a["hits"]] == [h["id"] for h in b["hits"]]


def test_read_only_commands_refuse_a_missing_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "typo"
    for args in (["search", "-n", "u", "x"], ["stats"], ["list", "-n", "u"],
                 ["export", "-n", "u"], ["inspect", "allmem", "-n", "u"]):
        code, _, err = run(capsys, *args, "--path", str(typo))
        assert code == 1 and f"no store at {typo}" in err, args
        assert err.count("\n") == 1  # one line, no traceback
    assert not typo.exists()


def test_inspect_of_another_bundle_says_so(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "inspect", "allmem", "--path", store, "-n", "u")
    assert code == 2 and "built by the 'baseline' bundle" in err


def test_global_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.startswith("labile ")
    with pytest.raises(SystemExit) as exc:
        main(["--log-level", "loud", "plugins"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "invalid choice: 'loud'" in err and err.count("\n") == 1
    code, _, err = run(capsys, "add", "-n", "u", "/nonexistent/chat.jsonl")
    assert code == 2 and err == "error: /nonexistent/chat.jsonl: no such file\n"
    with pytest.raises(Exception, match="no such file"):
        main(["--debug", "add", "-n", "u", "/nonexistent/chat.jsonl"])


def test_benchmark_files_go_one_namespace_per_conversation_or_all_into_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from labile_io.formats import ReadOptions, read_file

    data = Path(__file__).resolve().parents[1] / "bench" / "data" / "locomo_tiny.json"
    convs = read_file(data, None, ReadOptions(default_time=datetime.now(UTC), tz=UTC))
    total = sum(len(c.observations) for c in convs)
    cfg = tmp_path / "m.toml"
    cfg.write_text(HASHING_BM25)
    split, joined = str(tmp_path / "split"), str(tmp_path / "joined")
    code, out, err = run(capsys, "add", "-c", str(cfg), "--path", split, str(data))
    assert code == 0 and out.startswith(f"added {total},"), err
    for conv in convs:
        code, out, _ = run(capsys, "list", "--path", split, "-n", str(conv.namespace))
        assert f"of {len(conv.observations)} from offset 0" in out
    code, out, err = run(capsys, "add", "-c", str(cfg), "--path", joined, "-n", "all", str(data))
    assert code == 0 and out.startswith(f"added {total},"), err  # no id collides
