"""Tests that need something the README's test command does not install.

README command 2 (``pip install -e '.[test,llm]' && pytest``) must pass on a fresh
clone, so a test that needs the sample plugin, the local model or a browser skips
there, with the line that installs what it needs. `.ci/run` installs those extras
afterwards and runs the ``extras`` tier with ``LABILE_REQUIRE_EXTRAS=1``: there a
missing extra is a failure, not a skip, so CI cannot go green by skipping.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

#: Set by `.ci/run` once it has installed every extra the tests can use.
REQUIRE = os.environ.get("LABILE_REQUIRE_EXTRAS") == "1"

#: The sample third-party plugin of docs/plugins/writing.md.
ECHO_INSTALL = "pip install -e docs/examples/labile-echo"


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason`` (which names the install line), or fail where extras are required."""
    if REQUIRE:
        pytest.fail(f"LABILE_REQUIRE_EXTRAS=1 but {reason}")
    pytest.skip(reason, allow_module_level=True)


def require_module(module: str, install: str) -> None:
    """Skip (or fail, see `skip_or_fail`) unless ``module`` can be imported."""
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:  # a dotted name whose parent package is missing
        found = False
    if not found:
        skip_or_fail(f"{module} is not installed ({install})")
