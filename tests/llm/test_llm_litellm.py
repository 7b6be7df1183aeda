"""The ``litellm`` llm, offline: litellm's mock responses or a fake completion function."""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from labile._config import structure_options
from labile._errors import LLMOutputError, MissingDependencyError
from labile._memory import Memory
from labile._protocols import LLMClient
from labile._registry import collect
from labile._usage import UsageMeter
from labile_litellm.client import LiteLLMClient
from labile_litellm.config import LiteLLMConfig
from labile_llm.retry import LLMAuthError, LLMRateLimitError, LLMRequestError, LLMTimeoutError
from labile_llm.schema_bounds import grammar_schema
from labile_llm.scripted import ScriptedLLM

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "tags": {"type": "array",
                                                       "items": {"type": "string"}}},
    "required": ["a"],
}
SECRET = "sk-labile-test-0123456789SECRET"
P = {"llm_provider": "openai", "model": "gpt-4o-mini"}


def _client(litellm: ModuleType, completion: Any, fake_time: Any = None, **options: Any
            ) -> LiteLLMClient:
    return LiteLLMClient(
        LiteLLMConfig(**options), completion=completion, litellm_module=litellm,
        sleep=fake_time.sleep if fake_time else (lambda s: None),
        clock=fake_time.clock if fake_time else time.monotonic, rng=random.Random(0),
    )


# -- construction, registration, imports ------------------------------------------


def test_satisfies_protocol_and_defaults(litellm_module: ModuleType) -> None:
    client = LiteLLMClient(litellm_module=litellm_module)
    assert isinstance(client, LLMClient)
    assert client.model == "gpt-4o-mini" and client.name == "litellm:gpt-4o-mini"
    cfg = LiteLLMConfig()
    assert (cfg.temperature, cfg.max_tokens, cfg.structured_output, cfg.max_repairs) == (
        0.0, 1024, "auto", 2)


def test_config_is_strict_and_secret_free(make_pm: Callable[..., Any]) -> None:
    registries = collect(make_pm())
    component = registries["llm"].get("litellm")
    assert component.config is LiteLLMConfig
    cfg = structure_options(component, {"model": "ollama/llama3.1",
                                        "api_base": "http://localhost:11434",
                                        "requests_per_minute": 30,
                                        "structured_output": "json_object"}, "$.llm")
    assert cfg.requests_per_minute == 30
    from labile._errors import ConfigError

    with pytest.raises(ConfigError, match="api_key"):
        structure_options(component, {"api_key": SECRET}, "$.llm")
    with pytest.raises(ConfigError):
        structure_options(component, {"structured_output": "xml"}, "$.llm")
    with pytest.raises(ConfigError):
        structure_options(component, {"max_concurrency": 0}, "$.llm")
    names = {f.name for f in __import__("attrs").fields(LiteLLMConfig)}
    assert not any("key" in n and n != "api_key_env" for n in names)


def test_importing_labile_does_not_import_litellm() -> None:
    code = (
        "import sys, labile, labile_llm.answer, labile_bench.qa, labile_bench.judge, "
        "labile_bench.longmemeval_run, labile_llm.retry, labile_llm.cache, labile_litellm\n"
        "from labile._plugins import get_plugin_manager\n"
        "from labile._registry import collect\n"
        "r = collect(get_plugin_manager(entry_points=False, extra=[labile_litellm]))\n"
        "assert 'litellm' in r['llm']\n"
        "from labile_llm.tokens import count_tokens_like_litellm\n"
        "assert count_tokens_like_litellm('hello world') == 2\n"
        "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(["core", "plugins", "contrib"]))
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=root, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_without_litellm_registration_works_but_building_fails(
    monkeypatch: pytest.MonkeyPatch, make_pm: Callable[..., Any]
) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)
    registries = collect(make_pm())
    component = registries["llm"].get("litellm")  # still listed
    with pytest.raises(MissingDependencyError, match=r"pip install 'labile\[llm\]'"):
        component.build(LiteLLMConfig(), None)


def test_memory_builds_litellm_from_config(
    litellm_module: ModuleType, make_pm: Callable[..., Any], bm25_config: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch, make_fake: Callable[..., Any],
) -> None:
    monkeypatch.setenv("LABILE_TEST_KEY", SECRET)
    fake = make_fake(['{"answer": "Lisbon", "cited": [1]}'])
    monkeypatch.setattr(litellm_module, "completion", fake)
    bm25_config["llm"] = {"type": "litellm", "model": "gpt-4o-mini",
                          "api_key_env": "LABILE_TEST_KEY"}
    with Memory.open(bm25_config, plugin_manager=make_pm()) as memory:
        assert isinstance(memory.llm, LiteLLMClient)
        assert memory.llm.usage is memory.usage
        table = memory.config.to_table()
        assert table["llm"]["api_key_env"] == "LABILE_TEST_KEY"
        assert SECRET not in json.dumps(table, default=str)
        from labile.testing import observations

        memory.add(observations(["I moved to Lisbon last spring."]), namespace="u1")
        answer = memory.answer("Where did I move?", namespace="u1")
        assert answer.text == "Lisbon"
        stats = memory.stats()["llm"]
        assert stats["answer"]["calls"] == 1 and stats["answer"]["cost_usd"] > 0
        assert SECRET not in json.dumps(stats)
    assert fake.calls[0]["api_key"] == SECRET


# -- structured output -----------------------------------------------------------------


def test_json_schema_mode_where_supported(litellm_module: ModuleType,
                                          make_fake: Callable[..., Any]) -> None:
    fake = make_fake(['{"a": 1}'])
    client = _client(litellm_module, fake)
    assert client.structured_mode(SCHEMA) == "json_schema"
    assert client.complete_json("give me a", SCHEMA, operation="extract facts") == {"a": 1}
    call = fake.calls[0]
    rf = call["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["schema"] == SCHEMA
    assert rf["json_schema"]["name"] == "extract_facts" and rf["json_schema"]["strict"] is False
    assert call["temperature"] == 0.0 and call["max_tokens"] == 1024
    assert call["timeout"] == 60.0 and call["max_retries"] == 0 and call["num_retries"] == 0
    assert "api_key" not in call and "api_base" not in call


@pytest.mark.parametrize(("model", "extra", "mode"), [
    ("ollama/llama3.1", {}, "json_object"),
    ("hosted_vllm/qwen2.5-7b", {}, "json_object"),
    ("nosuchprovider/model", {}, "prompt"),
    # a self-hosted server: litellm cannot know, so the strongest mode is tried first
    ("ollama/llama3.1", {"api_base": "http://localhost:11434"}, "json_schema"),
    ("hosted_vllm/qwen2.5-7b", {"api_base": "http://localhost:8000/v1"}, "json_schema"),
    ("openai/local-model", {"api_base": "http://127.0.0.1:8080/v1"}, "json_schema"),
])
def test_mode_by_capability(litellm_module: ModuleType, make_fake: Callable[..., Any],
                            model: str, extra: dict[str, Any], mode: str) -> None:
    fake = make_fake(['```json\n{"a": 2}\n```'], raw=True)
    client = _client(litellm_module, fake, model=model, **extra)
    assert client.structured_mode(SCHEMA) == mode
    assert client.complete_json("give me a", SCHEMA, operation="extract") == {"a": 2}
    call = fake.calls[0]
    if mode == "json_object":
        assert call["response_format"] == {"type": "json_object"}
    elif mode == "json_schema":
        assert call["response_format"]["json_schema"]["schema"] == SCHEMA
    else:
        assert "response_format" not in call
    in_prompt = json.dumps(SCHEMA, sort_keys=True) in call["messages"][-1]["content"]
    assert in_prompt is (mode != "json_schema")
    assert call.get("api_base") == extra.get("api_base")


def test_local_server_steps_down_to_the_llama_cpp_dialect_without_retrying(
    litellm_module: ModuleType, make_fake: Callable[..., Any], fake_time: Any
) -> None:
    """llama-cpp-python's server answers an OpenAI json_schema format with a 500."""
    rejected = litellm_module.InternalServerError(
        message="1 validation error: {'loc': ('body', 'response_format', 'type'), 'msg': "
                "\"Input should be 'text' or 'json_object'\"}", **P)
    fake = make_fake([rejected, '{"a": 5}', '{"a": 6}'], raw=True)
    client = _client(litellm_module, fake, fake_time, model="openai/smollm2",
                     api_base="http://127.0.0.1:8080/v1")
    assert client.complete_json("a?", SCHEMA, operation="x") == {"a": 5}
    assert fake_time.sleeps == []  # the rejection was not retried
    assert fake.calls[0]["response_format"]["type"] == "json_schema"
    bounded = grammar_schema(SCHEMA, 400)  # the in-process client's bounds
    assert fake.calls[1]["response_format"] == {"type": "json_object", "schema": bounded}
    assert json.dumps(SCHEMA, sort_keys=True) not in fake.calls[1]["messages"][-1]["content"]
    assert client.structured_mode(SCHEMA) == "json_object_schema"
    assert client.usage.snapshot()["x"]["failures"] == 1
    # without an api_base the llama.cpp dialect is skipped: hosted APIs reject it
    hosted = _client(litellm_module, make_fake([rejected, '{"a": 7}'], raw=True))
    assert hosted.complete_json("a?", SCHEMA, operation="x") == {"a": 7}
    assert hosted.structured_mode(SCHEMA) == "json_object"


def test_local_server_decodes_under_the_same_bounds_as_the_in_process_model(
    litellm_module: ModuleType, make_fake: Callable[..., Any]
) -> None:
    """The llama.cpp-server dialect gets string caps and weight steps; the prompt loses
    the schema the server enforces, a hosted model keeps it."""
    schema = {"type": "object", "required": ["w", "s"], "properties": {
        "w": {"type": "number", "minimum": 0, "maximum": 1},
        "s": {"type": "string", "minLength": 3, "maxLength": 1200}}}
    prompt = "Weigh it.\n\nReply with JSON matching this schema:\n" + json.dumps(schema)
    fake = make_fake(['{"w": 0.5, "s": "abc"}'])
    client = _client(litellm_module, fake, model="openai/smollm2",
                     api_base="http://127.0.0.1:8080/v1", structured_output="json_object_schema",
                     max_string_chars=300)
    assert client.complete_json(prompt, schema, operation="x") == {"w": 0.5, "s": "abc"}
    sent = fake.calls[0]["response_format"]["schema"]["properties"]
    assert sent["w"] == {"enum": [i / 20 for i in range(21)]}
    assert sent["s"] == {"type": "string", "minLength": 1, "maxLength": 300}
    assert fake.prompts[0] == "Weigh it.\n\nReply with one JSON value."
    hosted_fake = make_fake(['{"w": 0.5, "s": "abc"}'])
    hosted = _client(litellm_module, hosted_fake, structured_output="json_schema")
    hosted.complete_json(prompt, schema, operation="x")
    assert hosted_fake.prompts[0] == prompt


@pytest.mark.parametrize(("url", "loopback"), [
    ("http://127.0.0.1:8080/v1", True), ("http://localhost:11434", True),
    ("http://[::1]:8000/v1", True), ("127.0.0.2:9", True), ("http://10.0.0.5:8000/v1", False),
    ("https://api.example.com/v1", False), (None, False), ("", False),
])
def test_is_loopback(url: str | None, loopback: bool) -> None:
    from labile_litellm.client import is_loopback

    assert is_loopback(url) is loopback


def test_local_server_gets_a_placeholder_key_never_the_real_one(
    litellm_module: ModuleType, make_fake: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from labile_litellm.client import LOCAL_KEY

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    fake = make_fake(['{"a": 1}'], raw=True)
    _client(litellm_module, fake, model="openai/m", api_base="http://127.0.0.1:9/v1"
            ).complete_json("a?", SCHEMA, operation="x")
    assert fake.calls[0]["api_key"] == LOCAL_KEY
    monkeypatch.setenv("LOCAL_SERVER_KEY", "local-secret")
    _client(litellm_module, fake, model="openai/m", api_base="http://127.0.0.1:9/v1",
            api_key_env="LOCAL_SERVER_KEY").complete_json("a?", SCHEMA, operation="x")
    assert fake.calls[1]["api_key"] == "local-secret"
    _client(litellm_module, fake, model="openai/m", api_base="https://proxy.example.com/v1"
            ).complete_json("a?", SCHEMA, operation="x")
    assert "api_key" not in fake.calls[2]  # a remote endpoint: the provider's own key


def test_forced_modes_and_non_object_schema(litellm_module: ModuleType,
                                            make_fake: Callable[..., Any]) -> None:
    fake = make_fake(['[1, 2]'])
    client = _client(litellm_module, fake, structured_output="prompt")
    assert client.structured_mode(SCHEMA) == "prompt"
    auto = _client(litellm_module, fake)
    array_schema = {"type": "array", "items": {"type": "integer"}}
    assert auto.structured_mode(array_schema) == "prompt"  # providers force an object
    assert auto.complete_json("list", array_schema, operation="x") == [1, 2]
    assert "response_format" not in fake.calls[0]
    forced = _client(litellm_module, fake, structured_output="json_object")
    assert forced.structured_mode(SCHEMA) == "json_object"
    assert auto.structured_mode(None) == "text"


def _events(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The labile events caplog saw, as their key-value dicts."""
    return [r.labile for r in caplog.records if hasattr(r, "labile")]


def test_steps_down_when_provider_rejects_response_format(
    litellm_module: ModuleType, make_fake: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    rejected = litellm_module.UnsupportedParamsError(
        message="response_format json_schema is not supported", **P)
    fake = make_fake([rejected, '{"a": 3}', '{"a": 4}'])
    client = _client(litellm_module, fake)
    with caplog.at_level(logging.DEBUG, logger="labile"):
        assert client.complete_json("a?", SCHEMA, operation="x") == {"a": 3}
    logs = _events(caplog)
    assert fake.calls[0]["response_format"]["type"] == "json_schema"
    assert fake.calls[1]["response_format"] == {"type": "json_object"}
    assert client.structured_mode(SCHEMA) == "json_object"  # remembered
    assert client.complete_json("a?", SCHEMA, operation="x") == {"a": 4}
    assert any(e["event"] == "llm_structured_output_rejected" for e in logs)
    forced = _client(litellm_module, make_fake([rejected]), structured_output="json_schema")
    with pytest.raises(LLMRequestError):
        forced.complete_json("a?", SCHEMA, operation="x")


def test_repairs_broken_json_then_fails_closed(litellm_module: ModuleType,
                                               make_fake: Callable[..., Any]) -> None:
    fake = make_fake(["I think a is one", '{"a": "one"}', '{"a": 1}'])
    client = _client(litellm_module, fake, max_repairs=2)
    assert client.complete_json("a?", SCHEMA, operation="extract") == {"a": 1}
    assert len(fake.calls) == 3
    assert "Your previous reply was not valid" in fake.prompts[1]
    assert "expected integer" in fake.prompts[2]
    # the repair prompt already carries the schema: it is not appended twice
    assert fake.prompts[1].count(json.dumps(SCHEMA)) == 1

    bad = make_fake(['{"a": '])
    client = _client(litellm_module, bad, max_repairs=1)
    with pytest.raises(LLMOutputError) as info:
        client.complete_json("a?", SCHEMA, operation="extract")
    assert len(bad.calls) == 2 and info.value.raw == '{"a": '
    # outcomes are tallied by the shared JSONCompletion, as for the local client
    assert client.replies.snapshot() == {"extract": {"rejected:invalid": 1}}


def test_reply_outcomes_are_tallied_per_operation(litellm_module: ModuleType,
                                                  make_fake: Callable[..., Any],
                                                  fake_time: Any) -> None:
    fake = make_fake(['{"a": 1}', "no json", '{"a": 2}'])
    client = _client(litellm_module, fake, max_repairs=1)
    client.complete_json("a?", SCHEMA, operation="extract")
    client.complete_json("a?", SCHEMA, operation="plan")
    late = _client(litellm_module, make_fake([litellm_module.Timeout("late", **P)]),
                   fake_time, max_retries=0)
    with pytest.raises(LLMTimeoutError):
        late.complete_json("a?", SCHEMA, operation="extract")
    assert client.replies.snapshot() == {"extract": {"valid": 1}, "plan": {"repaired": 1}}
    assert late.replies.snapshot() == {"extract": {"rejected:timeout": 1}}
    assert client.replies.totals() == {"valid": 1, "repaired": 1}


# -- retries ----------------------------------------------------------------------------


def test_retries_rate_limits_and_timeouts_with_backoff(
    litellm_module: ModuleType, make_fake: Callable[..., Any], fake_time: Any
) -> None:
    fake = make_fake([litellm_module.RateLimitError("slow", **P),
                      litellm_module.Timeout("late", **P),
                      litellm_module.InternalServerError("oops", **P), "fine"])
    client = _client(litellm_module, fake, fake_time, backoff_base_s=2.0, backoff_max_s=60.0)
    assert client.complete_text("hi", operation="chat") == "fine"
    assert len(fake.calls) == 4
    assert len(fake_time.sleeps) == 3
    assert 1.0 <= fake_time.sleeps[0] <= 2.0 and 2.0 <= fake_time.sleeps[1] <= 4.0
    assert 4.0 <= fake_time.sleeps[2] <= 8.0
    usage = client.usage.snapshot()["chat"]
    assert usage["calls"] == 4 and usage["failures"] == 3


def test_retry_through_litellm_mock_path(litellm_module: ModuleType, fake_time: Any) -> None:
    """The exception comes out of litellm.completion itself (mock_response=<error>)."""
    outcomes = [litellm_module.RateLimitError("slow", **P), "ok"]

    def completion(**kwargs: Any) -> Any:
        return litellm_module.completion(**kwargs, mock_response=outcomes.pop(0))

    client = _client(litellm_module, completion, fake_time)
    assert client.complete_text("hi", operation="chat") == "ok"
    assert len(fake_time.sleeps) == 1


def test_retries_exhausted_raise_typed_error(litellm_module: ModuleType,
                                             make_fake: Callable[..., Any],
                                             fake_time: Any) -> None:
    fake = make_fake([litellm_module.Timeout("late", **P)])
    client = _client(litellm_module, fake, fake_time, max_retries=2)
    with pytest.raises(LLMTimeoutError) as info:
        client.complete_text("hi", operation="chat")
    assert info.value.attempts == 3 and len(fake.calls) == 3 and len(fake_time.sleeps) == 2
    # the scripted model injects the very same type
    assert type(ScriptedLLM.timeout()) is type(info.value)
    rate = _client(litellm_module, make_fake([litellm_module.RateLimitError("x", **P)]),
                   fake_time, max_retries=0)
    with pytest.raises(LLMRateLimitError):
        rate.complete_text("hi", operation="chat")


@pytest.mark.parametrize("name", ["AuthenticationError", "BadRequestError", "NotFoundError",
                                  "ContextWindowExceededError"])
def test_no_retry_on_permanent_errors(litellm_module: ModuleType, make_fake: Callable[..., Any],
                                      fake_time: Any, name: str) -> None:
    exc = getattr(litellm_module, name)("nope", **P)
    fake = make_fake([exc, "never"])
    client = _client(litellm_module, fake, fake_time)
    expected = LLMAuthError if name == "AuthenticationError" else LLMRequestError
    with pytest.raises(expected):
        client.complete_text("hi", operation="chat")
    assert len(fake.calls) == 1 and fake_time.sleeps == []


# -- limits -----------------------------------------------------------------------------


def test_concurrency_limit(litellm_module: ModuleType, make_fake: Callable[..., Any]) -> None:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def hook(_kwargs: dict[str, Any]) -> None:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.03)
        with lock:
            state["now"] -= 1

    fake = make_fake(["ok"], raw=True, hook=hook)
    client = _client(litellm_module, fake, max_concurrency=2)
    threads = [threading.Thread(target=client.complete_text, args=(f"q{i}",),
                                kwargs={"operation": "chat"}) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(fake.calls) == 6 and state["max"] == 2


def test_requests_per_minute(litellm_module: ModuleType, make_fake: Callable[..., Any],
                             fake_time: Any) -> None:
    fake = make_fake(["ok"], raw=True)
    client = _client(litellm_module, fake, fake_time, requests_per_minute=3)
    for i in range(7):
        client.complete_text(f"q{i}", operation="chat")
    assert fake_time.sleeps == [60.0, 60.0]
    # with_options shares the meter and the limiter
    other = client.with_options(temperature=0.5)
    other.complete_text("q", operation="chat")
    assert other.usage is client.usage and client.usage.snapshot()["chat"]["calls"] == 8
    assert fake.calls[-1]["temperature"] == 0.5


# -- accounting and cache ----------------------------------------------------------


def test_accounting_per_operation(litellm_module: ModuleType,
                                  make_fake: Callable[..., Any]) -> None:
    fake = make_fake(['{"a": 1}'])
    usage = UsageMeter()
    client = LiteLLMClient(LiteLLMConfig(), usage=usage, completion=fake,
                           litellm_module=litellm_module)
    client.complete_json("x", SCHEMA, operation="extract")
    client.complete_json("y", SCHEMA, operation="extract")
    client.complete_text("z", operation="answer", max_tokens=5)
    snap = usage.snapshot()
    assert snap["extract"]["calls"] == 2 and snap["answer"]["calls"] == 1
    assert snap["extract"]["prompt_tokens"] == 20 and snap["extract"]["completion_tokens"] == 40
    assert snap["extract"]["cost_usd"] == pytest.approx(2 * 1.35e-05)
    assert snap["extract"]["latency_ms"] > 0
    assert snap["total"]["calls"] == 3
    assert fake.calls[2]["max_tokens"] == 5


def test_tokens_counted_locally_when_provider_omits_usage(
    litellm_module: ModuleType, make_fake: Callable[..., Any]
) -> None:
    def no_usage(_kwargs: dict[str, Any]) -> Any:
        return None

    fake = make_fake(["ok"], raw=True)
    fake.raw = False

    def completion(**kwargs: Any) -> Any:
        fake.calls.append(kwargs)
        return {"choices": [{"message": {"content": "hello world"}}]}

    client = _client(litellm_module, completion, model="ollama/llama3.1")
    assert client.complete_text("hello world", operation="chat") == "hello world"
    snap = client.usage.snapshot()["chat"]
    assert snap["prompt_tokens"] == 2 and snap["completion_tokens"] == 2
    assert snap["cost_usd"] == 0.0


def test_cache_hit_on_identical_call(litellm_module: ModuleType, make_fake: Callable[..., Any],
                                     tmp_path: Path) -> None:
    fake = make_fake(['{"a": 1}'])
    client = _client(litellm_module, fake, cache_dir=str(tmp_path / "cache"))
    assert client.complete_json("x", SCHEMA, operation="extract") == {"a": 1}
    assert client.complete_json("x", SCHEMA, operation="extract") == {"a": 1}
    assert len(fake.calls) == 1
    snap = client.usage.snapshot()["extract"]
    assert snap["calls"] == 2 and snap["cache_hits"] == 1
    assert snap["prompt_tokens"] == 20  # the cached call's tokens are reported again …
    assert snap["cost_usd"] == pytest.approx(1.35e-05)  # … but nothing is paid twice
    rerun = _client(litellm_module, fake, cache_dir=str(tmp_path / "cache"))
    rerun.complete_json("x", SCHEMA, operation="extract")
    assert len(fake.calls) == 1
    rerun.with_options(temperature=0.3).complete_json("x", SCHEMA, operation="extract")
    assert len(fake.calls) == 2  # settings are part of the key
    rerun.complete_json("other prompt", SCHEMA, operation="extract")
    assert len(fake.calls) == 3


# -- secrets ------------------------------------------------------------------------


def test_secrets_never_logged_nor_raised(
    litellm_module: ModuleType, make_fake: Callable[..., Any], monkeypatch: pytest.MonkeyPatch,
    fake_time: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("LABILE_TEST_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET + "-openai")
    leak = litellm_module.AuthenticationError(
        f"Incorrect API key provided: {SECRET} / {SECRET}-openai", **P)
    transient = litellm_module.RateLimitError(f"limit for key {SECRET}", **P)
    fake = make_fake([transient, '{"a": 1}', leak])
    client = _client(litellm_module, fake, fake_time, api_key_env="LABILE_TEST_KEY",
                     cache_dir=str(tmp_path))
    with caplog.at_level(logging.DEBUG, logger="labile"):
        assert client.complete_json("x", SCHEMA, operation="extract") == {"a": 1}
        with pytest.raises(LLMAuthError) as info:
            client.complete_text("y", operation="answer")
    logs = _events(caplog)
    assert all(call["api_key"] == SECRET for call in fake.calls)
    assert len(logs) > 2 and any(e["event"] == "llm_call_retry" for e in logs)
    dump = repr(logs) + str(info.value) + repr(info.value.args)
    assert SECRET not in dump
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    assert SECRET not in repr(client.config) and SECRET not in repr(client)
    assert SECRET.encode() not in (tmp_path / "llm_cache.sqlite3").read_bytes()


def test_missing_key_variable_is_an_auth_error(litellm_module: ModuleType,
                                               make_fake: Callable[..., Any],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LABILE_MISSING_KEY", raising=False)
    fake = make_fake(["ok"])
    client = _client(litellm_module, fake, api_key_env="LABILE_MISSING_KEY")
    with pytest.raises(LLMAuthError, match="LABILE_MISSING_KEY"):
        client.complete_text("x", operation="chat")
    assert fake.calls == []


def test_other_bad_requests_do_not_step_down(litellm_module: ModuleType,
                                             make_fake: Callable[..., Any]) -> None:
    fake = make_fake([litellm_module.UnsupportedParamsError(
        message="temperature=0 is not supported by this model", **P)])
    client = _client(litellm_module, fake)
    with pytest.raises(LLMRequestError, match="temperature"):
        client.complete_json("a?", SCHEMA, operation="x")
    assert len(fake.calls) == 1 and client.structured_mode(SCHEMA) == "json_schema"


def test_a_key_echoed_in_a_reply_is_never_cached_raised_or_fed_back(
    litellm_module: ModuleType, make_fake: Callable[..., Any], monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # a provider that answers 200 with the caller's key in the text (issue #27 item 10)
    monkeypatch.setenv("LABILE_TEST_KEY", SECRET)
    echo = json.dumps({"a": f"your key is {SECRET}"})  # invalid: "a" must be an integer
    fake = make_fake([echo])
    client = _client(litellm_module, fake, api_key_env="LABILE_TEST_KEY", max_repairs=1,
                     cache_dir=str(tmp_path))
    with pytest.raises(LLMOutputError) as info:
        client.complete_json("x", SCHEMA, operation="extract")
    assert len(fake.calls) == 2
    repair = json.dumps(fake.calls[1]["messages"])
    assert "Previous reply" in repair and "your key is ***" in repair and SECRET not in repair
    assert SECRET not in (info.value.raw or "") and SECRET not in str(info.value)
    assert SECRET not in client.complete_text("say it", operation="chat")
    assert SECRET.encode() not in (tmp_path / "llm_cache.sqlite3").read_bytes()


def test_a_cached_reply_holding_the_key_is_scrubbed_on_read(
    litellm_module: ModuleType, make_fake: Callable[..., Any], monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from labile_llm.cache import CachedReply

    monkeypatch.setenv("LABILE_TEST_KEY", SECRET)
    fake = make_fake([f"fresh {SECRET}"])
    client = _client(litellm_module, fake, api_key_env="LABILE_TEST_KEY",
                     cache_dir=str(tmp_path))
    first = client.complete_text("q", operation="chat")
    cache = client.response_cache
    assert cache is not None and first == "fresh ***"
    # a cache file written by an older labile, before replies were scrubbed
    cache.put(next(iter(_cache_keys(tmp_path))), CachedReply(text=f"old {SECRET}"),
              model=client.model, operation="chat")
    assert client.complete_text("q", operation="chat") == "old ***"
    assert len(fake.calls) == 1


def _cache_keys(directory: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(directory / "llm_cache.sqlite3") as db:
        table = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchone()[0]
        return [row[0] for row in db.execute(f"SELECT key FROM {table}")]


def test_set_verbose_is_kept_off_so_nothing_prints_the_key(
    litellm_module: ModuleType, make_fake: Callable[..., Any], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
) -> None:
    import litellm.main

    monkeypatch.setenv("LABILE_TEST_KEY", SECRET)

    def provider_error(kwargs: dict[str, Any]) -> None:
        # what litellm does with a provider's error text while set_verbose is on
        litellm.main.print_verbose(f"Received openai error - Incorrect API key {SECRET}")

    fake = make_fake(["ok"], hook=provider_error)
    client = _client(litellm_module, fake, api_key_env="LABILE_TEST_KEY")
    monkeypatch.setattr(litellm_module, "set_verbose", True)  # the application turns it on
    with caplog.at_level(logging.DEBUG, logger="labile"):
        assert client.complete_text("x", operation="chat") == "ok"
    logs = _events(caplog)
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    assert litellm_module.set_verbose is False
    assert any(e["event"] == "litellm_set_verbose_turned_off" for e in logs)
