"""`RetentionPolicy`: what a namespace hides as it ages, and where it is kept.

A policy has three rules, each off (``None``) or a number of days:

* ``unused_days``: hide a memory learned more than N days ago that was not
  used in the last N days (use: `labile_retention.use`);
* ``superseded_days``: hide a memory replaced (``valid_to``) more than N days ago;
* ``small_talk_days``: hide small talk (`labile_retention.smalltalk`) older
  than N days (0: at once).

A namespace's saved policy is one node of kind `POLICY_KIND` in that
namespace (so it travels with export / import and goes with ``purge``); it is
itself hidden from search.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

import attrs

from labile.plugin import HIDDEN_AT, InputError, Node, NodeKind, Store

POLICY_KIND: Final = "retention.policy"
POLICY_ID: Final = "retention:policy"
POLICY_NODE_KIND: Final = NodeKind(name=POLICY_KIND, fields=("policy",),
                                   summary="a namespace's saved retention policy")
#: The longest period a rule may name (a century).
MAX_DAYS: Final = 36_500
RULES: Final = ("unused_days", "superseded_days", "small_talk_days")
#: A time before any memory: the policy node is hidden from every search.
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def _days(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DAYS:
        raise InputError(f"retention policy: {attribute.name} must be a whole number of days "
                         f"from 0 to {MAX_DAYS}, or unset (rule off); got {value!r}")


@attrs.frozen(kw_only=True)
class RetentionPolicy:
    """The rules of one namespace; each is off (``None``) or a number of days."""

    unused_days: int | None = attrs.field(default=None, validator=_days)
    superseded_days: int | None = attrs.field(default=None, validator=_days)
    small_talk_days: int | None = attrs.field(default=None, validator=_days)

    @property
    def is_empty(self) -> bool:
        """Whether every rule is off (the policy hides nothing)."""
        return all(getattr(self, rule) is None for rule in RULES)

    def to_mapping(self) -> dict[str, int]:
        """The rules that are on, by name."""
        return {rule: getattr(self, rule) for rule in RULES if getattr(self, rule) is not None}

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any]) -> RetentionPolicy:
        """A policy from a table (TOML ``[retention]``, JSON, a saved node).

        Raises:
            InputError: an unknown rule or a value that is not a number of days.
        """
        if not isinstance(table, Mapping):
            raise InputError("retention policy must be a table of rules, got "
                             f"{type(table).__name__}")
        unknown = sorted(set(table) - set(RULES))
        if unknown:
            raise InputError(f"retention policy: unknown rule(s) {', '.join(unknown)}; "
                             f"the rules are {', '.join(RULES)}")
        return cls(**dict(table))


def saved_policy(store: Store, namespace: str) -> RetentionPolicy | None:
    """The policy saved for ``namespace``, or ``None``."""
    found = store.get_nodes(namespace, [POLICY_ID])
    if not found:
        return None
    return RetentionPolicy.from_mapping(found[0].attrs.get("policy") or {})


def policy_node(policy: RetentionPolicy, now: datetime) -> Node:
    """The node that saves ``policy`` in a namespace (hidden from search, no sources)."""
    return Node(id=POLICY_ID, kind=POLICY_KIND, created_at=now, updated_at=now,
                attrs={"policy": policy.to_mapping(), HIDDEN_AT: _EPOCH.isoformat()})
