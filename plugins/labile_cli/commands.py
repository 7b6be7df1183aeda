"""The shell's command table: every registered command, checked, then made into argparse.

Plugins add commands through the ``labile_register_commands`` hook, calling the
`labile.plugin.RegisterCommand` callback this module makes (`Commands.register_for`)::

    register("bench scale", run=run_scale, configure=add_scale_options,
             help="synthetic scale benchmark of the lancedb store")

A path of one word is a top-level command (``labile demo``); more words make
a sub-command of a group (``labile bench scale``), created on first use. A
registration without ``run`` declares a group and gives it its help line
(``register("inspect", help="diagnostics of a bundle's memory")``); a group
is shown only when some plugin fills it. Every path has one owner: a second
registration of a path, or a command registered where a group is (or the
reverse), raises `DuplicateComponentError` naming both plugins.

Every command ends with one of the `EXIT_CODES` (the shell maps errors to
them: `NotFoundError` is 1, `InputError` and other caller errors 2,
`StoreError` and failures of the system 3), and every option's help shows
its default (`HelpFormatter`).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterator
from typing import Final

import attrs
import pluggy

from labile import DuplicateComponentError, PluginLoadError
from labile.plugin import CommandRun, Configure, RegisterCommand

#: The owner recorded for the shell's own commands.
SHELL: Final = "labile"
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
        plugin: The name of the plugin that registered it (`SHELL` for the shell's).
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
        builtin(commands.register_for(SHELL))
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
    shell = [c for c in runnable if c.plugin == SHELL]
    ordered = shell + sorted((c for c in runnable if c.plugin != SHELL), key=lambda c: c.path)
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
