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
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final, Protocol

import attrs

from labile._errors import DuplicateComponentError, PluginLoadError

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
            command.path[-1], help=command.help, description=command.help
        )
        if command.configure is not None:
            command.configure(sub)
        sub.set_defaults(labile_command=command)


# -- helpers for commands -------------------------------------------------------


def echo(text: str = "") -> None:
    """Write one line of a command's output to stdout (logs go to stderr)."""
    sys.stdout.write(text + "\n")


def add_memory_options(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--preset`` and ``--path``: which memory a command opens."""
    parser.add_argument("--config", "-c", help="pipeline config (TOML)")
    parser.add_argument("--preset", help="preset name (default: the best installed)")
    parser.add_argument("--path", help="store directory (overrides [store] path)")


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
    store is an error (`StoreError`), not a new empty store. A command of one
    bundle (``labile inspect allmem``) passes ``bundle``: a memory whose
    extractor is another bundle's is refused (`InputError`) naming both. The
    options of `add_limit_options`, when the command has them, set its limits.
    """
    from labile._errors import InputError
    from labile._limits import Limits
    from labile._memory import Memory

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
