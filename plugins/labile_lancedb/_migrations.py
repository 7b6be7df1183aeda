"""Storage schema migrations: bring an older store's layout up to this code's.

The layout version is stored in the ``meta`` table (``schema_version``) and
its current value is `labile_lancedb._rows.SCHEMA_VERSION`. Opening a store
runs `migrate`: an older store is upgraded in place one version at a time; a
newer one is refused, because code cannot know what a later layout means.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from labile.plugin import StoreError
from labile_lancedb._rows import SCHEMA_VERSION

__all__ = ["MIGRATIONS", "migrate"]

#: ``from_version -> step`` upgrading a store in place to ``from_version + 1``;
#: a step receives the LanceDB connection. Empty: version 1 is the first layout.
#: A layout change adds a step here and bumps `SCHEMA_VERSION`.
MIGRATIONS: dict[int, Callable[[Any], None]] = {}


def migrate(db: Any, found: int, current: int = SCHEMA_VERSION, *, where: str = "") -> None:
    """Bring a store written with storage schema ``found`` to ``current``, or refuse.

    Args:
        db: The store's LanceDB connection, handed to each step.
        found: The version recorded in the store.
        current: The version to reach (this code's).
        where: The store's location, for messages.

    Raises:
        StoreError: the store is newer than this code (never downgraded), or no
            migration chain leads from ``found`` to ``current``. The message
            names both version numbers.
    """
    if found > current:
        raise StoreError(
            f"store {where} was written with storage schema version {found}, newer than "
            f"the version {current} this labile reads; upgrade labile to open it"
        )
    while found < current:
        step = MIGRATIONS.get(found)
        if step is None:
            raise StoreError(
                f"store {where} uses storage schema version {found}, older than the version "
                f"{current} this labile reads, and no migration from version {found} exists"
            )
        step(db)
        found += 1
