"""The hook specifications: how a plugin adds components to labile.

Each registration hook receives a ``register`` callback; call
``register(name, factory, config=ConfigClass, summary="…")`` once per
component (add ``needs=("llm",)`` when it calls the LLM client).
``factory(config, deps)`` is called when a pipeline is built, with the
structured config (an instance of ``ConfigClass``, whose every field has a
default) and the deps its kind receives (`labile.plugin.Deps` for
everything built after the store). Names are global per kind and, by
convention, ``<bundle>.<component>``; a clash raises `DuplicateComponentError`
at startup. Registration hooks are called once per plugin manager, in no
guaranteed order, and must not do expensive work: import heavy dependencies
inside factories.

There is one registration hook per component kind, ``labile_register_<plural>``,
made from the kind's declaration (`labile.plugin.KindSpec`): the kernel's
kinds are declared in `labile._kinds.KERNEL_KINDS`, a bundle's in its
``labile_declare_kinds`` hook.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

from labile._kinds import KERNEL_KINDS, KindSpec

if TYPE_CHECKING:
    from labile._commands import RegisterCommand
    from labile._kinds import Declare
    from labile._model import Hit
    from labile._registry import Register

_spec = pluggy.HookspecMarker("labile")
#: Decorator for hook implementations in plugins.
hookimpl = pluggy.HookimplMarker("labile")


@_spec
def labile_declare_kinds(declare: Declare) -> None:
    """Declare component kinds of your own: ``declare(KindSpec(...))`` once per kind.

    Called before any registration hook. Each declared kind gets its own
    registration hook, ``labile_register_<plural>``, which any plugin may
    implement (a plugin implementing another bundle's kind should mark it
    ``@hookimpl(optionalhook=True)``, so it still loads when that bundle is
    disabled). A kind usually sits nested in a host component's options
    (``placement="nested"``) and gives the host's decisions interchangeable
    implementations, e.g. ``realm.seed_planner`` with ``realm.seed_planner.offline``
    and ``realm.seed_planner.llm``. Two plugins declaring the same kind name
    is an error naming both.
    """


def registration_spec(kind: KindSpec) -> Callable[[Register], None]:
    """The registration hook spec of ``kind``: ``labile_register_<plural>(register)``."""

    def spec(register: Register) -> None:
        del register

    spec.__name__ = spec.__qualname__ = kind.hook
    spec.__module__ = __name__
    spec.__doc__ = kind.doc or f"Add components of the {kind.name!r} kind."
    marked: Callable[[Register], None] = _spec(spec)
    return marked


# The kernel's registration hooks, one per kernel kind, made from their
# declarations so that adding a kind is one entry in KERNEL_KINDS.
for _kind in KERNEL_KINDS:
    globals()[_kind.hook] = registration_spec(_kind)
del _kind


# -- commands: not a component kind; called by the command line only ------------


@_spec
def labile_register_commands(register: RegisterCommand) -> None:
    """Add commands to the ``labile`` command line.

    Call ``register(path, run=run, configure=configure, help="…")`` once per
    command. ``path`` is the command's words: ``"demo"`` makes ``labile demo``
    and ``"bench scale"`` the sub-command ``scale`` of the group ``labile
    bench``, which is created on first use; ``register("bench", help="…")``
    without ``run`` only gives a group its help line. ``configure(parser)``
    adds the command's arguments to its `argparse.ArgumentParser`;
    ``run(args)`` does the work, writes its results to stdout
    (`labile.plugin.echo`) and returns the exit status (``None`` means 0);
    a `LabileError` it raises is printed as ``error: …`` with status 2.

    The hook runs every time the command line starts, so import heavy
    dependencies inside ``run``. A path registered twice, or a command where
    another plugin has a group (or the reverse), raises
    `DuplicateComponentError` naming both plugins; the commands of a plugin
    that is blocked or failed to load simply do not appear.
    """


# -- presentation: not a component kind; called by `RetrievalResult.context` -----------


@_spec(firstresult=True)
def labile_render_context(hits: Sequence[Hit], options: dict[str, Any]) -> Any:
    """Render search hits as evidence for a prompt: what `RetrievalResult.context` returns.

    ``hits`` are a search's hits, best first; ``options`` are the keyword arguments
    the application passed to ``result.context(...)`` (for the shipped renderer,
    `labile_llm.context.render_context`: ``budget_tokens``, ``style``,
    ``count_tokens``). Return the rendered context, or ``None`` to leave it to
    another plugin; the first result that is not ``None`` wins, so a plugin that
    renders its own format should check an option of its own (``style``) and
    return ``None`` otherwise. Raise `labile.plugin.InputError` for a bad option.
    The kernel renders nothing itself: with no renderer, ``context`` raises.
    """
