"""Meta-tests: docs, tests and imports stay complete as the code grows."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import io
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from extras import ECHO_INSTALL, require_module
from labile import _hookspecs as hookspecs
from labile._memory import build_registries
from labile._plugins import BUNDLED, get_plugin_manager
from labile_io.render import components_markdown

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("docgen", ROOT / "tools" / "docgen.py")
assert _spec is not None and _spec.loader is not None
docgen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docgen)
hooks_markdown, split_examples = docgen.hooks_markdown, docgen.split_examples
HOOKS = [n for n, _ in inspect.getmembers(hookspecs, inspect.isfunction) if n.startswith("labile_")]


def test_hook_reference_is_generated_and_current() -> None:
    """docs/plugins/hooks.md is exactly what the hook specs, Protocols, examples and
    bundled plugins say, and shows every hook with an example."""
    text = (ROOT / "docs/plugins/hooks.md").read_text()
    examples = split_examples((ROOT / "docs/plugins/hook_examples.py").read_text())
    expected = hooks_markdown(get_plugin_manager(only=BUNDLED), examples)
    assert text.strip() == expected.strip(), (
        "regenerate: python tools/docgen.py hooks > docs/plugins/hooks.md"
    )
    for name in HOOKS:
        assert f"### `{name}(" in text
        assert name in examples, f"docs/plugins/hook_examples.py has no '# --- {name}'"


def test_every_hook_is_exercised_by_a_test() -> None:
    sources = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    missing = [n for n in HOOKS if f"def test_hook_{n}" not in sources]
    assert not missing, f"hooks without a test_hook_<name> test: {missing}"


def test_every_hook_has_a_docstring_contract() -> None:
    for name in HOOKS:
        assert len(inspect.getdoc(getattr(hookspecs, name)) or "") > 40, name


def test_component_reference_is_current() -> None:
    registries = build_registries(get_plugin_manager(only=BUNDLED))
    expected = components_markdown(registries, list(registries.by_kind))
    text = (ROOT / "docs/components.md").read_text()
    assert text.strip() == expected.strip(), (
        "regenerate: labile components --bundled --format md > docs/components.md"
    )


def _modules() -> list[str]:
    mods = []
    for root in ("core", "plugins", "contrib"):
        base = ROOT / root
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and parts[-1] != "__main__":
                mods.append(".".join(parts))
    return mods


def test_every_module_imports_under_warnings_as_errors() -> None:
    """Every module imports cleanly; an optional integration whose framework is not installed
    may instead raise `MissingDependencyError` naming the extra (that is its contract)."""
    code = (
        "import importlib, sys\n"
        "from labile import MissingDependencyError\n"
        "failed = []\n"
        f"for m in {_modules()!r}:\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except MissingDependencyError as exc:\n"
        "        if 'pip install' not in str(exc):\n"
        "            failed.append(f'{m}: names no install line: {exc}')\n"
        "    except Exception as exc:\n"
        "        failed.append(f'{m}: {type(exc).__name__}: {exc}')\n"
        "print('\\n'.join(failed)); sys.exit(1 if failed else 0)\n"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def imported_modules(source: str) -> list[tuple[int, str]]:
    """``(line, module)`` of every module ``source`` imports.

    Every ``import`` and ``from … import`` statement counts, wherever it is
    (module level, inside functions or ``if TYPE_CHECKING:``), and so does a
    dynamic import of a literal name (``importlib.import_module("labile_x")``,
    ``__import__("labile_x")``); ``from labile import _x`` imports ``labile._x``.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "labile":
                names += [f"labile.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        found += [(node.lineno, n) for n in names]
    return sorted(found)


def plugin_imports(source: str) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of a ``labile_*`` package in ``source``."""
    return [(line, m) for line, m in imported_modules(source)
            if m.split(".")[0].startswith("labile_")]


def test_the_kernel_imports_no_plugin_package() -> None:
    """Nothing under core/ imports a labile_* package: plugins depend on the kernel, not back."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in sorted((ROOT / "core").rglob("*.py"))
        for line, module in plugin_imports(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "the kernel imports plugins:\n" + "\n".join(offenders)


def test_the_import_scan_sees_every_form() -> None:
    """The scan above catches top-level, nested, TYPE_CHECKING and dynamic imports."""
    source = (
        "import os, labile_realm\n"
        "from labile._model import Node\n"
        "from labile_io.locomo import load_locomo as load\n"
        "if TYPE_CHECKING:\n    import labile_lancedb.store\n"
        "def f():\n    from labile_allmem import diagnostics\n"
        "    importlib.import_module('labile_llm')\n    __import__('labile_text.names')\n"
        "    importlib.import_module(name)\n"
        "from . import sibling\n"
    )
    assert plugin_imports(source) == [
        (1, "labile_realm"), (3, "labile_io.locomo"), (5, "labile_lancedb.store"),
        (7, "labile_allmem"), (8, "labile_llm"), (9, "labile_text.names"),
    ]


def module_level_imports(source: str, package: str) -> set[str]:
    """Modules of ``package`` that ``source`` imports when it is imported or type-checked:
    its top-level imports, ``if TYPE_CHECKING:`` blocks included (not those inside functions,
    which run later)."""
    found: set[str] = set()
    pending = list(ast.parse(source).body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If | ast.Try):
            pending += [*node.body, *node.orelse]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{a.name}" for a in node.names)
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m.split(".")[0] == package}


def _import_cycle(package: Path) -> list[str]:
    """One cycle of module-level imports among ``package``'s modules, or ``[]``."""
    modules: dict[str, Path] = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {
        name: {m for m in module_level_imports(path.read_text(encoding="utf-8"), package.name)
               if m in modules and m != name and not name.startswith(f"{m}.")}
        for name, path in modules.items()
    }
    done: set[str] = set()

    def walk(name: str, trail: list[str]) -> list[str]:
        if name in trail:
            return [*trail[trail.index(name):], name]
        if name in done:
            return []
        for target in sorted(graph[name]):
            if cycle := walk(target, [*trail, name]):
                return cycle
        done.add(name)
        return []

    for name in sorted(graph):
        if cycle := walk(name, []):
            return cycle
    return []


@pytest.mark.parametrize("bundle", ["labile_realm", "labile_allmem", "labile_lancedb",
                                    "labile_cli"])
def test_a_bundle_has_no_import_cycle_not_even_for_annotations(bundle: str) -> None:
    """A decision's protocol names the records of its implementations, never a host config:
    so no module of the bundle reaches back to itself through its imports, the ones under
    ``if TYPE_CHECKING:`` included (a package importing its own submodules excepted)."""
    cycle = _import_cycle(ROOT / "plugins" / bundle)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_scan_sees_type_checking_imports() -> None:
    source = ("import labile_realm.ids\nfrom labile_realm.construct import ops\n"
              "if TYPE_CHECKING:\n    from labile_realm.decisions import EdgeLookup\n"
              "def f():\n    from labile_realm import late\n")
    assert module_level_imports(source, "labile_realm") == {
        "labile_realm.ids", "labile_realm.construct", "labile_realm.construct.ops",
        "labile_realm.decisions", "labile_realm.decisions.EdgeLookup"}


def test_importing_labile_does_not_import_heavy_dependencies() -> None:
    code = ("import sys, labile, labile._memory, labile_cli\n"
            "heavy = [m for m in ('litellm', 'lancedb', 'onnxruntime') if m in sys.modules]\n"
            "assert not heavy, heavy")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.extras
def test_sample_third_party_plugin_is_found_by_name() -> None:
    """The plugin-authoring guide's package, installed by CI, is discovered by entry point."""
    require_module("labile_echo", ECHO_INSTALL)
    registries = build_registries()
    component = registries["filter"].get("echo.min_score")
    assert component.plugin == "echo"


#: The kernel modules plugins may import: the application API, the plugin-author
#: surface, the test helpers and the lexical primitives.
PUBLIC_KERNEL_MODULES = ("labile", "labile.plugin", "labile.testing", "labile.text")


def private_kernel_imports(source: str) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of a private kernel module (``labile._…``)."""
    return [(line, m) for line, m in imported_modules(source) if m.startswith("labile._")]


def test_plugins_use_only_the_public_kernel_surface() -> None:
    """Bundles, contrib plugins and the sample plugin import no ``labile._…`` module.

    Everything a plugin needs is exported by `labile.plugin` (or `labile`,
    `labile.testing`, `labile.text`), so the kernel's internals can change
    without breaking a plugin.
    """
    roots = [ROOT / "plugins", ROOT / "contrib", ROOT / "docs" / "examples",
             ROOT / "docs" / "plugins"]
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for root in roots
        for path in sorted(root.rglob("*.py"))
        if ".venv" not in path.parts
        for line, module in private_kernel_imports(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "plugins import kernel internals:\n" + "\n".join(offenders)


def test_kernel_modules_are_private_but_the_public_ones() -> None:
    """Every kernel module outside the public surface has a leading underscore."""
    public = {m.split(".")[1] for m in PUBLIC_KERNEL_MODULES if "." in m}
    named = [p for p in (ROOT / "core" / "labile").iterdir()
             if p.name != "__init__.py" and not p.name.startswith(("_", "."))
             and (p.suffix == ".py" or p.is_dir())]
    loose = sorted(p.name for p in named if p.name.removesuffix(".py") not in public | {"py.typed"}
                   and p.name not in ("py.typed", "data"))
    assert not loose, f"kernel modules that should be private (labile._…): {loose}"


def test_the_private_import_scan_sees_every_form() -> None:
    """The scan catches ``from labile._x``, ``import labile._x`` and ``from labile import _x``."""
    source = ("from labile._model import Node\nimport labile._memory\n"
              "from labile import _vectors, Memory\nfrom labile.plugin import Hit\n")
    assert private_kernel_imports(source) == [
        (1, "labile._model"), (2, "labile._memory"), (3, "labile._vectors")]


def test_every_property_test_states_its_property() -> None:
    """Each ``@given`` test has a docstring: the property it checks, in words."""
    bare = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            given = any("given" in ast.unparse(d).split("(")[0] for d in node.decorator_list)
            if given and len(ast.get_docstring(node) or "") < 20:
                bare.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not bare, "property tests without a docstring stating the property:\n" + "\n".join(bare)




#: The shipped test and reference assets of the kernel: the store contract suite, the
#: test helpers and the in-memory reference store with its tokeniser and BM25 (`text/`).
#: Everything else is mechanism.
KERNEL_ASSETS = ("_store_contract/", "testing.py", "_memstore.py", "text/")
#: Code-line budgets of the kernel (see `code_lines`). Issue #29 asked for 3,500; the
#: mechanism grew past it (3,995) with presentation that is no kernel's business, which then
#: moved out to the bundles that present: the command-line shell (`labile.cli`, the command
#: table and exit statuses of `labile._commands`, the stderr renderer of `labile._logconfig`,
#: the plugin listing) to `labile_cli`, the hit schema (`labile._hits`) to `labile_io.hits`,
#: the prompt context (`labile._context`) to `labile_llm.context`, which renders
#: `RetrievalResult.context` through the `labile_render_context` hook (3,388 code lines after).
MECHANISM_BUDGET = 3500
ASSETS_BUDGET = 1500

_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
             tokenize.ENCODING, tokenize.ENDMARKER}


def code_lines(source: str) -> int:
    """Lines that hold code: tokenized, so comments, blank lines and docstrings do not count."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _NOT_CODE:
            lines.update(n for n in range(token.start[0], token.end[0] + 1) if n not in docstrings)
    return len(lines)


def test_code_lines_skip_docstrings_comments_and_blank_lines() -> None:
    source = '''"""Module doc."""

# a comment
def f(x: int) -> int:
    """Doc,
    two lines."""
    y = (x +
         1)  # trailing comment
    return y
'''
    assert code_lines(source) == 4


def test_the_kernel_is_under_its_code_line_budgets() -> None:
    """core/labile: mechanism ≤ MECHANISM_BUDGET and assets ≤ ASSETS_BUDGET code lines."""
    counts = {"mechanism": 0, "assets": 0}
    kernel = ROOT / "core" / "labile"
    for path in kernel.rglob("*.py"):
        part = path.relative_to(kernel).as_posix()
        bucket = "assets" if part.startswith(KERNEL_ASSETS) else "mechanism"
        counts[bucket] += code_lines(path.read_text(encoding="utf-8"))
    assert counts["mechanism"] <= MECHANISM_BUDGET, (
        f"the kernel's mechanism has {counts['mechanism']} code lines (budget "
        f"{MECHANISM_BUDGET}): move what is not kernel into a plugin")
    assert counts["assets"] <= ASSETS_BUDGET, (
        f"the kernel's test and reference assets have {counts['assets']} code lines "
        f"(budget {ASSETS_BUDGET})")


def test_every_package_ships_py_typed() -> None:
    """Each import package under core/, plugins/ and contrib/ has a py.typed marker."""
    packages = [init.parent for root in ("core", "plugins", "contrib")
                for init in (ROOT / root).glob("*/__init__.py")]
    assert len(packages) >= 14
    missing = sorted(p.relative_to(ROOT).as_posix() for p in packages
                     if not (p / "py.typed").is_file())
    assert not missing, f"packages without py.typed: {missing}"


#: Where a name shared by the application and plugin surfaces may be defined: the records
#: and the errors are the vocabulary both audiences speak.
SHARED_VOCABULARY_MODULES = ("labile._model", "labile._errors")


def test_each_audience_has_one_import_surface() -> None:
    """Applications import `labile`; plugin authors `labile.plugin`; store authors `labile.testing`.

    A name both `labile` and `labile.plugin` export is one object defined in the shared
    vocabulary (records, errors); everything else lives on one surface only.
    """
    import labile
    import labile.plugin
    import labile.testing

    app, plugin, testing = (set(m.__all__) for m in (labile, labile.plugin, labile.testing))
    shared = sorted(name for name in app & plugin
                    if getattr(labile, name) is not getattr(labile.plugin, name)
                    or getattr(getattr(labile, name), "__module__", "")
                    not in SHARED_VOCABULARY_MODULES)
    assert not shared, f"names on both surfaces that are not records or errors: {shared}"
    assert not (testing & (app | plugin)) - {"Memory"}, (
        f"labile.testing re-exports: {sorted(testing & (app | plugin))}")
    assert {"hookimpl", "Register", "Deps", "get_plugin_manager"} <= plugin - app


def _plugin_package_roots() -> list[Path]:
    """The folders of the packages that are plugins (the ``labile`` entry-point group), the
    sample plugin and the hook examples; adapters such as ``labile_langgraph`` are
    applications of `labile.Memory`, not plugins."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packages = set(project["project"]["entry-points"]["labile"].values())
    roots = [ROOT / top / name for top in ("plugins", "contrib") for name in sorted(packages)
             if (ROOT / top / name).is_dir()]
    return [*roots, ROOT / "docs" / "examples", ROOT / "docs" / "plugins"]


def test_plugins_import_plugin_names_from_labile_plugin() -> None:
    """Bundles, contrib plugins and the sample plugin take from `labile` only application
    names (`Memory`, config helpers): whatever `labile.plugin` exports, they import from it."""
    import labile.plugin

    plugin_names = set(labile.plugin.__all__)
    roots = _plugin_package_roots()
    assert len(roots) >= 12
    offenders = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {alias.name}"
        for root in roots
        for path in sorted(root.rglob("*.py"))
        if ".venv" not in path.parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == "labile" and node.level == 0
        for alias in node.names
        if alias.name in plugin_names
    ]
    assert not offenders, "import these from labile.plugin:\n" + "\n".join(offenders)


def test_moved_plugin_names_still_resolve_from_labile_with_a_warning() -> None:
    import labile
    import labile.plugin

    with pytest.warns(DeprecationWarning, match=r"labile\.plugin\.hookimpl"):
        assert labile.hookimpl is labile.plugin.hookimpl  # type: ignore[attr-defined]


#: Packages that are research tooling: benchmarks, audits and their harnesses.
RESEARCH_PACKAGES = ("labile_bench",)


def test_runtime_packages_carry_no_research_tooling() -> None:
    """No runtime bundle or contrib plugin imports `labile_bench`, and none holds a bench module.

    Benchmarks import the runtime, never the other way round, so an application that
    installs labile does not carry (or load) the harnesses.
    """
    offenders = []
    for root in ("core", "plugins", "contrib"):
        for path in sorted((ROOT / root).rglob("*.py")):
            package = path.relative_to(ROOT / root).parts[0]
            if package in RESEARCH_PACKAGES:
                continue
            rel = path.relative_to(ROOT).as_posix()
            if "bench" in path.stem:
                offenders.append(f"{rel}: a benchmark module in a runtime package")
            offenders += [f"{rel}:{line}: imports {module}"
                          for line, module in imported_modules(path.read_text(encoding="utf-8"))
                          if module.split(".")[0] in RESEARCH_PACKAGES]
    assert not offenders, "move research tooling to labile_bench:\n" + "\n".join(offenders)


def test_nothing_names_a_path_of_a_development_machine() -> None:
    """No tracked source or doc names a path of the machines labile is developed on (a
    script there is nobody else's; examples use a user's home, such as /home/maya)."""
    machine_path = re.compile(r"(?<![\w.])/(?:work|root)/\w|/tmp/" r"prof\b")  # split: not itself
    files = subprocess.run(["git", "ls-files", "*.py", "*.md", "*.toml", "*.yml"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    offenders = [f"{name}:{n}" for name in files
                 for n, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1)
                 if machine_path.search(line)]
    assert not offenders, f"absolute paths of a development machine: {offenders}"
