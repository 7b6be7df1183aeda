"""Data in and out: ``labile add`` for real chat logs, ``list``/``get``, ``forget``/``purge``,
``export``/``import``, ``repair``.

Readers of chat-log formats live in `labile_io.formats`, the versioned export
in `labile_io.transfer`, the commands in `labile_io.commands` (``repair`` in
`labile_io.repair`). Nothing here is needed to use `labile.Memory` from Python.
"""

from __future__ import annotations

from labile.plugin import RegisterCommand, hookimpl


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """``add``, ``list``, ``get``, ``forget``, ``purge``, ``export``, ``import``, ``repair``."""
    from labile_io.commands import register_commands
    from labile_io.repair import register_repair

    register_commands(register)
    register_repair(register)
