"""``labile serve http`` and ``labile bench http`` as commands: refusals, a real server process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from webdriver import free_port

from labile_cli import main


def test_a_public_bind_without_a_token_is_refused(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LABILE_HTTP_TOKEN", raising=False)
    assert main(["serve", "http", "-n", "maya", "--http", "0.0.0.0:8799"]) == 2
    assert "without a token" in capsys.readouterr().err


def test_nothing_to_serve_is_refused_before_any_store_opens(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "http", "--path", str(tmp_path / "s")]) == 2
    assert "--all-namespaces" in capsys.readouterr().err
    assert main(["serve", "http", "--path", str(tmp_path / "s"), "-n", "has space"]) == 2
    assert "bad namespace" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def _get(url: str, token: str | None = None) -> tuple[int, dict[str, object]]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"}
                                 if token else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_command_serves_the_api_behind_its_token(tmp_path: Path) -> None:
    cfg = tmp_path / "memory.toml"
    cfg.write_text('preset = "realm"\n[embedder]\ntype = "hashing"\n', encoding="utf-8")
    store = str(tmp_path / "store")
    port = free_port()
    env = {**os.environ, "LABILE_HTTP_TOKEN": "t0ken", "PYTHONUNBUFFERED": "1"}
    log = tmp_path / "server.log"
    with open(log, "wb") as err:
        argv = [sys.executable, "-m", "labile_cli", "serve", "http", "-c", str(cfg), "--path",
                store, "-n", "maya", "--http", f"127.0.0.1:{port}"]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, log.read_text(encoding="utf-8")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the server did not listen"
            time.sleep(0.2)
        base = f"http://127.0.0.1:{port}"
        status, body = _get(f"{base}/api/namespaces")
        assert status == 401 and "Bearer" in str(body["error"])
        status, body = _get(f"{base}/api/namespaces", "t0ken")
        assert status == 200 and body["namespaces"][0]["name"] == "maya"  # type: ignore[index]
        with urllib.request.urlopen(f"{base}/", timeout=30) as res:
            assert res.status == 200 and b"<title>labile" in res.read()
    finally:
        proc.terminate()
        proc.wait(timeout=60)


@pytest.mark.slow
def test_bench_http_reports_both_sides_at_each_client_count(tmp_path: Path) -> None:
    from labile_bench.http_serve import HttpBenchSettings, run_bench

    cfg = tmp_path / "memory.toml"
    cfg.write_text('preset = "realm"\n[embedder]\ntype = "hashing"\n', encoding="utf-8")
    summary = run_bench(HttpBenchSettings(config=str(cfg), clients=(1, 3), seconds=0.5,
                                          turns=12, k=3))
    for side in ("in_process", "http"):
        for n in ("1", "3"):
            for op in ("search", "add"):
                phase = summary[side][n][op]
                assert phase["requests"] >= 1 and phase["p95_ms"] >= phase["p50_ms"] > 0
    assert summary["server_memory"]["rss_mb"] > 0
    assert set(summary["http_vs_in_process"]["3"]) == {"search", "add"}
