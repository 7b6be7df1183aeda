"""What a plugin's commands use: the ``register`` callback's shape and the helpers.

A plugin adds commands to the ``labile`` command line through the
``labile_register_commands`` hook, which receives a `RegisterCommand`
callback::

    register("bench scale", run=run_scale, configure=add_scale_options,
             help="synthetic scale benchmark of the lancedb store")

The hook's spec states the contract (what a path is, what ``run`` returns).
The shell that calls the hook and runs the commands is an application of the
kernel, the ``labile_cli`` bundle: it checks the paths, builds the parser and
maps errors to exit statuses (`labile_cli.commands`).

Plugins' ``run`` functions write their results to stdout with `echo` and can
open the memory a user points at with `add_memory_options` / `open_memory`,
as the bundled commands (``labile search``, ``labile add`` …) do. Something a
command names that does not exist is a `NotFoundError` (exit status 1).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from labile._errors import InputError, LabileError

if TYPE_CHECKING:
    from labile._memory import Memory

#: ``run(args)`` does a command's work and returns its exit status (``None`` is 0).
CommandRun = Callable[[argparse.Namespace], "int | None"]
#: ``configure(parser)`` adds a command's arguments to its parser.
Configure = Callable[[argparse.ArgumentParser], None]

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


def echo(text: str = "") -> None:
    """Write one line of a command's output to stdout (logs go to stderr)."""
    sys.stdout.write(text + "\n")


def time_option(text: str | None, flag: str) -> datetime | None:
    """The value of a time option (``--as-of``, ``--now``): an ISO 8601 time with a UTC
    offset, or ``None`` when not given; an `InputError` naming ``flag`` otherwise."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"{flag} {text!r} is not an ISO 8601 time "
                         "(e.g. 2025-03-01T12:00:00+00:00)") from None
    if when.tzinfo is None:
        raise InputError(f"{flag} {text!r} has no UTC offset: add one, e.g. {text}+00:00")
    return when


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
