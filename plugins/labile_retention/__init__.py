"""Retention: forgetting by time and use, without destroying anything.

A per-namespace `RetentionPolicy` hides memories that have aged out (not used
for N days, replaced N days ago, small talk); hidden memories leave search but
stay stored, readable by id and restorable. ``labile forget`` remains the way
to erase. `labile_retention.apply` applies and restores (one batch each),
`labile_retention.use` reads use from reconsolidation's edit log,
`labile_retention.smalltalk` judges small talk, `labile_retention.command`
is ``labile retain``. See ``docs/retention.md``.
"""

from __future__ import annotations

from labile.plugin import Register, RegisterCommand, hookimpl
from labile_retention.apply import (
    REASONS,
    Hidden,
    RetentionReport,
    apply_retention,
    restore_hidden,
    save_policy,
)
from labile_retention.policy import RetentionPolicy, saved_policy

__all__ = [
    "REASONS", "Hidden", "RetentionPolicy", "RetentionReport", "apply_retention",
    "restore_hidden", "save_policy", "saved_policy",
]


@hookimpl
def labile_register_node_kinds(register: Register) -> None:
    """``retention.policy``: a namespace's saved policy (one node, hidden from search)."""
    from labile_retention.policy import POLICY_NODE_KIND

    register(POLICY_NODE_KIND.name, POLICY_NODE_KIND, summary=POLICY_NODE_KIND.summary)


@hookimpl
def labile_register_commands(register: RegisterCommand) -> None:
    """``labile retain``: apply, preview (``--dry-run``), save or undo a namespace's policy."""
    from labile_retention.command import register_retain

    register_retain(register)
