"""Every TOML block in the docs and the README is a valid config: `labile check` accepts it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from extras import ECHO_INSTALL, require_module
from labile_cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```toml\n(.*?)^```", re.S | re.M)
#: Packaging metadata (a plugin's pyproject.toml) is TOML but not a pipeline config.
PACKAGING = re.compile(r"^\[(project|tool|build-system)\b", re.M)
BLOCKS = [(f"{path.relative_to(ROOT)}#{i}", text)
          for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
          for i, text in enumerate(BLOCK.findall(path.read_text(encoding="utf-8")), 1)
          if not PACKAGING.search(text)]
#: Blocks that name a component of the sample plugin need it installed.
SAMPLE_PLUGIN = re.compile(r'type\s*=\s*"echo\.')


def test_the_docs_have_toml_blocks() -> None:
    names = [name for name, _ in BLOCKS]
    assert any(n.startswith("docs/configuration.md") for n in names)
    assert any(n.startswith("README.md") for n in names)


@pytest.mark.parametrize(("name", "text"), [
    pytest.param(name, text, id=name,
                 marks=[pytest.mark.extras] if SAMPLE_PLUGIN.search(text) else [])
    for name, text in BLOCKS])
def test_a_docs_toml_block_passes_labile_check(
    name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if SAMPLE_PLUGIN.search(text):
        require_module("labile_echo", ECHO_INSTALL)
    path = tmp_path / "block.toml"
    path.write_text(text, encoding="utf-8")
    code = main(["check", str(path)])
    assert code == 0, f"{name}: {capsys.readouterr().err}"
