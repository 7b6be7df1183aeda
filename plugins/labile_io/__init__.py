"""The everyday command line: data in and out (``labile add`` for real chat logs,
``list``/``get``, ``forget``/``purge``, ``export``/``import``, ``repair``) and a
pipeline's vocabulary and contents (``components``, ``check``, ``search``,
``consolidate``, ``stats``).

Readers of chat-log formats live in `labile_io.formats`, the versioned export
in `labile_io.transfer`, the data commands in `labile_io.commands` (``repair`` in
`labile_io.repair`), the others in `labile_io.pipeline_commands`, and what they
print in `labile_io.render`. Nothing here is needed to use `labile.Memory` from Python.
"""

from __future__ import annotations

from labile.plugin import RegisterCommand, hookimpl


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """``add``, ``list``, ``get``, ``forget``, ``purge``, ``export``, ``import``, ``repair``,
    and ``components``, ``check``, ``search``, ``consolidate``, ``stats``."""
    from labile_io.commands import register_commands
    from labile_io.pipeline_commands import register_pipeline_commands
    from labile_io.repair import register_repair

    register_pipeline_commands(register)
    register_commands(register)
    register_repair(register)
