"""Applying a retention policy: plan what to hide, hide it in one batch, restore it.

Hiding never destroys: the node keeps its content, edges, sources and
visibility; it gains ``attrs["hidden_at"]`` (when) and ``attrs["hidden_why"]``
(which rule), and `labile.Memory.search` leaves it out from then on unless
``include_hidden`` (or ``as_of`` an earlier time). Reading by id, listing,
export and ``labile forget`` see it as before. Restoring removes exactly those
two attributes, so a restore gives back the visible set as it was.

Each apply or restore is one store batch: a crash leaves the namespace as it
was before or as it is after, never in between, and running it again hides
nothing twice (hidden nodes are not planned again).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

import attrs

from labile.plugin import HIDDEN_AT, InputError, Node, Store, check_namespace, get_logger, utcnow
from labile_retention.policy import POLICY_KIND, RetentionPolicy, policy_node, saved_policy
from labile_retention.smalltalk import is_small_talk
from labile_retention.use import last_used

if TYPE_CHECKING:
    from labile import Memory

log = get_logger(__name__)

HIDDEN_WHY: Final = "hidden_why"
#: The reasons a node is hidden, one per rule.
REASONS: Final = ("superseded", "small_talk", "unused")
#: Bookkeeping kinds that are never hidden or restored by a policy.
_NEVER: Final = frozenset({POLICY_KIND, "labile.pending"})


@attrs.frozen(kw_only=True)
class Hidden:
    """One node a policy hides (or hid): why, and when it was learned."""

    node_id: str
    kind: str
    reason: str
    learned_at: datetime


@attrs.frozen(kw_only=True)
class RetentionReport:
    """What an apply or a restore did (or, with ``dry_run``, would do)."""

    namespace: str
    now: datetime
    policy: RetentionPolicy | None
    dry_run: bool
    hidden: tuple[Hidden, ...] = ()
    restored: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        """Hidden nodes per reason, and restored nodes."""
        out = {reason: sum(1 for h in self.hidden if h.reason == reason) for reason in REASONS}
        out["restored"] = len(self.restored)
        return out


def _has_time(node: Node) -> bool:
    """A memory of something said (a time of its own); entities without one never age."""
    return node.time_start is not None or any(k in node.attrs for k in ("said_at", "stated_at"))


def plan_retention(store: Store, namespace: str, policy: RetentionPolicy,
                   now: datetime) -> list[Hidden]:
    """The nodes of ``namespace`` that ``policy`` hides at ``now`` and are not hidden
    yet, in store order, each with the first rule that applies
    (superseded, then small talk, then unused)."""
    if policy.is_empty:
        return []
    small: set[str] = set()
    if policy.small_talk_days is not None:
        small = {o.id for o in store.iter_observations(namespace)
                 if is_small_talk(o.text)}
    used = last_used(store.iter_edges(namespace)) if policy.unused_days is not None else {}
    out: list[Hidden] = []
    for node in store.iter_nodes(namespace):
        if node.kind in _NEVER or HIDDEN_AT in node.attrs or not _has_time(node):
            continue
        reason = _reason(node, policy, now, small, used)
        if reason is not None:
            out.append(Hidden(node_id=node.id, kind=node.kind, reason=reason,
                              learned_at=node.learned_at))
    return out


def _older(when: datetime | None, now: datetime, days: int | None) -> bool:
    return days is not None and when is not None and when <= now - timedelta(days=days)


def _reason(node: Node, policy: RetentionPolicy, now: datetime, small: set[str],
            used: dict[str, datetime]) -> str | None:
    if _older(node.valid_to, now, policy.superseded_days):
        return "superseded"
    learned = node.learned_at
    if (node.sources and small.issuperset(node.sources)
            and _older(learned, now, policy.small_talk_days)):
        return "small_talk"
    if _older(learned, now, policy.unused_days) and (
            node.id not in used or _older(used[node.id], now, policy.unused_days)):
        return "unused"
    return None


def apply_retention(memory: Memory, namespace: str, policy: RetentionPolicy | None = None,
                    *, now: datetime | None = None, dry_run: bool = False) -> RetentionReport:
    """Hide what ``policy`` (default: the namespace's saved one) hides at ``now``
    (default: the current time), in one batch; ``dry_run`` only plans.

    Raises:
        InputError: no policy given and none saved, a policy that is not a
            `RetentionPolicy`, a naive ``now``, a bad namespace.
    """
    check_namespace(namespace)
    if policy is not None and not isinstance(policy, RetentionPolicy):
        raise InputError("policy must be a RetentionPolicy (RetentionPolicy.from_mapping "
                         f"reads a table), got {type(policy).__name__}")
    now = _check_now(now)
    with memory.write_lock:
        policy = policy if policy is not None else saved_policy(memory.store, namespace)
        if policy is None:
            raise InputError(f"namespace {namespace!r} has no saved retention policy: "
                             "give one (e.g. unused_days=180) or save one first")
        if dry_run:
            return RetentionReport(namespace=namespace, now=now, policy=policy, dry_run=True,
                                   hidden=tuple(plan_retention(memory.store, namespace,
                                                               policy, now)))
        with memory.store.batch(namespace):
            # Planned inside the batch: what it reads is what it writes over.
            plan = plan_retention(memory.store, namespace, policy, now)
            _mark(memory.store, namespace, {h.node_id: h.reason for h in plan}, now)
        _reload(memory, bool(plan))
    log.info("retention_applied", namespace=namespace, hidden=len(plan))
    return RetentionReport(namespace=namespace, now=now, policy=policy, dry_run=False,
                           hidden=tuple(plan))


def restore_hidden(memory: Memory, namespace: str, *, reasons: Collection[str] | None = None,
                   dry_run: bool = False) -> RetentionReport:
    """Un-hide the nodes a policy hid (only those hidden for ``reasons``, if given),
    in one batch: they become exactly what they were before.

    Raises:
        InputError: an unknown reason or a bad namespace.
    """
    check_namespace(namespace)
    wanted = set(REASONS if reasons is None else reasons)
    if not wanted <= set(REASONS):
        raise InputError(f"unknown retention reason(s) {sorted(wanted - set(REASONS))}; "
                         f"the reasons are {', '.join(REASONS)}")
    now = utcnow()
    with memory.write_lock:
        if dry_run:
            ids = [n.id for n in _hidden_nodes(memory.store, namespace, wanted)]
            return RetentionReport(namespace=namespace, now=now, policy=None, dry_run=True,
                                   restored=tuple(ids))
        with memory.store.batch(namespace):
            nodes = _hidden_nodes(memory.store, namespace, wanted)
            memory.store.upsert_nodes(namespace, [_unmarked(n) for n in nodes])
        _reload(memory, bool(nodes))
    log.info("retention_restored", namespace=namespace, restored=len(nodes))
    return RetentionReport(namespace=namespace, now=now, policy=None, dry_run=False,
                           restored=tuple(n.id for n in nodes))


def save_policy(memory: Memory, namespace: str, policy: RetentionPolicy) -> None:
    """Save ``policy`` as the namespace's own (replacing any saved before), one batch."""
    check_namespace(namespace)
    with memory.write_lock, memory.store.batch(namespace):
        memory.store.upsert_nodes(namespace, [policy_node(policy, utcnow())])


def _check_now(now: datetime | None) -> datetime:
    if now is None:
        return utcnow()
    if not isinstance(now, datetime) or now.tzinfo is None:
        raise InputError(f"now must be a timezone-aware datetime, got {now!r}")
    return now


def _mark(store: Store, namespace: str, why: dict[str, str], now: datetime) -> None:
    nodes = store.get_nodes(namespace, list(why))
    store.upsert_nodes(namespace, [
        attrs.evolve(n, attrs={**n.attrs, HIDDEN_AT: now.isoformat(), HIDDEN_WHY: why[n.id]})
        for n in nodes])


def _hidden_nodes(store: Store, namespace: str, reasons: set[str]) -> list[Node]:
    return [n for n in store.iter_nodes(namespace)
            if n.kind not in _NEVER and HIDDEN_AT in n.attrs
            and n.attrs.get(HIDDEN_WHY) in reasons]


def _unmarked(node: Node) -> Node:
    return attrs.evolve(node, attrs={k: v for k, v in node.attrs.items()
                                     if k not in (HIDDEN_AT, HIDDEN_WHY)})


def _reload(memory: Memory, changed: bool) -> None:
    """Components may hold copies of nodes (an index, a cache): rebuild them, as
    ``forget`` does, so none serves a node without its new marks."""
    if changed:
        memory.reload_components()

