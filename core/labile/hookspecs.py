"""The hook specifications: how a plugin adds components to labile.

Each hook receives a ``register`` callback; call
``register(name, factory, config=ConfigClass, summary="…")`` once per
component. ``factory(config, deps)`` is called when a pipeline is built, with
the structured config (an instance of ``ConfigClass``, whose every field has a
default) and a `labile.protocols.Deps`. Names are global per kind and, by
convention, ``<bundle>.<component>``; a clash raises `DuplicateComponentError`
at startup. Registration hooks are called once per plugin manager, in no
guaranteed order, and must not do expensive work: import heavy dependencies
inside factories.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from labile.commands import RegisterCommand
    from labile.registry import Register

_spec = pluggy.HookspecMarker("labile")
#: Decorator for hook implementations in plugins.
hookimpl = pluggy.HookimplMarker("labile")


@_spec
def labile_register_extractors(register: Register) -> None:
    """Add extractors: the write path from observations to nodes and edges.

    ``factory(config, deps)`` returns a `labile.protocols.Extractor`. Its
    ``ingest`` runs inside one store batch per ``Memory.add`` call.
    """


@_spec
def labile_register_stores(register: Register) -> None:
    """Add storage backends.

    ``factory(config, deps)`` returns a `labile.protocols.Store`; ``deps.store``
    is ``None`` at that point and ``deps.embedder`` says which vectors the store
    will hold (a store must refuse to open data written with another embedder).
    """


@_spec
def labile_register_embedders(register: Register) -> None:
    """Add embedders. ``factory(config, deps)`` returns a `labile.protocols.Embedder`.

    ``deps.store`` and ``deps.embedder`` are not available to embedder factories
    (they are built first); only the config is.
    """


@_spec
def labile_register_llms(register: Register) -> None:
    """Add LLM clients. ``factory(config, deps)`` returns a `labile.protocols.LLMClient`.

    A client must validate JSON output against the schema it is given and fail
    closed with `LLMOutputError`; it records every call in ``deps.usage``.
    """


@_spec
def labile_register_seeders(register: Register) -> None:
    """Add seed atoms: the first stage of retrieval.

    ``factory(config, deps)`` returns a `labile.protocols.Seeder`. Seeders of
    one pipeline run independently and their hits merge by node id.
    """


@_spec
def labile_register_expanders(register: Register) -> None:
    """Add expansion atoms that grow the hit set over the graph.

    ``factory(config, deps)`` returns a `labile.protocols.Expander`; expanders
    run in the configured order, each receiving the previous one's output.
    """


@_spec
def labile_register_filters(register: Register) -> None:
    """Add filter atoms that re-score, reorder or trim hits.

    ``factory(config, deps)`` returns a `labile.protocols.Filter`; filters run
    in the configured order after expansion.
    """


@_spec
def labile_register_reconsolidators(register: Register) -> None:
    """Add reconsolidation operators, run by ``Memory.feedback`` after a retrieval is used.

    ``factory(config, deps)`` returns a `labile.protocols.Reconsolidator`. It may
    change edge weights and add edges; it must not touch node content.
    """


@_spec
def labile_register_consolidators(register: Register) -> None:
    """Add consolidation operators, run by ``Memory.consolidate`` (and after adds if they wish).

    ``factory(config, deps)`` returns a `labile.protocols.Consolidator`. It must
    never delete a node or change its content.
    """


@_spec
def labile_register_node_kinds(register: Register) -> None:
    """Add node kinds. ``factory`` is a `labile.model.NodeKind` (a value, not a callable).

    Nodes of unregistered kinds are rejected on write.
    """


@_spec
def labile_register_predicates(register: Register) -> None:
    """Add edge predicates. ``factory`` is a `labile.model.Predicate` (a value).

    Edges with unregistered predicates are rejected on write; symmetric
    predicates get their reverse edge written automatically.
    """


@_spec
def labile_register_presets(register: Register) -> None:
    """Add presets: named pipeline configurations.

    ``factory`` is a mapping shaped like a config file (``store``, ``embedder``,
    ``llm``, ``extractor``, ``retrieval.seed`` …), or a zero-argument callable
    returning one. A user config naming ``preset = "<name>"`` starts from it.
    """


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
    (`labile.commands.echo`) and returns the exit status (``None`` means 0);
    a `LabileError` it raises is printed as ``error: …`` with status 2.

    The hook runs every time the command line starts, so import heavy
    dependencies inside ``run``. A path registered twice, or a command where
    another plugin has a group (or the reverse), raises
    `DuplicateComponentError` naming both plugins; the commands of a plugin
    that is blocked or failed to load simply do not appear.
    """
