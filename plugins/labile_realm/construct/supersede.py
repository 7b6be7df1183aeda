"""Supersession of turns: a later statement of a one-at-a-time value replaces the earlier.

Construction calls `supersede_turn` once per turn, after the turn's nodes are
placed. It reads the turn's slot statements (`labile_realm.construct.change`),
compares each with the statements of the same slot still current in the
namespace (`SlotIndex`, kept in the conversation state and rebuilt from the
event nodes' ``attrs["slots"]``), and for each older statement the new one
replaces:

* writes ``new event -[supersedes]-> old event``;
* marks the old statement's *carriers* (its turn event and the facts and
  clause events of that turn that say the same thing) with the validity
  contract, ``valid_to`` = when the new statement was said and
  ``superseded_by`` = the new event (`labile.plugin.superseded`);
* ends the old statement in the index, so it is compared no more.

Most changes are not said as a slot statement ("we outgrew the coworking
space, we signed a lease on our own office", "nope, down to one cup"). When
the slot rules replace nothing, `implied_supersession` reads a turn that
reports a change (`labile_realm.construct.change.reports_change`) as
replacing the one earlier statement of the same speaker it is closest to in
meaning, if that one is close enough: the change is about what was said
there.

Nothing is deleted or hidden: a superseded node stays findable as history.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Final

import attrs

from labile.plugin import Node, superseded
from labile.text.tokenize import content_words, stem
from labile_realm.construct.change import SlotStatement, read_slots, replaces, reports_change
from labile_realm.construct.ops import EdgeOp
from labile_realm.retrieve.topic import statement_topics
from labile_realm.schema import EVENT, FACT, SUPERSEDES, is_agent
from labile_text.sentences import split_sentences

__all__ = ["SLOTS_ATTR", "SlotEntry", "SlotIndex", "TurnChange",
           "checked_supersessions", "implied_supersession", "supersede_turn"]

#: Event attr listing the turn's slot statements (with carriers and whether each ended).
SLOTS_ATTR: Final = "slots"

SlotKey = tuple[str, str, str]


@attrs.define(kw_only=True)
class SlotEntry:
    """A statement still current in its slot, and where it lives in the graph."""

    event_id: str
    statement: SlotStatement
    carriers: tuple[str, ...]
    said_at: datetime


@attrs.define
class SlotIndex:
    """The current statements of each slot, by (subject, class, key)."""

    current: dict[SlotKey, list[SlotEntry]] = attrs.field(factory=dict)

    def add(self, entry: SlotEntry) -> None:
        """Record ``entry`` as current in its slot."""
        st = entry.statement
        self.current.setdefault((st.subject, st.cls, st.key), []).append(entry)

    def end(self, entry: SlotEntry) -> None:
        """``entry`` was replaced: it is current no more."""
        st = entry.statement
        entries = self.current.get((st.subject, st.cls, st.key), [])
        if entry in entries:
            entries.remove(entry)

    def of(self, statement: SlotStatement) -> list[SlotEntry]:
        """The current entries of ``statement``'s slot, oldest first."""
        return list(self.current.get((statement.subject, statement.cls, statement.key), ()))

    def load(self, event: Node) -> None:
        """Index the statements a stored event carries that have not ended."""
        raw = event.attrs.get(SLOTS_ATTR)
        said = event.learned_at
        for item in raw if isinstance(raw, list) else ():
            st = SlotStatement.from_attr(item)
            if st is None or item.get("ended"):
                continue
            carriers = item.get("carriers")
            ids = tuple(str(c) for c in carriers) if isinstance(carriers, list) else (event.id,)
            self.add(SlotEntry(event_id=event.id, statement=st, carriers=ids, said_at=said))


@attrs.frozen
class TurnChange:
    """What one turn changed: nodes to (re)write and edges to add."""

    nodes: tuple[Node, ...] = ()
    edges: tuple[EdgeOp, ...] = ()


def _stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}


def _carriers(event: Node, turn_nodes: Sequence[Node], st: SlotStatement) -> tuple[str, ...]:
    """The event and the facts / clause events of its turn that share a value stem."""
    ids = [event.id]
    for node in turn_nodes:
        if node.id == event.id or node.kind not in (EVENT, FACT):
            continue
        if st.value & _stems(node.content or ""):
            ids.append(node.id)
    return tuple(ids)


def supersede_turn(
    event: Node,
    turn_nodes: Sequence[Node],
    index: SlotIndex,
    *,
    speakers: Sequence[str],
    load: Callable[[Sequence[str]], list[Node]],
    similarity: Callable[[Node], float],
) -> TurnChange:
    """Read ``event``'s slot statements and supersede what they replace (module docstring).

    Args:
        event: The turn's event node (already placed).
        turn_nodes: Every node placed from the turn (facts, clause events).
        index: The namespace's slot index (updated in place).
        speakers: Names of the conversation's speakers (left out of values).
        load: Fetches nodes by id (pending in the batch or stored).
        similarity: Cosine of ``event`` and another node.

    Returns:
        The changed nodes (the new event with its ``slots``, the old carriers
        marked superseded) and the ``supersedes`` edges.
    """
    if event.attrs.get("act") == "question" or event.attrs.get("clause_of"):
        return TurnChange()
    text = event.content or ""
    sentences = [text[a:b] for a, b in split_sentences(text)]
    statements = read_slots(sentences, event.attrs.get("speaker"), speakers)
    if not statements:
        return TurnChange()
    said = event.learned_at
    replaced: list[tuple[SlotEntry, SlotStatement]] = []
    slots: list[dict[str, Any]] = []
    for st in statements:
        carriers = _carriers(event, turn_nodes, st)
        for old in index.of(st):
            if old.event_id == event.id or old.said_at >= said:
                continue
            olds = load([old.event_id])
            sim = similarity(olds[0]) if olds else 0.0
            if replaces(st, old.statement, sim):
                replaced.append((old, st))
                index.end(old)
        index.add(SlotEntry(event_id=event.id, statement=st, carriers=carriers, said_at=said))
        slots.append({**st.to_attr(), "carriers": list(carriers)})
    new_event = attrs.evolve(event, attrs={**event.attrs, SLOTS_ATTR: slots})
    changed: dict[str, Node] = {event.id: new_event}
    edges: list[EdgeOp] = []
    for old, st in replaced:
        for node in load(old.carriers):
            base = changed.get(node.id, node)
            marked = superseded(base, event.id, said)
            if node.id == old.event_id:
                marked = _end_slot(marked, old.statement)
            changed[node.id] = marked
        edges.append(EdgeOp(
            action="add", src=event.id, dst=old.event_id, predicate=SUPERSEDES, weight=0.9,
            description=f"{st.subject}'s {_what(st)} changed: now {_quote(st.sentence)}; "
                        f"before: {_quote(_sentence_of(load([old.event_id])))}",
        ))
    return TurnChange(nodes=tuple(changed.values()), edges=tuple(edges))


#: How many licit candidates ``own_words`` re-scores (`implied_supersession`).
_OWN_WORDS_CANDIDATES: Final = 5


def _statement_event(node: Node) -> bool:
    """A turn's own event that states something (not a clause, not a question)."""
    return node.kind == EVENT and not node.attrs.get("clause_of") \
        and node.attrs.get("act") != "question"


def implied_supersession(
    event: Node,
    nearest: Callable[[Node], Sequence[tuple[Node, float]]],
    *,
    min_similarity: float = 0.4,
    own_words: Callable[[Node, Sequence[Node]], Sequence[float]] | None = None,
) -> TurnChange:
    """A change told in passing: ``event`` replaces the earlier statement it is about.

    Contract: ``event`` must be a statement (not a question, not a clause)
    with a speaker, not the agent itself (`labile_realm.schema.is_agent`), that
    reports a change (`reports_change`); among
    ``nearest(event)`` (nodes with their cosine to it), the most similar
    earlier, still current statement event of the *same speaker* is replaced
    when its cosine is at least ``min_similarity``. One node at most: the
    closest is the statement the change is about, and a turn that reports a
    change seldom ends two things. Nothing is replaced otherwise.

    ``own_words`` (the event and the licit candidates -> their cosines) replaces
    the similarities ``nearest`` gave, for the five licit candidates it ranked
    closest. The extractor passes the cosine of the
    two turns' own words: an event's stored vector embeds its description
    ("On 6 September 2025, Hannah said to Zoe: …", with the question it
    replies to), which makes any two short turns of one speaker look alike
    (cosine 0.7–0.85), so on it the floor selects nothing.

    Returns:
        The replaced node marked (`labile.plugin.superseded`) and the
        ``supersedes`` edge, or an empty change.
    """
    speaker = event.attrs.get("speaker")
    # the agent's own turns report no change in anyone's life ("let's swap the night-walk
    # cigarette for something else" is advice)
    if not speaker or is_agent(speaker) or not _statement_event(event) \
            or not reports_change(event.content or ""):
        return TurnChange()
    said = event.learned_at
    licit = [(node, sim) for node, sim in nearest(event)
             if node.id != event.id and node.attrs.get("speaker") == speaker
             and _statement_event(node) and node.learned_at < said and node.is_current()]
    session = event.attrs.get("session")
    reading = event
    context = _told_before(event, [n for n, _ in licit]) if session is not None else None
    if context is not None:
        # "we're pushing it to April": what changed was named in the speaker's turn before
        # ("bad news on the Japan trip"); the change is read with it, and is not about it
        licit = [(node, sim) for node, sim in licit if node.id != context.id]
        reading = attrs.evolve(event, content=f"{context.content} {event.content}")
    # a change about one kind of value (a choir "instead" of a band) does not end a
    # statement about another (the new flat); a text of no known kind can be about anything
    kinds = statement_topics(reading.content or "")
    if kinds:
        licit = [(node, sim) for node, sim in licit
                 if not (other := statement_topics(node.content or "")) or other & kinds]
    if session is not None:
        licit = [(node, sim) for node, sim in licit if node.attrs.get("session") != session
                 or not reports_change(node.content or "")]
    if own_words is not None and licit:
        # the statement a change is about is among the few closest in the stored vectors
        # too; each candidate re-scored costs an embedding (5 vs all: same edges on the
        # change benchmark, 0.28 against 0.39 texts embedded a turn on LoCoMo)
        licit = sorted(licit, key=lambda pair: -pair[1])[:_OWN_WORDS_CANDIDATES]
        licit = list(zip([n for n, _ in licit], own_words(reading, [n for n, _ in licit]),
                         strict=True))
    best: tuple[Node, float] | None = None
    for node, sim in licit:
        if best is None or sim > best[1]:
            best = (node, sim)
    if best is None or best[1] < min_similarity:
        return TurnChange()
    old = best[0]
    return TurnChange(
        nodes=(superseded(old, event.id, said),),
        edges=(EdgeOp(action="add", src=event.id, dst=old.id, predicate=SUPERSEDES, weight=0.6,
                      description=f"{speaker} reported a change: now {_quote(event.content or '')}"
                                  f"; before: {_quote(old.content or '')}"),),
    )


#: A change told of something named before: "pushing it to April", "we cancelled it",
#: "called it off" ("I like it", "not pushing it" refer to no plan).
_REFERS_BACK: Final = re.compile(
    r"\b(?:push|pushed|pushing|move|moved|moving|bump|bumped|bumping)\s+(?:it|them)\s+"
    r"(?:to|back|forward|up|till|until)\b|"
    r"\b(?:cancel\w*|postpon\w*|delay\w*|resched\w*|sold|selling|dropp\w*)\s+(?:it|them)\b|"
    r"\b(?:call\w*|put\w*)\s+(?:it|them)\s+off\b",
    re.IGNORECASE)


def _told_before(event: Node, earlier: Sequence[Node]) -> Node | None:
    """The speaker's turn just before ``event`` in its session (among ``earlier``, the
    speaker's earlier statements), when ``event`` refers back to something ("pushing it
    to April"); None otherwise."""
    if not _REFERS_BACK.search(event.content or ""):
        return None
    session = event.attrs.get("session")
    same = [n for n in earlier if n.attrs.get("session") == session]
    return max(same, key=lambda n: n.learned_at) if same else None


def checked_supersessions(
    node: Node, ops: Sequence[EdgeOp], load: Callable[[Sequence[str]], list[Node]],
) -> tuple[list[EdgeOp], list[Node]]:
    """The validity contract for the ``supersedes`` edges a rule or the model wrote at ``node``.

    Contract: each such edge marks the node it replaces (`labile.plugin.superseded`,
    at the replacing node's `learned_at`); an edge whose replaced end was not
    learned before the replacing end (the model got the direction or the time
    wrong), or whose ends are unknown, is dropped (fail-closed). Other edges
    pass unchanged.

    Returns:
        The edges to write, and the replaced nodes with the contract on them.
    """
    mine = [op for op in ops if op.action == "add" and op.predicate == SUPERSEDES
            and node.id in (op.src, op.dst)]
    if not mine:
        return list(ops), []
    known = {n.id: n for n in load(sorted({i for op in mine for i in (op.src, op.dst)}))}
    known[node.id] = node
    wrong: set[int] = set()
    marked: dict[str, Node] = {}
    for op in mine:
        new, old = known.get(op.src), known.get(op.dst)
        if new is None or old is None or not old.learned_at < new.learned_at:
            wrong.add(id(op))
            continue
        marked[old.id] = superseded(marked.get(old.id, old), new.id, new.learned_at)
    return [op for op in ops if id(op) not in wrong], list(marked.values())


def _end_slot(event: Node, statement: SlotStatement) -> Node:
    raw = event.attrs.get(SLOTS_ATTR)
    if not isinstance(raw, list):
        return event
    def same(item: object) -> bool:
        st = SlotStatement.from_attr(item)
        return st is not None and (st.cls, st.key, st.value) == (
            statement.cls, statement.key, statement.value)

    slots = [{**item, "ended": True} if isinstance(item, dict) and same(item) else item
             for item in raw]
    return attrs.evolve(event, attrs={**event.attrs, SLOTS_ATTR: slots})


_WHAT: Final = {"home": "home", "work": "work", "role": "role", "diet": "diet",
                "relationship": "relationship status", "amount": "amount", "pet": "pets",
                "plan": "plan"}


def _what(st: SlotStatement) -> str:
    what = _WHAT.get(st.cls, st.cls)
    return f"{what} ({st.key})" if st.key else what


def _sentence_of(nodes: Sequence[Node]) -> str:
    return nodes[0].content if nodes else ""


def _quote(text: str, words: int = 14) -> str:
    return " ".join(text.split()[:words])
