"""Every TOML block in the docs is a valid config: `labile check` accepts it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from labile.cli import main

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```toml\n(.*?)^```", re.S | re.M)
#: Packaging metadata (a plugin's pyproject.toml) is TOML but not a pipeline config.
PACKAGING = re.compile(r"^\[(project|tool|build-system)\b", re.M)
BLOCKS = [(f"{path.relative_to(DOCS)}#{i}", text)
          for path in sorted(DOCS.rglob("*.md"))
          for i, text in enumerate(BLOCK.findall(path.read_text(encoding="utf-8")), 1)
          if not PACKAGING.search(text)]


def test_the_docs_have_toml_blocks() -> None:
    assert any(name.startswith("configuration.md") for name, _ in BLOCKS)


@pytest.mark.parametrize(("name", "text"), BLOCKS, ids=[n for n, _ in BLOCKS])
def test_a_docs_toml_block_passes_labile_check(
    name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "block.toml"
    path.write_text(text, encoding="utf-8")
    code = main(["check", str(path)])
    assert code == 0, f"{name}: {capsys.readouterr().err}"
