"""LLM credentials: a missing key fails at once, and no key reaches any log.

The echo test runs real ``litellm.completion`` against a loopback server that
answers every request with a 401 whose body quotes the key it was sent, the
worst case for a provider error, with litellm's own debug logging on.
"""

from __future__ import annotations

import http.server
import json
import logging
import random
import threading
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("litellm")

from labile_litellm.client import LiteLLMClient, load_litellm
from labile_litellm.config import LiteLLMConfig
from labile_llm.retry import LLMAuthError, LLMCallError

# No provider prefix: nothing shaped like a key for a pattern-based mask to catch.
SECRET = "q7Zt0a9f3LmN4pX2vB8cR6yH1wKs"
SECRET_TAIL = SECRET[4:]  # what would survive a partial mask


@pytest.fixture(autouse=True)
def _litellm_own_warning_filters() -> None:
    """litellm's import-time warning filters, which pytest resets per test."""
    for message in (".*conflict with protected namespace.*", ".*`ReadOnly` qualifier.*",
                    ".*Accessing the.*attribute on the instance is deprecated.*",
                    "Pydantic serializer warnings"):
        warnings.filterwarnings("ignore", message=message)


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    return load_litellm()


class _EchoKey(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        body = json.dumps({"error": {"message": f"The key {key} is not valid here",
                                     "type": "invalid_request_error",
                                     "code": "invalid_api_key"}})
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def echo_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoKey)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_key_echoed_by_the_provider_is_in_no_log(
    litellm: ModuleType, echo_server: str, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("LABILE_CUSTOM_KEY", SECRET)
    monkeypatch.setattr(litellm, "suppress_debug_info", False)
    previous = logging.getLogger("LiteLLM").level
    litellm._turn_on_debug()
    try:
        client = LiteLLMClient(LiteLLMConfig(
            model="openai/echo", api_base=echo_server, api_key_env="LABILE_CUSTOM_KEY",
            max_retries=0), litellm_module=litellm, sleep=lambda s: None,
            rng=random.Random(0))
        with caplog.at_level(logging.DEBUG), pytest.raises(LLMCallError) as caught:
            client.complete_text("hello", operation="chat")
    finally:
        logging.getLogger("LiteLLM").setLevel(previous)
    seen = caplog.text + "".join(capfd.readouterr())
    assert "is not valid here" in seen + str(caught.value)
    assert caplog.records, "litellm logged nothing: the test would prove nothing"
    assert SECRET_TAIL not in seen
    assert SECRET_TAIL not in str(caught.value)


def test_a_missing_provider_key_fails_at_once_naming_it(
    litellm: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(litellm, "completion", lambda **kw: calls.append(kw))
    sleeps: list[float] = []
    client = LiteLLMClient(LiteLLMConfig(model="gpt-4o-mini", max_retries=5),
                           litellm_module=litellm, sleep=sleeps.append)
    for _ in range(2):  # every later call too, without a retry
        with pytest.raises(LLMAuthError, match="OPENAI_API_KEY") as caught:
            client.complete_text("hello", operation="chat")
        assert caught.value.kind.value == "auth"
    assert calls == [] and sleeps == []


def test_a_set_provider_key_passes_the_check(
    litellm: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    client = LiteLLMClient(LiteLLMConfig(model="gpt-4o-mini"), litellm_module=litellm)
    client.check_environment()
