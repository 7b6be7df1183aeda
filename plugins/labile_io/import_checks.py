"""What `labile_io.transfer.import_records` checks before it writes anything.

An import writes records verbatim, under the memory's components, so it must
hold them to what the store promises everywhere else: every node source names
an observation of the import, every edge joins two of its nodes, node kinds and
predicates are registered, vectors are finite, non-zero and of the embedder's
size (a zero or infinite vector turns later similarity scores into NaN), a
node's time span does not end before it starts, ids are unique and free of the
reserved ``\\x1f``. `ImportCheck` reads every record, collects every problem with
its line and field, and `ImportCheck.raise_if_any` reports them all in one
`InputError`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from datetime import datetime
from typing import Any, Final, TypeVar

import attrs
import numpy as np

from labile.plugin import Edge, InputError, Node, Observation

__all__ = ["MAX_LISTED", "ImportCheck"]

#: Problems listed in the error; the rest are counted.
MAX_LISTED: Final = 50

_TIMES: Final = ("timestamp", "time_start", "time_end", "created_at", "updated_at")
_RESERVED: Final = "\x1f"

R = TypeVar("R")


@attrs.define
class ImportCheck:
    """Builds the records of one import and notes every problem, by line.

    Attributes:
        dim: The embedder's vector size.
        node_kinds: The registered node kinds.
        predicates: The registered edge predicates.
    """

    dim: int
    node_kinds: Collection[str]
    predicates: Collection[str]
    problems: list[str] = attrs.field(factory=list)
    _obs_lines: dict[str, int] = attrs.field(factory=dict)
    _node_lines: dict[str, int] = attrs.field(factory=dict)
    _edge_lines: dict[str, int] = attrs.field(factory=dict)
    _sources: list[tuple[int, str, tuple[str, ...]]] = attrs.field(factory=list)
    _ends: list[tuple[int, str, str, str]] = attrs.field(factory=list)

    def note(self, line: int, problem: str) -> None:
        """Record one problem found on ``line``."""
        self.problems.append(f"line {line}: {problem}")

    def record(self, line: int, row: object) -> Observation | Node | Edge | None:
        """The record on ``line`` (an exported dict), or ``None`` with its problems noted."""
        if not isinstance(row, Mapping):
            self.note(line, f"expected a JSON object, got {type(row).__name__}")
            return None
        kind = row.get("type")
        fields = {k: v for k, v in row.items() if k != "type"}
        if kind == "observation":
            return self._observation(line, fields)
        if kind == "node":
            return self._node(line, fields)
        if kind == "edge":
            return self._edge(line, fields)
        self.note(line, f"type: must be observation, node or edge, got {kind!r}")
        return None

    def finish(self) -> None:
        """The checks across records: sources name observations, edges join nodes."""
        for line, node_id, sources in self._sources:
            for source in sources:
                if source not in self._obs_lines:
                    self.note(line, f"node {node_id!r}.sources: {source!r} names no "
                                    "observation of the import")
        for line, edge_id, src, dst in self._ends:
            for name, end in (("src", src), ("dst", dst)):
                if end not in self._node_lines:
                    self.note(line, f"edge {edge_id!r}.{name}: {end!r} names no node of "
                                    "the import")

    def raise_if_any(self) -> None:
        """Raise one `InputError` listing the problems (the first `MAX_LISTED`)."""
        if not self.problems:
            return
        listed = self.problems[:MAX_LISTED]
        more = len(self.problems) - len(listed)
        tail = f"\n  ... and {more} more" if more else ""
        raise InputError(f"the export has {len(self.problems)} problem(s); nothing was "
                         "written:\n  " + "\n  ".join(listed) + tail)

    # -- one record each ---------------------------------------------------------------

    def _observation(self, line: int, fields: dict[str, Any]) -> Observation | None:
        obs = self._build(line, "observation", Observation, fields)
        if obs is None:
            return None
        for name in ("speaker", "session"):
            value = getattr(obs, name)
            if value is not None and not isinstance(value, str):
                self.note(line, f"observation {obs.id!r}.{name}: must be a string or null, "
                                f"got {value!r}")
        self._unique(line, "observation", obs.id, self._obs_lines)
        return obs

    def _node(self, line: int, fields: dict[str, Any]) -> Node | None:
        emb = fields.pop("embedding", None)
        node = self._build(line, "node", Node, fields)
        if node is None:
            return None
        where = f"node {node.id!r}"
        self._name(line, where, "id", node.id)
        self._unique(line, "node", node.id, self._node_lines)
        if node.kind not in self.node_kinds:
            self.note(line, f"{where}.kind: {node.kind!r} is not a registered node kind "
                            f"(registered: {', '.join(sorted(self.node_kinds))})")
        for name in ("content", "description"):
            if not isinstance(getattr(node, name), str):
                self.note(line, f"{where}.{name}: must be a string")
        for name in ("keywords", "sources"):
            if not all(isinstance(v, str) for v in getattr(node, name)):
                self.note(line, f"{where}.{name}: must be a list of strings")
        if node.time_start and node.time_end and node.time_end < node.time_start:
            self.note(line, f"{where}.time_end: {node.time_end.isoformat()} is before "
                            f"time_start {node.time_start.isoformat()}")
        self._sources.append((line, node.id, node.sources))
        if emb is not None:
            node.embedding = self._vector(line, where, emb)
        return node

    def _edge(self, line: int, fields: dict[str, Any]) -> Edge | None:
        edge = self._build(line, "edge", Edge, fields)
        if edge is None:
            return None
        where = f"edge {edge.id!r}"
        self._name(line, where, "id", edge.id)
        self._unique(line, "edge", edge.id, self._edge_lines)
        if edge.predicate not in self.predicates:
            self.note(line, f"{where}.predicate: {edge.predicate!r} is not a registered "
                            f"predicate (registered: {', '.join(sorted(self.predicates))})")
        if not isinstance(edge.description, str):
            self.note(line, f"{where}.description: must be a string")
        self._ends.append((line, edge.id, edge.src, edge.dst))
        return edge

    # -- helpers -----------------------------------------------------------------------

    def _build(self, line: int, kind: str, cls: Callable[..., R],
               fields: dict[str, Any]) -> R | None:
        """``cls(**fields)`` with ISO times parsed, or ``None`` with the problem noted."""
        label = f"{kind} {fields.get('id')!r}" if isinstance(fields.get("id"), str) else kind
        for key in _TIMES:
            value = fields.get(key)
            if value is None:
                continue
            try:
                fields[key] = datetime.fromisoformat(value)
            except (TypeError, ValueError):
                self.note(line, f"{label}.{key}: not an ISO 8601 time: {value!r}")
                return None
        try:
            return cls(**fields)
        except (TypeError, ValueError) as exc:  # InputError is a ValueError
            self.note(line, f"{label}: {exc}")
            return None

    def _name(self, line: int, where: str, field: str, value: str) -> None:
        if _RESERVED in value:
            self.note(line, f"{where}.{field}: holds the reserved separator '\\x1f'")

    def _unique(self, line: int, kind: str, record_id: str, seen: dict[str, int]) -> None:
        if record_id in seen:
            self.note(line, f"{kind} {record_id!r}: the id is already used on line "
                            f"{seen[record_id]}")
        else:
            seen[record_id] = line

    def _vector(self, line: int, where: str, value: object) -> np.ndarray[Any, Any] | None:
        """``value`` as a float32 vector, or ``None`` with the problem noted."""
        if not isinstance(value, list) or not all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in value):
            self.note(line, f"{where}.embedding: must be a list of numbers or null")
            return None
        if len(value) != self.dim:
            self.note(line, f"{where}.embedding: has {len(value)} numbers; this memory's "
                            f"embedder makes vectors of {self.dim}")
            return None
        with np.errstate(over="ignore"):  # a finite float64 beyond float32 becomes inf
            vector = np.asarray(value, dtype=np.float32)
        if not np.isfinite(vector).all():
            self.note(line, f"{where}.embedding: holds a value that is not a finite "
                            "float32 (inf, nan or too large)")
            return None
        if not np.any(vector):
            self.note(line, f"{where}.embedding: is all zeros (it has no direction, so "
                            "every similarity with it would be NaN)")
            return None
        return vector
