"""The kernel's data model: observations, nodes, edges and results.

Records are attrs classes. Timestamps are always timezone-aware: a naive
datetime is rejected at construction with a message saying so, because an
agent memory that mixes local and UTC times silently answers "when" questions
wrong. Records are frozen; use `attrs.evolve` to derive a changed copy.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import attrs
import numpy as np
from attrs import Attribute
from numpy.typing import NDArray

from labile._errors import InputError
from labile._validate import check_name, check_text, check_when

Vector = NDArray[np.float32]


#: Node attrs of the validity contract (docs/change.md).
VALID_TO: Final = "valid_to"
SUPERSEDED_BY: Final = "superseded_by"
#: When a retention policy hid the node (ISO 8601; docs/retention.md).
HIDDEN_AT: Final = "hidden_at"


def _aware_time(raw: object) -> datetime | None:
    """``raw`` as an aware datetime (a datetime or an ISO string), else ``None``."""
    if isinstance(raw, datetime):
        when = raw
    elif isinstance(raw, str):
        try:
            when = datetime.fromisoformat(raw)
        except ValueError:
            return None
    else:
        return None
    return when if when.tzinfo is not None else None


def utcnow() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


def _aware(_inst: object, attribute: Attribute[Any], value: datetime | None) -> None:
    # InputError (a ValueError) naming the field: not a datetime, naive, or
    # outside years 1-9999 once in UTC (the stores could not read it back).
    if value is not None:
        check_when(attribute.name, value)


def _when(_inst: object, attribute: Attribute[Any], value: datetime) -> None:
    check_when(attribute.name, value)  # a required time: None is an error too


def _text(_inst: object, attribute: Attribute[Any], value: str) -> None:
    check_text(attribute.name, value, empty=True)


def _nonempty(_inst: object, attribute: Attribute[Any], value: str) -> None:
    if not isinstance(value, str) or not value:
        raise InputError(f"{attribute.name} must be a non-empty string, got {value!r}")


def _name(_inst: object, attribute: Attribute[Any], value: str) -> None:
    check_name(attribute.name, value)


def _tuple_of_str(value: Sequence[str] | str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise TypeError("expected a sequence of strings, got a single str")
    return tuple(value)


def _as_mapping(name: str, value: Mapping[str, Any] | None) -> dict[str, Any]:
    """``value`` as a fresh ``dict`` (``None``: an empty one), or an `InputError`
    naming the field ``name`` when it is not a mapping."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        raise InputError(f"{name} must be a mapping of names to JSON values (a dict such "
                         f"as {{'caption': '...'}}), got {type(value).__name__} {shown}")
    return dict(value)


def _metadata(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return _as_mapping("metadata", value)


def _attrs_table(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return _as_mapping("attrs", value)


@attrs.frozen(kw_only=True)
class Observation:
    """One incoming message or turn, stored verbatim in an append-only log.

    Attributes:
        id: The caller's stable id (e.g. ``"D1:3"``); re-adding it is a no-op.
        text: The message text, stored unchanged.
        timestamp: When the event happened, as the caller says (historical
            imports keep their dates), timezone-aware.
        speaker: Who said it, if known.
        session: A grouping key (conversation session), if any.
        metadata: Extra caller data (e.g. ``{"caption": "…"}`` for a photo), a
            mapping of JSON values.
        namespace: Set by the memory on write and read; callers pass the
            namespace to ``add``, which refuses an observation whose
            ``namespace`` is set to another one (copy it across with
            ``attrs.evolve(obs, namespace="")``).

    Raises:
        InputError: an id that is not a non-blank string (or holds the reserved
            ``\\x1f``), text that is not a string, a missing, naive or
            out-of-range timestamp, or metadata that is not a mapping.
    """

    id: str = attrs.field(validator=_name)
    text: str = attrs.field(validator=_text)
    timestamp: datetime = attrs.field(validator=_when)
    speaker: str | None = None
    session: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict, converter=_metadata)
    namespace: str = ""


@attrs.frozen(kw_only=True)
class NodeKind:
    """A registered node kind: its name and the kind-specific attribute names."""

    name: str
    fields: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    summary: str = ""


class Layer(enum.StrEnum):
    """The four edge layers of REALM (its paper, §3.2.1), plus one for other bundles."""

    LOGICAL = "logical"
    CAUSAL = "causal"
    TAXONOMIC = "taxonomic"
    ASSOCIATIVE = "associative"
    STRUCTURAL = "structural"


@attrs.frozen(kw_only=True)
class Predicate:
    """A registered edge predicate: its layer and whether it is symmetric.

    Symmetric predicates get their reverse edge created automatically.
    """

    name: str
    layer: Layer = attrs.field(converter=Layer)
    symmetric: bool = False
    summary: str = ""


class Origin(enum.StrEnum):
    """Which process created or last changed an edge."""

    CONSTRUCTION = "construction"
    RECONSOLIDATION = "reconsolidation"
    CONSOLIDATION = "consolidation"


@attrs.define(kw_only=True, eq=False)
class Node:
    """A unit of memory.

    ``content`` is raw evidence and is never overwritten once stored;
    ``description`` and ``keywords`` are regenerable. ``sources`` are the
    observation ids the node was built from (provenance back to turns).
    ``embedding`` is what vector search uses; the extractor decides what text
    it embeds. Nodes compare equal by namespace and id.
    """

    id: str = attrs.field(validator=_nonempty)
    kind: str = attrs.field(validator=_nonempty)
    content: str = ""
    description: str = ""
    keywords: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    time_start: datetime | None = attrs.field(default=None, validator=_aware)
    time_end: datetime | None = attrs.field(default=None, validator=_aware)
    created_at: datetime = attrs.field(factory=utcnow, validator=_aware)
    updated_at: datetime = attrs.field(factory=utcnow, validator=_aware)
    visible: bool = True
    sources: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    embedding: Vector | None = attrs.field(default=None, repr=False)
    namespace: str = ""
    # Declared last: inside the class body this name shadows the attrs module.
    attrs: dict[str, Any] = attrs.field(factory=dict, converter=_attrs_table)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Node) and other.id == self.id and other.namespace == self.namespace
        )

    def __hash__(self) -> int:
        return hash((self.namespace, self.id))

    @property
    def search_text(self) -> str:
        """The text full-text search indexes: content, description, keywords."""
        parts = [self.content, self.description, " ".join(self.keywords)]
        return " ".join(p for p in parts if p)

    @property
    def time(self) -> datetime | None:
        """The node's representative time: its start, else its creation time."""
        return self.time_start

    # -- validity (bi-temporal; docs/change.md) ------------------------------
    @property
    def valid_to(self) -> datetime | None:
        """When what this node states stopped being true (``attrs["valid_to"]``), or
        ``None`` while it holds. A malformed or naive stored value reads as ``None``."""
        return _aware_time(self.attrs.get(VALID_TO))

    @property
    def superseded_by(self) -> tuple[str, ...]:
        """Ids of the nodes that replaced this one (``attrs["superseded_by"]``)."""
        raw = self.attrs.get(SUPERSEDED_BY)
        if isinstance(raw, str):
            return (raw,)
        if isinstance(raw, (list, tuple)):
            return tuple(str(x) for x in raw)
        return ()

    @property
    def learned_at(self) -> datetime:
        """When the memory learned this: the time its statement was made
        (``attrs["said_at"]`` / ``attrs["stated_at"]``); for a node without one,
        the earlier of its start and its creation (an imported turn is created
        long after it was said, and its start is when it was said)."""
        for key in ("said_at", "stated_at"):
            when = _aware_time(self.attrs.get(key))
            if when is not None:
                return when
        if self.time_start is not None and self.time_start < self.created_at:
            return self.time_start
        return self.created_at

    def is_hidden(self, at: datetime) -> bool:
        """Whether a retention policy had hidden this node by ``at``
        (``attrs["hidden_at"]`` ≤ ``at``): search leaves it out unless asked to
        include hidden nodes; it stays stored and readable by id."""
        when = _aware_time(self.attrs.get(HIDDEN_AT))
        return when is not None and when <= at

    def is_current(self, as_of: datetime | None = None) -> bool:
        """Whether this node still holds: it has no ``valid_to``, or (given ``as_of``)
        it was replaced only after ``as_of``."""
        end = self.valid_to
        return end is None or (as_of is not None and end > as_of)


@attrs.define(kw_only=True, eq=False)
class Edge:
    """A typed, weighted, directed link between two nodes of one namespace."""

    id: str = attrs.field(validator=_nonempty)
    src: str = attrs.field(validator=_nonempty)
    dst: str = attrs.field(validator=_nonempty)
    predicate: str = attrs.field(validator=_nonempty)
    weight: float = attrs.field(default=0.5)
    description: str = ""
    origin: Origin = attrs.field(default=Origin.CONSTRUCTION, converter=Origin)
    created_at: datetime = attrs.field(factory=utcnow, validator=_aware)
    updated_at: datetime = attrs.field(factory=utcnow, validator=_aware)
    namespace: str = ""
    # Declared last: inside the class body this name shadows the attrs module.
    attrs: dict[str, Any] = attrs.field(factory=dict, converter=_attrs_table)

    @weight.validator
    def _check_weight(self, _attribute: Attribute[float], value: float) -> None:
        if not (0.0 <= value <= 1.0) or value != value:
            raise ValueError(f"edge weight must be in [0, 1], got {value!r}")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Edge) and other.id == self.id and other.namespace == self.namespace
        )

    def __hash__(self) -> int:
        return hash((self.namespace, self.id))


def edge_id(src: str, predicate: str, dst: str) -> str:
    """The canonical id of the edge ``src -[predicate]-> dst``.

    One edge per (src, predicate, dst): writing it again updates it.
    """
    return f"{src}|{predicate}|{dst}"


def _optional_names(value: Iterable[str] | None) -> frozenset[str] | None:
    return None if value is None else frozenset(value)


@attrs.frozen(kw_only=True)
class NodeFilter:
    """Restricts a search to some nodes. ``None`` means "no restriction".

    Attributes:
        kinds: Only these node kinds.
        visible: Only nodes whose visibility equals this.
        time_range: ``(start, end)``; nodes whose time span overlaps it are
            kept, and nodes with no time are kept too (as REALM's time filter, §3.3.1).
        ids: Only these node ids.
    """

    kinds: frozenset[str] | None = attrs.field(default=None, converter=_optional_names)
    visible: bool | None = None
    time_range: tuple[datetime, datetime] | None = None
    ids: frozenset[str] | None = attrs.field(default=None, converter=_optional_names)

    def accepts(self, node: Node) -> bool:
        """Whether ``node`` passes this filter (the reference semantics)."""
        if self.kinds is not None and node.kind not in self.kinds:
            return False
        if self.visible is not None and node.visible != self.visible:
            return False
        if self.ids is not None and node.id not in self.ids:
            return False
        if self.time_range is not None and node.time_start is not None:
            lo, hi = self.time_range
            end = node.time_end or node.time_start
            if end < lo or node.time_start > hi:
                return False
        return True


@attrs.frozen(kw_only=True)
class Query:
    """A retrieval request as the atoms see it.

    ``vector`` is the query's embedding, computed once by the memory so every
    atom can reuse it; ``as_of`` is the time the question is asked (defaults to
    now), used to resolve relative time expressions.
    """

    text: str
    namespace: str
    k: int = 10
    as_of: datetime = attrs.field(factory=utcnow, validator=_aware)
    vector: Vector | None = attrs.field(default=None, repr=False, eq=False)


@attrs.frozen(kw_only=True)
class Reach:
    """How a hit was reached: by a seeder, or by expansion over edges."""

    atom: str
    stage: str = "seed"  # "seed" | "expand" | "filter"
    hop: int = 0
    path: tuple[str, ...] = ()
    edges: tuple[str, ...] = ()
    plan: str = ""


@attrs.define(kw_only=True)
class Hit:
    """One retrieved node with its score and how it was reached.

    ``is_current`` and ``superseded_by`` read the node's validity as the search
    saw it: a search ``as_of`` a past time returns nodes without the
    supersessions that came later.
    """

    node: Node
    score: float
    via: Reach
    scores: dict[str, float] = attrs.field(factory=dict)

    @property
    def is_current(self) -> bool:
        """Whether the hit's node still holds (no ``valid_to``)."""
        return self.node.is_current()

    @property
    def superseded_by(self) -> tuple[str, ...]:
        """Ids of the nodes that replaced the hit's node (empty while current)."""
        return self.node.superseded_by


def superseded(node: Node, by: str, at: datetime) -> Node:
    """A copy of ``node`` marked as replaced by node ``by`` from ``at`` on.

    The contract every bundle writes (docs/change.md): ``attrs["valid_to"]`` is
    the ISO time the node stopped being true (the earliest, if it is replaced
    twice) and ``attrs["superseded_by"]`` lists the replacing node ids. The
    node's content, time and visibility are untouched: it stays as history.

    Raises:
        ValueError: ``at`` is naive, or ``by`` is the node itself or empty.
    """
    if at.tzinfo is None:
        raise ValueError("superseded: 'at' must be timezone-aware")
    if not by or by == node.id:
        raise ValueError(f"superseded: a node cannot be replaced by {by!r}")
    end = node.valid_to
    end = at if end is None or at < end else end
    by_ids = [*node.superseded_by]
    if by not in by_ids:
        by_ids.append(by)
    return attrs.evolve(node, attrs={**node.attrs, VALID_TO: end.isoformat(),
                                     SUPERSEDED_BY: by_ids})


def as_known_at(node: Node, as_of: datetime) -> Node:
    """``node`` as it was known at ``as_of``: a replacement after then is not applied."""
    end = node.valid_to
    if end is None or end <= as_of:
        return node
    return attrs.evolve(node, attrs={k: v for k, v in node.attrs.items()
                                     if k not in (VALID_TO, SUPERSEDED_BY)})


@attrs.frozen(kw_only=True)
class TraceStep:
    """One atom's run during retrieval: its name, parameters and cost."""

    atom: str
    stage: str
    ms: float
    params: dict[str, Any] = attrs.field(factory=dict)
    n_in: int = 0
    n_out: int = 0
    llm_calls: int = 0
    llm_tokens: int = 0
    note: str = ""


@attrs.frozen(kw_only=True)
class Subgraph:
    """The activated subgraph: the retrieved nodes and the edges among them."""

    node_ids: tuple[str, ...] = ()
    edges: tuple[Edge, ...] = ()


@attrs.frozen(kw_only=True)
class RetrievalResult:
    """What ``Memory.search`` returns.

    ``hits`` are ranked best first. ``state`` carries atom-private data (the
    plan an LLM planner chose, for instance) that the reconsolidators of the
    same bundle may read. The bundles present it: to a model as dated evidence
    within a token budget (:meth:`context`, rendered by a plugin), to a program
    in the ``labile.hit/1`` schema (`labile_io.hits.result_to_dict`).
    ``renderer`` is the plugins' ``labile_render_context`` hook, set by
    ``Memory.search``.
    """

    query: Query
    hits: tuple[Hit, ...]
    subgraph: Subgraph
    trace: tuple[TraceStep, ...]
    embed_ms: float = 0.0
    total_ms: float = 0.0
    state: dict[str, Any] = attrs.field(factory=dict, eq=False)
    renderer: Callable[..., Any] | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def node_ids(self) -> list[str]:
        """Ids of the hits, best first."""
        return [h.node.id for h in self.hits]

    def context(self, **options: Any) -> Any:
        """The hits as dated, numbered evidence for a prompt, within a token budget.

        Rendered by the plugin that implements ``labile_render_context``: the
        shipped one (`labile_llm.context.render_context`) takes ``budget_tokens``
        (default 2000), ``style`` (``"lines"``, ``"markdown"`` or ``"json"``) and
        ``count_tokens``, and returns a ``PromptContext`` (``.text``, ``.ids``,
        ``.tokens``). See docs/adapters/context.md.

        Raises:
            InputError: a bad option (the renderer names what is allowed), or no
                plugin renders context (the ``labile_llm`` bundle is disabled).
        """
        rendered = (self.renderer(hits=self.hits, options=options)
                    if self.renderer is not None else None)
        if rendered is None:
            raise InputError("no plugin renders prompt context: the labile_llm bundle "
                             "does; is it disabled (LABILE_DISABLE_PLUGINS)?")
        return rendered


@attrs.frozen(kw_only=True)
class Feedback:
    """What the caller learnt after using a retrieval result.

    ``answer`` is the system's own answer (never a gold label at evaluation
    time); ``cited`` are node ids the answer relied on, when known.
    """

    answer: str | None = None
    cited: tuple[str, ...] = attrs.field(default=(), converter=_tuple_of_str)
    useful: bool | None = None


@attrs.define(kw_only=True)
class AddReport:
    """The outcome of one ``Memory.add`` batch (or of a ``Memory.repair``).

    ``pending`` lists observations stored without their memory: an extractor
    puts there those it could not build because the model did not answer, and
    the memory then keeps the whole batch pending until ``Memory.repair``.
    """

    namespace: str
    added: list[str] = attrs.field(factory=list)
    skipped_existing: list[str] = attrs.field(factory=list)
    nodes_written: int = 0
    edges_written: int = 0
    ms: float = 0.0
    details: dict[str, Any] = attrs.field(factory=dict)
    pending: list[str] = attrs.field(factory=list)


@attrs.define(kw_only=True)
class OperationReport:
    """The outcome of a reconsolidation or consolidation run.

    ``counts`` maps outcome names (``"executed"``, ``"skipped"``,
    ``"strengthened"``…) to how many times they happened; ``log`` holds one
    entry per decision with its reason.
    """

    operator: str
    namespace: str
    counts: dict[str, int] = attrs.field(factory=dict)
    log: list[dict[str, Any]] = attrs.field(factory=list)
    ms: float = 0.0

    def bump(self, key: str, n: int = 1) -> None:
        """Add ``n`` to the count of ``key``."""
        self.counts[key] = self.counts.get(key, 0) + n


@attrs.frozen(kw_only=True)
class Answer:
    """What ``Memory.answer`` returns: an answer with its evidence and its cost.

    Attributes:
        text: The answer.
        cited: Node ids the answer cites (context order, no duplicates).
        result: The retrieval result the answer was built from.
        usage: LLM usage of this answer by operation (retrieval, answer and
            feedback calls), in `UsageMeter.snapshot` shape, ``"total"`` included.
        context: The evidence text shown to the model.
        context_ids: Node ids of the context lines; line ``[i]`` is
            ``context_ids[i - 1]``.
        feedback: Reports of the reconsolidators that ran (empty if none).
        prompt_version: The version of the answerer's prompt, if it has one.
    """

    text: str
    cited: tuple[str, ...]
    result: RetrievalResult
    usage: dict[str, dict[str, Any]]
    context: str = ""
    context_ids: tuple[str, ...] = ()
    feedback: tuple[OperationReport, ...] = ()
    prompt_version: str = ""
