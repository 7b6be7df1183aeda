"""The hook reference's examples (docs/plugins/hook_examples.py) work as a plugin."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from labile import LLMError, Memory
from labile._plugins import get_plugin_manager
from labile._registry import collect
from labile.testing import observations
from labile_cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "docs/plugins/hook_examples.py"


@pytest.fixture(scope="module")
def examples() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hook_examples", EXAMPLES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_acme_preset_wires_every_example_into_one_pipeline(examples: ModuleType) -> None:
    pm = get_plugin_manager(extra=[examples])
    texts = ["I adopted a dog named Rex", "Rex likes the park", "We moved to Lisbon in May"]
    with Memory.open(preset="acme", plugin_manager=pm) as memory:
        report = memory.add(observations(texts), namespace="u")
        assert report.nodes_written == 3
        (linked,) = memory.consolidate(namespace="u")
        assert linked.counts == {"linked": 2}
        result = memory.search("Rex the dog", namespace="u", k=3)
        assert result.hits[0].node.id == "o1"
        assert {h.via.stage for h in result.hits} == {"seed"}  # k covers every node
        answer = memory.answer("Rex the dog?", namespace="u", k=1)
        assert (answer.text, answer.cited) == (texts[0], ("o1",))
        assert answer.feedback[0].operator == "acme.strengthen"
        assert memory.embedder.name == "acme.letters"


def test_the_expander_reaches_linked_turns(examples: ModuleType) -> None:
    pm = get_plugin_manager(extra=[examples])
    with Memory.open(preset="acme", plugin_manager=pm) as memory:
        memory.add(observations(["alpha", "beta", "gamma"]), namespace="u")
        memory.consolidate(namespace="u")
        result = memory.search("alpha", namespace="u", k=1)
        assert [h.node.id for h in result.hits] == ["o1"]
        expanded = [s for s in result.trace if s.stage == "expand"]
        assert expanded[0].n_out > expanded[0].n_in  # the linked turn was reached


def test_the_declared_kind_the_llm_and_the_command(
    examples: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    pm = get_plugin_manager(extra=[examples])
    registries = collect(pm)
    tokenizer = registries["acme.tokenizer"].get("acme.tokenizer.spaces")
    assert tokenizer.build(tokenizer.config(), None)("a b  c") == ["a", "b", "c"]
    with Memory.open({"preset": "acme", "llm": "acme.refuses"}, plugin_manager=pm) as memory:
        with pytest.raises(LLMError, match="does not answer 'plan'"):
            memory.llm.complete_json("?", {}, operation="plan")
        assert memory.usage.snapshot()["plan"]["failures"] == 1
    assert main(["acme", "words", "three little words"], plugin_manager=pm) == 0
    assert capsys.readouterr().out == "3 words\n"
