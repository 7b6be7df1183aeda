"""Commands of the ``labile`` command line, and how plugins add them.

The shell (`labile.cli`) owns only ``plugins``; every other command comes
from a plugin's ``labile_register_commands`` hook, which receives a
`RegisterCommand` callback::

    register("bench scale", run=run_scale, configure=add_scale_options,
             help="synthetic scale benchmark of the lancedb store")

A path of one word is a top-level command (``labile demo``); more words make
a sub-command of a group (``labile bench scale``), created on first use. A
registration without ``run`` declares a group and gives it its help line
(``register("inspect", help="diagnostics of a bundle's memory")``); a group
is shown only when some plugin fills it. Every path has one owner: a second
registration of a path, or a command registered where a group is (or the
reverse), raises `DuplicateComponentError` naming both plugins.

Plugins' ``run`` functions write their results to stdout with `echo` and can
open the memory a user points at with `add_memory_options` / `open_memory`,
as the bundled commands (``labile search``, ``labile add`` …) do.

Every command ends with one of the `EXIT_CODES` (the shell maps errors to
them: `NotFoundError` is 1, `InputError` and other caller errors 2,
`StoreError` and failures of the system 3), and every option's help shows
its default (`HelpFormatter`).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import attrs

from labile._errors import DuplicateComponentError, LabileError, PluginLoadError

if TYPE_CHECKING:
    import pluggy

    from labile._memory import Memory

#: ``run(args)`` does a command's work and returns its exit status (``None`` is 0).
CommandRun = Callable[[argparse.Namespace], "int | None"]
#: ``configure(parser)`` adds a command's arguments to its parser.
Configure = Callable[[argparse.ArgumentParser], None]

#: The owner recorded for the shell's own commands.
KERNEL: Final = "labile"
_WORD = re.compile(r"[a-z][a-z0-9-]*")

#: Exit statuses of every command, documented in the getting-started guide.
EXIT_OK: Final = 0
EXIT_NOT_FOUND: Final = 1
EXIT_USAGE: Final = 2
EXIT_FAILED: Final = 3
EXIT_BUG: Final = 4
EXIT_INTERRUPTED: Final = 130
EXIT_CODES: Final = {
    EXIT_OK: "done",
    EXIT_NOT_FOUND: "something named does not exist (an id, a namespace); the rest was done",
    EXIT_USAGE: "bad usage or input (an option, a file, a config); nothing was changed",
    EXIT_FAILED: "the store or a service failed (disk, permissions, an LLM provider)",
    EXIT_BUG: "an unexpected error: a bug to report (`--debug` shows the traceback)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); acknowledged batches are kept",
}

#: The ``k`` of a search when none is given: `labile.Memory.search`'s default,
#: shared by ``labile search`` and the MCP tool so one question gets the same
#: hits from every entry point. 10, not the 5 the CLI and MCP had: the Python
#: API and the answerer already read 10 hits, and an agent's context affords
#: ten short dated memories (recall at 10 is the benchmarks' second cut-off).
DEFAULT_K: Final = 10

#: Environment variables that give ``--path`` and ``--config`` their defaults.
PATH_ENV: Final = "LABILE_PATH"
CONFIG_ENV: Final = "LABILE_CONFIG"


class NotFoundError(LabileError, LookupError):
    """Something a command names (an id, a namespace) does not exist: exit status 1."""


class HelpFormatter(argparse.HelpFormatter):
    """Shows each option's default after its help, unless the help already names it.

    Flags (``store_true``) and options without a default show none: "(default:
    False)" or "(default: None)" says nothing a reader needs.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if ("default" in text or default in (None, False, argparse.SUPPRESS)
                or isinstance(action, argparse._StoreConstAction)):
            return text
        shown = " ".join(map(str, default)) if isinstance(default, list | tuple) else default
        # argparse %-formats help strings: a '%' in the value must not be read as one.
        return f"{text} (default: {str(shown).replace('%', '%%')})"


@attrs.frozen(kw_only=True)
class Command:
    """One registered command, or a group declaration when ``run`` is ``None``.

    Attributes:
        path: The command's words (``("bench", "scale")``).
        help: One line for ``--help`` listings.
        plugin: The name of the plugin that registered it (`KERNEL` for the shell's).
        run: Does the work; ``None`` for a group declaration.
        configure: Adds the command's arguments, if it has any.
    """

    path: tuple[str, ...]
    help: str
    plugin: str
    run: CommandRun | None = None
    configure: Configure | None = None

    @property
    def name(self) -> str:
        """The path as typed: ``"bench scale"``."""
        return " ".join(self.path)


class RegisterCommand(Protocol):
    """The callback ``labile_register_commands`` receives; call it once per command."""

    def __call__(
        self,
        path: str,
        *,
        help: str,
        run: CommandRun | None = None,
        configure: Configure | None = None,
    ) -> None: ...


class Commands:
    """Every registered command by path, checked for clashes as it is added."""

    def __init__(self) -> None:
        self._by_path: dict[tuple[str, ...], Command] = {}

    def add(self, command: Command) -> None:
        """Record ``command``; a path with another owner raises naming both plugins."""
        clash = self._by_path.get(command.path)
        if clash is None and command.run is not None:  # a command where a group is
            clash = next((c for c in self if c.path[: len(command.path)] == command.path), None)
        for i in range(1, len(command.path)):  # a group where a command is
            parent = self._by_path.get(command.path[:i])
            if clash is None and parent is not None and parent.run is not None:
                clash = parent
        if clash is not None:
            raise DuplicateComponentError("command", command.name, command.plugin, clash.plugin)
        self._by_path[command.path] = command

    def register_for(self, plugin: str) -> RegisterCommand:
        """The ``register`` callback that records commands as ``plugin``'s."""

        def register(
            path: str,
            *,
            help: str,
            run: CommandRun | None = None,
            configure: Configure | None = None,
        ) -> None:
            words = tuple(path.split()) if isinstance(path, str) else ()
            if not words or not all(_WORD.fullmatch(w) for w in words):
                raise ValueError(
                    f"plugin {plugin!r}: bad command path {path!r}; use lower-case words "
                    "(letters, digits, '-') separated by spaces, e.g. 'bench scale'"
                )
            for what, fn in (("run", run), ("configure", configure)):
                if fn is not None and not callable(fn):
                    raise TypeError(f"plugin {plugin!r}, command {path!r}: {what} must be "
                                    f"callable, got {fn!r}")
            self.add(Command(path=words, help=help, plugin=plugin, run=run, configure=configure))

        return register

    def __iter__(self) -> Iterator[Command]:
        return iter(list(self._by_path.values()))

    def get(self, path: tuple[str, ...]) -> Command | None:
        """The command or group declaration at ``path``, if any."""
        return self._by_path.get(path)


def collect_commands(
    pm: pluggy.PluginManager, *, builtin: Callable[[RegisterCommand], None] | None = None
) -> Commands:
    """The shell's ``builtin`` commands plus every plugin's, each recorded with its owner.

    Implementations are called one by one (in pluggy's call order), as the
    component registries are, so each command knows its plugin.
    """
    commands = Commands()
    if builtin is not None:
        builtin(commands.register_for(KERNEL))
    for impl in reversed(pm.hook.labile_register_commands.get_hookimpls()):
        if impl.hookwrapper or impl.wrapper:
            raise PluginLoadError(
                f"plugin {impl.plugin_name!r}: labile_register_commands cannot be a wrapper"
            )
        register = commands.register_for(impl.plugin_name)
        impl.function(**{arg: register for arg in impl.argnames})
    return commands


def add_commands(parser: argparse.ArgumentParser, commands: Commands) -> None:
    """Add every runnable command of ``commands`` to ``parser`` as (nested) sub-commands.

    The shell's commands come first, in registration order, then the plugins'
    by path. A group's help line ends with its sub-commands, so ``labile
    --help`` names every command. The chosen `Command` lands in
    ``args.labile_command``.
    """
    runnable = [c for c in commands if c.run is not None]
    kernel = [c for c in runnable if c.plugin == KERNEL]
    ordered = kernel + sorted((c for c in runnable if c.plugin != KERNEL), key=lambda c: c.path)
    groups: dict[tuple[str, ...], argparse._SubParsersAction[argparse.ArgumentParser]] = {
        (): parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    }
    for command in ordered:
        for depth in range(1, len(command.path)):
            path = command.path[:depth]
            if path not in groups:
                children = sorted({c.path[depth] for c in runnable if c.path[:depth] == path})
                declared = commands.get(path)
                summary = f"{declared.help} " if declared is not None and declared.help else ""
                group = groups[path[:-1]].add_parser(
                    path[-1], help=f"{summary}({', '.join(children)})",
                    description=declared.help if declared is not None else None,
                )
                groups[path] = group.add_subparsers(
                    dest="labile_group_" + "_".join(path), required=True,
                    metavar="COMMAND",
                )
        sub = groups[command.path[:-1]].add_parser(
            command.path[-1], help=command.help, description=command.help,
            formatter_class=HelpFormatter,
        )
        if command.configure is not None:
            command.configure(sub)
        sub.set_defaults(labile_command=command)


# -- helpers for commands -------------------------------------------------------


def echo(text: str = "") -> None:
    """Write one line of a command's output to stdout (logs go to stderr)."""
    sys.stdout.write(text + "\n")


def add_memory_options(parser: argparse.ArgumentParser, *, env: bool = True) -> None:
    """``--config``, ``--preset`` and ``--path``: which memory a command opens.

    With ``env`` (the default), ``--path`` and ``--config`` default to the
    environment variables `PATH_ENV` and `CONFIG_ENV` when they are set, so the
    precedence is: the flag, then the variable, then the config file's own
    ``[store] path`` and the built-in defaults. A command that must never
    touch the user's memory (a benchmark that writes synthetic data) passes
    ``env=False``.
    """
    def default(variable: str) -> str | None:
        return (os.environ.get(variable) or None) if env else None

    def shown(variable: str) -> str:
        value = default(variable)
        if value is not None:
            return f"; default: ${variable}, now {value.replace('%', '%%')}"
        return f"; default: ${variable} when set" if env else ""

    parser.add_argument("--config", "-c", default=default(CONFIG_ENV),
                        help=f"pipeline config (TOML){shown(CONFIG_ENV)}")
    parser.add_argument("--preset", help="preset name (default: the best installed)")
    parser.add_argument("--path", default=default(PATH_ENV),
                        help=f"store directory (overrides [store] path){shown(PATH_ENV)}")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """``--max-text-chars`` and ``--max-batch-chars``: the size limits of what a
    command writes (`labile.Limits`); `open_memory` applies them."""
    from labile._limits import MAX_BATCH_CHARS, MAX_OBSERVATION_CHARS

    parser.add_argument("--max-text-chars", type=_positive_int, default=MAX_OBSERVATION_CHARS,
                        metavar="N", help="most characters in one message: text, speaker "
                        f"and metadata together (default: {MAX_OBSERVATION_CHARS:,})")
    parser.add_argument("--max-batch-chars", type=_positive_int, default=MAX_BATCH_CHARS,
                        metavar="N",
                        help="most characters in one batch of messages "
                        f"(default: {MAX_BATCH_CHARS:,})")


def open_memory(
    args: argparse.Namespace, *, create: bool = False, bundle: str | None = None
) -> Memory:
    """The `Memory` named by the options of `add_memory_options`.

    Only writing commands pass ``create=True``: reading a path that holds no
    store is an error (`NotFoundError` for ``--path``, `StoreError` for a
    config's ``[store] path``), not a new empty store. A command of one
    bundle (``labile inspect allmem``) passes ``bundle``: a memory whose
    extractor is another bundle's is refused (`InputError`) naming both. The
    options of `add_limit_options`, when the command has them, set its limits.
    """
    from labile._errors import InputError
    from labile._limits import Limits
    from labile._memory import Memory
    from labile._recorded import holds_store

    where = args.path
    if not create and where and "://" not in where and not holds_store(Path(where).expanduser()):
        # Checked here, not left to Memory.open's StoreError: a mistyped path is
        # something named that does not exist (exit status 1), not a failed store.
        raise NotFoundError(f"no store at {where}: nothing to read (a writing command such "
                            "as `labile add` creates one)")
    limits = None
    if getattr(args, "max_text_chars", None) is not None:
        limits = Limits(observation_chars=args.max_text_chars,
                        batch_chars=getattr(args, "max_batch_chars", None) or Limits().batch_chars)
    memory = Memory.open(args.config, preset=args.preset, path=args.path, create=create,
                         limits=limits)
    owner = memory.config.extractor.type.split(".")[0]
    if bundle is not None and owner != bundle:
        memory.close()
        raise InputError(f"this memory was built by the {owner!r} bundle (preset "
                         f"{memory.config.preset!r}, extractor {memory.config.extractor.type!r}),"
                         f" not by {bundle!r}: use `labile inspect {owner}` if it exists")
    return memory


def require_namespace(memory: Memory, namespace: str) -> None:
    """Raise `NotFoundError` unless ``namespace`` holds something in ``memory``'s store.

    A reading command calls it first, so a mistyped namespace is reported
    (exit status 1) instead of looking like an empty memory.
    """
    known = memory.store.namespaces()
    if namespace in known:
        return
    listed = ", ".join(repr(n) for n in known[:10]) + (" …" if len(known) > 10 else "")
    raise NotFoundError(f"no namespace {namespace!r} in this store"
                        + (f" (it holds {listed})" if known else " (it is empty)"))
