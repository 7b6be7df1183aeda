"""Fixtures of the LLM-layer tests: offline litellm, fake time, fake completions, pipelines."""

from __future__ import annotations

import os
import warnings

# litellm fetches a price map on import unless told not to: set before any import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import pluggy
import pytest

from labile._plugins import get_plugin_manager

#: A pipeline that needs no model: one node per turn, BM25 seeding, in memory.
BM25_CONFIG: dict[str, Any] = {
    "preset": "bm25",
    "store": {"type": "memory"},
    "embedder": {"type": "hashing"},
    "llm": {"type": "none"},
    "extractor": {"type": "baseline.turns"},
    "retrieval": {"seed": [{"type": "baseline.bm25"}], "expand": [], "filter": []},
    "reconsolidate": [],
    "consolidate": [],
}


def plugin_manager(*extra: object) -> pluggy.PluginManager:
    """Kernel essentials + the offline (``hashing``), baseline, llm (``scripted``) and
    litellm bundles + ``extra``.

    Entry points are not scanned, so bundles under construction elsewhere in
    the tree cannot break these tests.
    """
    import labile_baseline
    import labile_litellm
    import labile_llm
    import labile_offline

    return get_plugin_manager(entry_points=False, extra=[
        labile_offline, labile_baseline, labile_llm, labile_litellm, *extra])


#: The warning filters litellm installs at import (litellm/_process_defaults.py and
#: meta_llama). pytest restores the filter list around every test, so a filter added
#: by an import inside one test is gone in the next, where litellm's lazy imports
#: (e.g. the GitHub Copilot authenticator on the first completion) then warn.
_LITELLM_IGNORED = (
    ".*conflict with protected namespace.*",
    ".*Accessing the.*attribute on the instance is deprecated.*",
    ".*`ReadOnly` qualifier.*",
    "Pydantic serializer warnings",
)


@pytest.fixture(autouse=True)
def _litellm_own_warning_filters() -> None:
    """Re-apply litellm's own import-time filters inside each test."""
    for message in _LITELLM_IGNORED:
        warnings.filterwarnings("ignore", message=message)


@pytest.fixture(scope="session")
def litellm_module() -> ModuleType:
    """litellm, imported once per session (about 3 s), offline."""
    from labile_litellm.client import load_litellm

    return load_litellm()


class FakeTime:
    """A clock that only moves when something sleeps on it."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


class FakeCompletion:
    """Stands in for ``litellm.completion``: records kwargs, replays outcomes.

    A string outcome is answered through litellm's own offline mock path
    (``mock_response``), so the reply is a real ``ModelResponse`` with usage and
    cost; with ``raw=True`` it is a plain dict instead (for model names litellm
    cannot route). An exception outcome is raised. The last outcome repeats.
    """

    def __init__(self, litellm: ModuleType, outcomes: Sequence[Any], *, raw: bool = False,
                 hook: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.litellm = litellm
        self.real = litellm.completion  # kept, so litellm.completion can be patched to self
        self.outcomes = list(outcomes)
        self.raw = raw
        self.hook = hook
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        if self.hook is not None:
            self.hook(kwargs)
        outcome = self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]
        if callable(outcome) and not isinstance(outcome, BaseException):
            outcome = outcome(kwargs)
        if isinstance(outcome, BaseException):
            raise outcome
        if self.raw:
            return {"choices": [{"message": {"content": outcome}}],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 3}}
        return self.real(**kwargs, mock_response=outcome)

    @property
    def prompts(self) -> list[str]:
        return [c["messages"][-1]["content"] for c in self.calls]


@pytest.fixture
def make_fake(litellm_module: ModuleType) -> Callable[..., FakeCompletion]:
    """``make_fake(outcomes, raw=False, hook=None)`` → a `FakeCompletion`."""

    def make(outcomes: Sequence[Any], **kwargs: Any) -> FakeCompletion:
        return FakeCompletion(litellm_module, outcomes, **kwargs)

    return make


@pytest.fixture
def bm25_config() -> dict[str, Any]:
    """A fresh copy of `BM25_CONFIG`."""
    import copy

    return copy.deepcopy(BM25_CONFIG)


@pytest.fixture
def make_pm() -> Callable[..., pluggy.PluginManager]:
    """`plugin_manager` as a fixture."""
    return plugin_manager
