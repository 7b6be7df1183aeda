"""The litellm client against a real llama.cpp server on loopback (no key, no network).

A module fixture starts ``python -m llama_cpp.server`` with SmolLM2 on
127.0.0.1 (a free port) and stops it afterwards. The client is configured as
the docs say, in one line: ``model = "openai/<alias>"`` plus ``api_base``.
Skips with the install command where the runtime, its server extra or the
model package is missing.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from realmodel import missing_server

from extras import REQUIRE
from labile._errors import LLMOutputError

pytestmark = [pytest.mark.extras,
              pytest.mark.skipif(missing_server() is not None and not REQUIRE,
                                 reason=str(missing_server()))]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 40},
                   "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``api_base`` of a llama.cpp server serving SmolLM2 as ``smollm2``."""
    from labile_llamacpp.config import LlamaCppConfig
    from labile_llamacpp.source import model_file

    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_file(LlamaCppConfig())),
           "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "1"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited {proc.returncode}: {_tail(log)}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama.cpp server did not start within 120 s: {_tail(log)}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-2000:]


def _alive(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/models", timeout=5) as reply:
            return reply.status == 200
    except OSError:
        return False


def test_one_line_config_gets_schema_constrained_json(server: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from labile_litellm.client import LiteLLMClient
    from labile_litellm.config import LiteLLMConfig

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local server needs no key
    client = LiteLLMClient(LiteLLMConfig(model="openai/smollm2", api_base=server,
                                         max_tokens=48, max_concurrency=1, timeout_s=300))
    reply = client.complete_json("Alice is 31 years old. Give her name and age.", SCHEMA,
                                 operation="probe")
    assert reply["name"] and isinstance(reply["age"], int)
    # llama-cpp-python's server refuses OpenAI's json_schema dialect (with a 500); the
    # client stepped down at once to the dialect it reads, and remembers it
    assert client.structured_mode(SCHEMA) == "json_object_schema"
    usage = client.usage.snapshot()["probe"]
    assert usage["failures"] == 1 and usage["calls"] == 2
    assert usage["prompt_tokens"] > 20 and usage["completion_tokens"] > 0  # the server's counts


def test_realm_extraction_schema_does_not_crash_the_server(server: str) -> None:
    """REALM's extraction schema killed llama-cpp-python's server (segfault) as sent before."""
    from labile_litellm.client import LiteLLMClient
    from labile_litellm.config import LiteLLMConfig
    from labile_realm import prompts

    client = LiteLLMClient(LiteLLMConfig(model="openai/smollm2", api_base=server,
                                         structured_output="json_object_schema", max_tokens=96,
                                         max_repairs=0, max_concurrency=1, timeout_s=300))
    # a 135M model may not fit its reply in 96 tokens; the point is that the server lives
    with contextlib.suppress(LLMOutputError):
        client.complete_json("Turn 'I adopted a puppy named Max.' into memory units.",
                             prompts.EXTRACT_SCHEMA, operation="realm.extract",
                             system=prompts.SYSTEM)
    assert _alive(server)
